# What the board keeps of its own key in its NVS (sign.py, docs/league.md): the names it keeps
# there, the tags of what it signs, reading and writing a blob, and the key's public name. A
# leaf: the app's side of the key (boardkey.py), the signer (sign.py) and its arithmetic
# (signwork.py) each take these from here, so none of them imports another back.

import hashlib

from .chain import hexlify

HEAD_TAG = "chalk-head-2"
ENROL_TAG = "chalk-enrol-1"
_SK = "sk"  # the private key, 32 bytes big-endian
_PK = "pk"  # its public key X || Y, 64 bytes (worked out once, then kept)
_SINCE = "since"  # the game number in progress when the key was made, 4 bytes
_KID = "kid"  # its name, 16 hex digits (for the hello, without loading the signer)
_LAST = "last"  # the newest finished game: game number (4), seq (4), link (32): chain.py
_KEEP = 4  # signatures kept for repeats of a request


def nvs_get(nvs, key, size):
    """The bytes the board's NVS keeps under `key` (at most `size`), or None (hal: board.nvs,
    esp32.NVS's blob calls; what sign.py keeps there)."""
    buf = bytearray(size)
    try:
        n = nvs.get_blob(key, buf)
    except OSError:
        return None  # not there (or longer than asked for: not ours)
    return bytes(buf[:n])


def key_id(pub):
    """A board key's public name: 16 hex digits of SHA-256("chalk-p256 " || X || Y)."""
    h = hashlib.sha256(b"chalk-p256 ")
    h.update(pub)
    return hexlify(h.digest())[:16]


def _put(nvs, key, value):
    nvs.set_blob(key, value)
    nvs.commit()  # on flash before this returns
