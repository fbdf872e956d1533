"""The key store: the keys `chalk verify` checks the boards' signatures with (docs/league.md).

Three kinds of entry:

- **board** keys: a board's own ECDSA P-256 public key (it made the key pair at its first boot
  and never gives out the private half). One enters a store only with proof that it came from
  that board: read from the board itself over USB, the board signing a fresh challenge
  (`chalk keys enrol`), or from a key file signed by a league key this store trusts (`chalk
  keys import`). A device keeps one key; another key for it is refused unless `--replace`
  names the old one.
- **legacy** keys: the HMAC keys `chalk deploy` made on the host for firmware before board
  keys. Whoever deployed the board holds one, so what it signs verifies as "legacy (the pub
  holds this key)", never as a board key does.
- **league** keys: a league's own P-256 key. The league's store holds its private half (`chalk
  keys league NAME`) and signs the key files it exports; other stores trust its public half
  once told so with its key id (`chalk keys trust FILE KID`), and then take board keys from
  files it signed.

The store is one JSON file (mode 0600): $CHALK_KEYS, `--keys FILE`, else keys.json in the
user's data directory:

    {"chalk_keys": 2, "keys": [{"kind": "board", "device": "esp32-...", "kid": "<16 hex>",
      "pub": "<128 hex>", "since": N, "added": "<ISO 8601>", "how": "enrolled over USB ..."},
     {"kind": "legacy", "device": ..., "kid": ..., "key": "<64 hex>", ...},
     {"kind": "league", "name": ..., "kid": ..., "pub": ..., "priv"?: "<64 hex>", ...}]}

A v1 store (every entry an HMAC key) still reads: its keys are legacy keys. A key file from
`chalk keys export` has the same form, without private halves, and "signed": {"kid", "pub",
"name", "sig"} when the store that wrote it holds a league key.
"""

import json
import os
import secrets
import time
from datetime import datetime, timezone
from pathlib import Path

from chalk import chainhost
from chalk.errors import ChalkError
from scoreboard import chain

ENV_KEYS = "CHALK_KEYS"
VERSION = 2
KEYS_TAG = b"chalk-keys-1 "  # what a league key signs: this, then the canonical key list
ENROL_WAIT = 60.0  # seconds a board may take to make its key and sign the challenge
_EXPORTED = {"board": ("kind", "device", "kid", "pub", "since"),
             "legacy": ("kind", "device", "kid", "key"),
             "league": ("kind", "name", "kid", "pub")}


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


def now_iso():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _device_ok(d):
    return type(d) is str and 0 < len(d) <= 64 and d.isprintable() and " " not in d


def _entry(e, where):
    """A store or file entry, checked and normalised; ChalkError (exit 2) naming it if bad."""
    def bad(why):
        return ChalkError("%s: key entry %s: %s" % (where, chainhost.describe(
            e.get("kid") if isinstance(e, dict) else e, 24), why),
            "a key file comes from `chalk keys export`; do not edit it", code=2)

    if not isinstance(e, dict):
        raise bad("not a JSON object")
    kind = e.get("kind") or ("legacy" if "key" in e else None)
    out = {"kind": kind}
    if kind == "legacy":
        key = chainhost.unhex(e.get("key"))
        if key is None:
            raise bad("a legacy key must be 64 lowercase hex digits")
        if e.get("device") is not None and not _device_ok(e.get("device")):
            raise bad("not a device id: %s" % chainhost.describe(e.get("device")))
        out.update(device=e.get("device"), kid=chainhost.legacy_key_id(key), key=e["key"])
    elif kind in ("board", "league"):
        if chainhost.public_key(e.get("pub")) is None:
            raise bad("its public key is not a point of P-256 (128 hex digits)")
        out["kid"] = chainhost.key_id(e["pub"])
        out["pub"] = e["pub"]
        if kind == "board":
            if not _device_ok(e.get("device")):
                raise bad("not a device id: %s" % chainhost.describe(e.get("device")))
            since = e.get("since", 0)
            if type(since) is not int or since < 0:
                raise bad("\"since\" must be a game number")
            out.update(device=e["device"], since=since)
            for k in ("replaced", "replaced_by"):
                if type(e.get(k)) is str:
                    out[k] = e[k]
        else:
            name = e.get("name")
            if type(name) is not str or not name.strip() or len(name) > 80:
                raise bad("a league key needs a name")
            out["name"] = name
            if e.get("priv") is not None:
                if not chainhost.is_hex(e.get("priv"), 64):
                    raise bad("its private half must be 64 hex digits")
                if chainhost.SoftKey(e["priv"]).pub != e["pub"]:
                    raise bad("its private half is not its public key's")
                out["priv"] = e["priv"]
    else:
        raise bad("unknown kind %s (board, legacy or league)" % chainhost.describe(kind))
    if e.get("kid") not in (None, out["kid"]):
        raise bad("its kid is not its key's (%s)" % out["kid"])
    for k in ("added", "how"):
        if type(e.get(k)) is str:
            out[k] = e[k]
    return out


