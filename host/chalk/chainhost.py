"""The host's side of the hash chain and the boards' signatures: what checking needs and the
board does not. The shared part (the canonical encoding, the links, the signed messages) is
scoreboard.chain and scoreboard.sign, which the board runs too; the board signs with its own
code (scoreboard/p256.py), chalk checks with `cryptography`.

Two kinds of signature (docs/league.md):

- **board keys**: ECDSA P-256 with SHA-256, made on the board, which keeps the private key;
  `sig` is r || s, 128 hex digits; the key is named by sign.key_id(X || Y);
- **legacy keys**: HMAC-SHA256 under a key `chalk deploy` made on the host (firmware before
  board-held keys); `sig` 64 hex digits, named by legacy_key_id(key). Whoever deployed the
  board holds that key, so it proves nothing against the pub: chalk checks it as "legacy".
"""

import binascii
import hashlib
import hmac

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)

from scoreboard import chain, sign, signwork

CanonError = chain.CanonError
_HEX = "0123456789abcdef"
LEGACY_TAG = b"chalk-head-1"
_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


def of_rec(rec):
    """The chained form of a link `rec` payload (or an archived record in that form)."""
    kind = rec.get("type") or "A"
    if kind == "H":
        return chain.record(rec["seq"], "H", rec["header"])
    if kind == "E":
        return chain.record(rec["seq"], "E", rec["end"])
    return chain.record(rec["seq"], "A", rec)


def is_hex(s, digits):
    """True if `s` is a string of exactly `digits` lowercase hex digits."""
    return type(s) is str and len(s) == digits and all(c in _HEX for c in s)


def unhex(s, digits=64):
    """bytes of a lowercase hex string of `digits` digits, else None."""
    if not is_hex(s, digits):
        return None
    return binascii.unhexlify(s)


def describe(v, width=40):
    """A hostile value, quoted for a one-line message (type, length, the start of it)."""
    if isinstance(v, str):
        text = v.encode("unicode_escape").decode("ascii")
        short = text if len(text) <= width else text[:width - 3] + "..."
        return "a text of %d characters (\"%s\")" % (len(v), short)
    if v is None:
        return "nothing (null)"
    return "a %s" % {bool: "true/false", int: "number", float: "number", list: "list",
                     dict: "JSON object"}.get(type(v), type(v).__name__)


# -- legacy keys (HMAC-SHA256, made on the host) ---------------------------------------------

def legacy_key_id(key):
    """A legacy key's public name: 16 hex digits of SHA-256("chalk-key " || key)."""
    return hashlib.sha256(b"chalk-key " + key).hexdigest()[:16]


def legacy_sign(key, device, seq, link):
    """The legacy signature (hex) of a chain head, as firmware with a host-made key made it."""
    msg = (b"%s %s %d " % (LEGACY_TAG, device.encode(), seq)) + link
    return hmac.new(key, msg, hashlib.sha256).hexdigest()


def legacy_ok(key, device, seq, link, sig):
    """True if `sig` is the legacy signature of this head under `key` (constant-time)."""
    if not is_hex(sig, 64):
        return False
    return hmac.compare_digest(legacy_sign(key, device, seq, link), sig)


# -- board keys (ECDSA P-256, made and kept on the board) ------------------------------------

def public_key(pub_hex):
    """The cryptography public key of a board key (X || Y, 128 hex digits), or None if that is
    not a point of P-256."""
    raw = unhex(pub_hex, 128)
    if raw is None:
        return None
    try:
        return ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b"\x04" + raw)
    except ValueError:
        return None


def key_id(pub_hex):
    return sign.key_id(binascii.unhexlify(pub_hex))


def ecdsa_ok(pub_hex, message, sig_hex):
    """True if sig_hex (r || s, 128 hex digits) is an ECDSA P-256 / SHA-256 signature of
    `message` under the board key pub_hex."""
    key = public_key(pub_hex)
    if key is None or not is_hex(sig_hex, 128):
        return False
    r, s = int(sig_hex[:64], 16), int(sig_hex[64:], 16)
    if not (0 < r < _N and 0 < s < _N):
        return False
    try:
        key.verify(encode_dss_signature(r, s), message, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return False
    return True


def head_ok(pub_hex, device, seq, link, sig):
    """True if `sig` is the board key's signature of this chain head."""
    return ecdsa_ok(pub_hex, signwork.head_message(device, seq, link), sig)


def enrol_ok(reply, challenge):
    """Why a board's `key` reply does not prove it holds its key for this challenge, or None."""
    pub = reply.get("pub")
    if public_key(pub) is None:
        return "its public key is not a point of P-256: %s" % describe(pub)
    if reply.get("challenge") != challenge:
        return "it answered another challenge"
    since = reply.get("since")
    device = reply.get("device")
    if type(since) is not int or since < 0 or type(device) is not str or not device:
        return "its reply has no device or first game"
    if reply.get("kid") != key_id(pub):
        return "its key id is not its key's"
    msg = signwork.enrol_message(device, pub, since, challenge)
    if not ecdsa_ok(pub, msg, reply.get("sig")):
        return "its signature of the challenge does not hold"
    return None


class SoftKey:
    """A P-256 key pair on this computer: a league's own key (it vouches for the board keys it
    enrolled, chalk keys), or a stand-in for a board in tests and benchmarks (it signs the
    same messages a board signs, with random nonces; cryptography makes them)."""

    def __init__(self, private=None):
        if private is None:
            self._key = ec.generate_private_key(ec.SECP256R1())
        else:
            self._key = ec.derive_private_key(int(private, 16), ec.SECP256R1())
        n = self._key.public_key().public_numbers()
        self.pub = "%064x%064x" % (n.x, n.y)
        self.kid = key_id(self.pub)

    def private_hex(self):
        return "%064x" % self._key.private_numbers().private_value

    def sign(self, message):
        r, s = decode_dss_signature(self._key.sign(message, ec.ECDSA(hashes.SHA256())))
        return "%064x%064x" % (r, s)

    def sign_head(self, device, seq, link):
        return self.sign(signwork.head_message(device, seq, link))
