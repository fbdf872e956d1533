"""The keys a league needs to check signed match logs: each board's signing key, by device id.

A board signs the chain head of each game with HMAC-SHA256 under a key of its own
(docs/match-log.md). `chalk deploy` (and `chalk sim`) make the key, write it onto the board's
flash and keep it here; no command reads it back from a board. A league imports the keys of the
pubs' boards (`chalk keys import`) to check the logs they mail in (`chalk verify FILE`).

The store is one JSON file (mode 0600): $CHALK_KEYS, `--keys FILE`, else keys.json in the user's
data directory:

    {"chalk_keys": 1, "keys": [{"device": "esp32-...", "kid": "<16 hex>", "key": "<64 hex>",
                                "added": "<ISO 8601>"}, ...]}

`kid` is the key's public name (scoreboard.sign.key_id): a signature names the key it was made
with, so a board deployed again (a new key) keeps its old games checkable with the old one.
"""

import json
import os
import secrets
from datetime import datetime, timezone
from pathlib import Path

from chalk import chainhost
from chalk.errors import ChalkError
from scoreboard import sign

ENV_KEYS = "CHALK_KEYS"
VERSION = 1


def default_path():
    env = os.environ.get(ENV_KEYS)
    if env:
        return Path(env)
    from platformdirs import user_data_dir

    return Path(user_data_dir("chalk")) / "keys.json"


def add_keys(parser):
    """The --keys option."""
    parser.add_argument("--keys", default=None, metavar="FILE",
                        help="the key store (default $%s, else keys.json in the user's data "
                        "directory)" % ENV_KEYS)


def new_key():
    """A fresh board key: 32 random bytes."""
    return secrets.token_bytes(32)


def _entry_ok(e):
    return (isinstance(e, dict) and chainhost.unhex(e.get("key")) is not None
            and (e.get("device") is None or isinstance(e.get("device"), str)))


class KeyStore:
    def __init__(self, path=None):
        self.path = Path(path) if path else default_path()
        self.entries = []
        if self.path.exists():
            self.entries = _read(self.path)

    def find(self, kid):
        """The entry of the key named `kid`, or None."""
        for e in self.entries:
            if sign.key_id(bytes.fromhex(e["key"])) == kid:
                return e
        return None

    def key(self, kid):
        e = self.find(kid)
        return bytes.fromhex(e["key"]) if e else None

    def for_device(self, device):
        return [e for e in self.entries if e.get("device") == device]

    def add(self, key, device=None):
        """Keep `key` (bytes) for `device`; a key already kept gets its device filled in.
        Returns True if the store changed."""
        kid = sign.key_id(key)
        e = self.find(kid)
        if e is not None:
            if device and e.get("device") != device:
                if e.get("device") not in (None, device):
                    raise ChalkError("key %s is kept for board %s, not %s" % (
                        kid, e["device"], device), "check which board this key belongs to")
                e["device"] = device
                return True
            return False
        self.entries.append({"device": device, "kid": kid, "key": key.hex(),
                             "added": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")})
        return True

    def save(self):
        """Write the store whole, readable by its owner only (written aside, then renamed)."""
        data = json.dumps({"chalk_keys": VERSION, "keys": self.entries}, indent=1) + "\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(self.path.name + ".part")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(data)
            tmp.replace(self.path)
        except OSError as e:
            raise ChalkError("cannot write the key store %s: %s" % (self.path, e.strerror or e),
                             "give a writable file with --keys or $%s" % ENV_KEYS)


def _read(path):
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ChalkError("cannot read the key store %s: %s" % (path, getattr(e, "strerror", e)
                                                                or e), code=2)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = None
    if (not isinstance(data, dict) or data.get("chalk_keys") != VERSION
            or not isinstance(data.get("keys"), list)
            or not all(_entry_ok(e) for e in data["keys"])):
        raise ChalkError("%s is not a Chalk key file (want {\"chalk_keys\": 1, \"keys\": "
                         "[{\"device\", \"key\"}...]})" % path,
                         "export keys with `chalk keys export`", code=2)
    return [{"device": e.get("device"), "kid": sign.key_id(bytes.fromhex(e["key"])),
             "key": e["key"], "added": e.get("added")} for e in data["keys"]]


def read_file(path):
    """The entries of a key file (a store, or what `chalk keys export` wrote)."""
    return _read(path)


def write_sim_key(flash, store_path=None, device=None):
    """Give a simulated board its key (flash/board.key) if it has none, and keep the key in the
    store. Returns the key."""
    flash = Path(flash)
    path = flash / "board.key"
    key = None
    if path.exists():
        key = chainhost.unhex(path.read_text().strip())
    if key is None:
        key = new_key()
        flash.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(key.hex() + "\n")
    if device is None:
        # The board's identity lives on its flash (hal/sim.py makes it at the first boot
        # otherwise): made here, so the key is kept under it from the start.
        dev = flash / "device_id"
        if not dev.exists():
            dev.write_text("sim-" + secrets.token_hex(6) + "\n")
        device = dev.read_text().strip()
    store = KeyStore(store_path or None)
    if store.add(key, device):
        store.save()
    return key