def _read(path):
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise ChalkError("cannot read the key file %s: %s" % (path, getattr(e, "strerror", None)
                                                              or e), code=2)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = None
    if (not isinstance(data, dict) or data.get("chalk_keys") not in (1, VERSION)
            or not isinstance(data.get("keys"), list)):
        raise ChalkError("%s is not a Chalk key file (want {\"chalk_keys\": 2, \"keys\": "
                         "[...]})" % path, "key files come from `chalk keys export`", code=2)
    entries = [_entry(e, path) for e in data["keys"]]
    return data, entries


def signed_payload(entries):
    """The bytes a league key signs for a key file: the entries as exported, canonical."""
    return KEYS_TAG + chain.canon({"chalk_keys": VERSION, "keys": [_public(e) for e in entries]})


def _public(e):
    return {k: e[k] for k in _EXPORTED[e["kind"]] if k in e}


class KeyStore:
    def __init__(self, path=None):
        self.path = Path(path) if path else default_path()
        self.entries = []
        if self.path.exists():
            self.entries = _read(self.path)[1]

    # -- looking up --------------------------------------------------------------------------
    def find(self, kid):
        """The entry of the key named `kid`, or None."""
        for e in self.entries:
            if e["kid"] == kid:
                return e
        return None

    def key(self, kid):
        """The bytes of a legacy key (older callers), or None."""
        e = self.find(kid)
        return bytes.fromhex(e["key"]) if e and e["kind"] == "legacy" else None

    def for_device(self, device):
        return [e for e in self.entries if e["kind"] != "league" and e.get("device") == device]

    def board_key(self, device):
        """The board key a device signs with now (not a replaced one), or None."""
        for e in self.entries:
            if e["kind"] == "board" and e["device"] == device and "replaced" not in e:
                return e
        return None

    def knows(self, device):
        """How the store knows a device: "board", "legacy" or None."""
        kinds = {e["kind"] for e in self.for_device(device)}
        return "board" if "board" in kinds else ("legacy" if kinds else None)

    def league(self):
        """This store's own league key (the entry with a private half), or None."""
        for e in self.entries:
            if e["kind"] == "league" and "priv" in e:
                return e
        return None

    # -- adding ------------------------------------------------------------------------------
    def add_board(self, device, pub, since, how, replace=None):
        """Keep a board key proven to be `device`'s. Returns the lines to tell the user (loud
        ones for a replaced key); ChalkError if the device has another key and `replace` does
        not name it."""
        kid = chainhost.key_id(pub)
        other = self.find(kid)
        if other is not None:
            if other["kind"] == "board" and other["device"] == device:
                return ["board %s: key %s is already kept (%s)" % (device, kid,
                                                                  other.get("how") or "?")]
            raise ChalkError("key %s is kept for %s, not for board %s" % (
                kid, other.get("device") or other.get("name"), device),
                "one key belongs to one board: check which board this is")
        old = self.board_key(device)
        out = []
        if old is not None:
            if replace is None:
                raise ChalkError(
                    "board %s already signs with key %s (%s, %s): refusing key %s" % (
                        device, old["kid"], old.get("how") or "kept", old.get("added") or "?",
                        kid),
                    "a board's key changes only when its NVS was erased, or this is another "
                    "board claiming its id; if you know why, give --replace %s" % old["kid"])
            if replace != old["kid"]:
                raise ChalkError("--replace %s names no key of board %s (its key is %s)"
                                 % (replace, device, old["kid"]),
                                 "give --replace %s to replace it" % old["kid"])
            old["replaced"] = now_iso()
            old["replaced_by"] = kid
            out += ["!" * 72,
                    "REPLACED the key of board %s: %s (%s) is no longer its key; it signs "
                    "with %s from now on" % (device, old["kid"], old.get("how") or "kept", kid),
                    "games signed with %s still verify; anything new signed with it is not "
                    "this board's" % old["kid"],
                    "!" * 72]
        elif replace is not None:
            raise ChalkError("--replace %s: board %s has no key in %s to replace" % (
                replace, device, self.path), "leave --replace out to enrol it")
        self.entries.append({"kind": "board", "device": device, "kid": kid, "pub": pub,
                             "since": since, "added": now_iso(), "how": how})
        out.append("board %s: key %s kept in %s (%s)" % (device, kid, self.path, how))
        return out

    def add_legacy(self, key_hex, device, how):
        """Keep a legacy (host-made HMAC) key; returns the lines to tell the user."""
        kid = chainhost.legacy_key_id(bytes.fromhex(key_hex))
        e = self.find(kid)
        if e is not None:
            if e.get("device") in (None, device):
                if device and e.get("device") is None:
                    e["device"] = device
                    return ["legacy key %s: now kept for board %s" % (kid, device)]
                return ["legacy key %s is already kept" % kid]
            raise ChalkError("legacy key %s is kept for board %s, not %s" % (
                kid, e["device"], device), "check which board this key belongs to")
        self.entries.append({"kind": "legacy", "device": device, "kid": kid, "key": key_hex,
                             "added": now_iso(), "how": how})
        return ["board %s: legacy key %s kept (%s); what it signs verifies as legacy: the pub "
                "holds this key" % (device or "(device not known yet)", kid, how)]

    def make_league(self, name):
        if self.league() is not None:
            raise ChalkError("%s already holds league key %s (%s)" % (
                self.path, self.league()["kid"], self.league()["name"]),
                "a league keeps one key; `chalk keys list` shows it")
        if not name.strip() or len(name) > 80:
            raise ChalkError("give the league a name (1 to 80 characters)")
        k = chainhost.SoftKey()
        e = {"kind": "league", "name": name, "kid": k.kid, "pub": k.pub, "priv": k.private_hex(),
             "added": now_iso(), "how": "made here"}
        self.entries.append(e)
        return e

    def trust(self, path, kid):
        """Trust the league key named `kid` that the key file at `path` carries."""
        data, _entries = _read(path)
        signed = data.get("signed") if isinstance(data.get("signed"), dict) else {}
        found = None
        if chainhost.public_key(signed.get("pub")) is not None and chainhost.key_id(
                signed["pub"]) == kid:
            found = {"kind": "league", "pub": signed["pub"],
                     "name": signed.get("name") if type(signed.get("name")) is str else kid}
        if found is None:
            raise ChalkError("%s carries no league key %s" % (path, kid),
                             "the league's secretary reads its key id from `chalk keys list`")
        e = self.find(kid)
        if e is not None:
            return e, False
        e = _entry(dict(found, added=now_iso(), how="trusted from %s" % Path(path).name), path)
        self.entries.append(e)
        return e, True

    def import_file(self, path, replace=None, legacy=False, devices=None):
        """Keep the keys of a key file (those of `devices` only, when given: the file's
        signature still covers it whole). Board keys only from a file signed by a league key
        this store trusts; legacy keys from any file with `legacy`. Returns the lines to tell.
        Everything is checked before anything is kept: a refused key keeps none."""
        data, entries = _read(path)
        name = Path(path).name
        voucher = self._voucher(data, entries, path)
        if devices is not None:
            entries = [e for e in entries if e["kind"] != "league" and e.get("device") in devices]
            if not entries:
                raise ChalkError("%s holds no key for board %s" % (path, ", ".join(devices)),
                                 "the league's enrolment computer exports it with `chalk keys "
                                 "export %s`" % " ".join(devices))
        before = [dict(e) for e in self.entries]
        out = []
        try:
            for e in entries:
                if e["kind"] == "board":
                    if voucher is None:
                        raise ChalkError(
                            "%s: board key %s for %s is not signed by a league key this store "
                            "trusts: refused (nothing was kept)" % (path, e["kid"], e["device"]),
                            "enrol the board over USB (`chalk keys enrol`), or ask the league "
                            "for a file it signed (`chalk keys export` on its computer) and "
                            "trust its key (`chalk keys trust FILE KID`)")
                    how = "imported from %s, vouched for by league key %s (%s)" % (
                        name, voucher["kid"], voucher["name"])
                    old = self.board_key(e["device"])
                    rep = replace if old is not None and old["kid"] != e["kid"] else None
                    out += self.add_board(e["device"], e["pub"], e["since"], how, rep)
                elif e["kind"] == "legacy":
                    if voucher is None and not legacy:
                        raise ChalkError(
                            "%s: legacy key %s for %s comes with no proof: refused (nothing was "
                            "kept)" % (path, e["kid"], e.get("device") or "an unknown board"),
                            "give --legacy to keep it anyway: what it signs verifies as legacy "
                            "(the pub holds this key), never as a board key")
                    how = ("imported from %s, vouched for by league key %s" % (
                        name, voucher["kid"]) if voucher else "imported from %s (no proof)"
                        % name)
                    out += self.add_legacy(e["key"], e.get("device"), how)
                elif self.find(e["kid"]) is None:
                    out.append("league key %s (%s) in %s: not trusted by an import; `chalk "
                               "keys trust %s %s` trusts it" % (e["kid"], e["name"], name,
                                                                path, e["kid"]))
        except ChalkError:
            self.entries = before
            raise
        return out

    def _voucher(self, data, entries, path):
        """The trusted league entry that signed a key file, or None (unsigned). A file signed
        by a key the store does not trust, or whose signature fails, is refused."""
        signed = data.get("signed")
        if signed is None:
            return None
        if not isinstance(signed, dict):
            raise ChalkError("%s: \"signed\" is not an object" % path, code=2)
        kid = signed.get("kid")
        e = self.find(kid) if type(kid) is str else None
        if e is None or e["kind"] != "league":
            raise ChalkError("%s is signed by league key %s, which this store does not trust"
                             % (path, chainhost.describe(kid, 20) if type(kid) is not str
                                or not chainhost.is_hex(kid, 16) else kid),
                             "trust the league's key first: `chalk keys trust %s KID`, with the "
                             "key id its secretary gives you" % path)
        if not chainhost.ecdsa_ok(e["pub"], signed_payload(entries), signed.get("sig")):
            raise ChalkError("%s: its signature by league key %s does not hold: the file was "
                             "changed after the league signed it" % (path, kid),
                             "ask the league for the file again", code=1)
        return e

    # -- writing -----------------------------------------------------------------------------
    def export(self, devices=()):
        """The key file of this store's board and legacy keys (those of `devices`, default
        all) and its league's public key, signed by the league key if it holds one."""
        chosen = [e for e in self.entries if e["kind"] in ("board", "legacy")
                  and "replaced" not in e and (not devices or e.get("device") in devices)]
        league = self.league()
        data = {"chalk_keys": VERSION, "keys": [_public(e) for e in chosen]}
        if league is not None:
            data["signed"] = {"kid": league["kid"], "pub": league["pub"],
                              "name": league["name"],
                              "sig": chainhost.SoftKey(league["priv"]).sign(
                                  signed_payload(chosen))}
        return data, chosen

    def save(self):
        """Write the store whole, readable by its owner only (written aside, then renamed)."""
        data = json.dumps({"chalk_keys": VERSION, "keys": self.entries}, indent=1) + "\n"
        write_private(self.path, data, "the key store")


