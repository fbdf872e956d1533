# The board's signature of a chain head: HMAC-SHA256 (RFC 2104) under its key (docs/match-log.md).
# MicroPython has hashlib.sha256 (in hardware on the ESP32) but no hmac module: written out here.
# Apart from the chain (scoreboard.chain): the board loads it only when it signs (a game's end,
# the host's `sign`), so a board that is not being archived keeps that RAM.

import hashlib

from .chain import hexlify

_BLOCK = 64  # SHA-256 block size


def hmac_sha256(key, msg):
    if len(key) > _BLOCK:
        key = hashlib.sha256(key).digest()
    key = key + b"\x00" * (_BLOCK - len(key))
    inner = hashlib.sha256(bytes([b ^ 0x36 for b in key]))
    inner.update(msg)
    outer = hashlib.sha256(bytes([b ^ 0x5C for b in key]))
    outer.update(inner.digest())
    return outer.digest()


def key_id(key):
    """A key's public name: the first 16 hex digits of SHA-256("chalk-key " || key)."""
    h = hashlib.sha256(b"chalk-key ")
    h.update(key)
    return hexlify(h.digest())[:16]


def head_message(device, seq, link):
    """What the board signs: its device id, the seq of the record the chain ends at, the link."""
    return ("chalk-head-1 %s %d " % (device, seq)).encode() + link


def sign(key, device, seq, link):
    """The signature (hex) of a chain head."""
    return hexlify(hmac_sha256(key, head_message(device, seq, link)))




def signed_head(app):
    """The chain head of the app's newest game's last record, signed with the board's key (no
    "sig" on a board deployed without one). The key itself never leaves the board."""
    j = app.journal
    c = j.chain
    out = {"device": app.board.device_id, "game_no": j.stats()["game_no"], "seq": c.seq,
           "head": hexlify(c.link)}
    key = getattr(app.board, "key", None)
    if key is not None and c.seq:
        out["kid"] = key_id(key)
        out["sig"] = sign(key, app.board.device_id or "", c.seq, c.link)
    return out


def sign_end(app, end):
    """Add to an end payload the chain head it makes, and the board's signature of it."""
    link = app.journal.end_link(end)
    end["head"] = hexlify(link)
    key = getattr(app.board, "key", None)
    if key is not None:
        end["kid"] = key_id(key)
        end["sig"] = sign(key, app.board.device_id or "", app.journal.stats()["last_seq"] + 1,
                          link)