def write_private(path, text, what):
    """Write a key file readable by its owner only, whole or not at all (chalk/atomic.py: a
    full disk, Ctrl-C or a kill leave the old file as it was and nothing beside it)."""
    from chalk import atomic

    path = Path(path)
    try:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise atomic.problem(path, e) from None
        atomic.write_file(path, text, mode=0o600)
    except ChalkError as e:
        raise ChalkError("%s: %s" % (what, e.message), e.hint or "give a writable file with "
                         "--keys or $%s" % ENV_KEYS) from None


def read_file(path):
    """The entries of a key file (a store, or what `chalk keys export` wrote)."""
    return _read(path)[1]


# -- enrolment: a board proves it holds its key ------------------------------------------------

def ask_key(link, timeout=ENROL_WAIT):
    """Ask the board on an open BoardLink for its public key, signed over a fresh challenge;
    the checked reply. ChalkError when it does not prove it holds its key."""
    from chalk.link import BoardError

    challenge = secrets.token_hex(32)
    deadline = time.monotonic() + timeout
    while True:
        try:
            reply = link.request("key", {"challenge": challenge}, timeout=5.0, retries=4)
        except BoardError as e:
            if e.reason in ("unknown", "unsupported"):
                raise ChalkError("the board on %s has no key of its own: its firmware is older "
                                 "than this chalk" % link.port,
                                 "`chalk deploy` it; the board then makes its key at its "
                                 "first boot")
            raise
        if not reply.get("pending"):
            break
        if time.monotonic() > deadline:
            raise ChalkError("the board on %s did not finish making its key and signing "
                             "within %d s" % (link.port, timeout),
                             "is it playing a long resync? try again in a minute")
        time.sleep(0.1)  # the board signs between its scans: ask again shortly
    why = chainhost.enrol_ok(reply, challenge)
    if why is None and link.info is not None and reply.get("device") != link.info.get("device"):
        why = "it says device %s in its key reply but %s in its hello" % (
            reply.get("device"), link.info.get("device"))
    if why is not None:
        raise ChalkError("the board on %s did not prove it holds its key: %s" % (link.port, why),
                         "nothing was kept; check that this is a Chalk board")
    return reply


def enrol(port, store_path=None, replace=None, baud=None):
    """Read the key of the board on `port` over USB (it signs a fresh challenge) and keep it.
    Returns (reply, lines to tell)."""
    from chalk.link import BAUD, BoardLink, open_port

    store = KeyStore(store_path)  # a store that cannot be read fails before the board is asked
    link = BoardLink(open_port(port, baud or BAUD), port)
    try:
        link.hello()
        reply = ask_key(link)
    finally:
        link.close()
    lines = store.add_board(reply["device"], reply["pub"], reply["since"],
                            "enrolled over USB on %s" % port, replace)
    store.save()
    return reply, lines
