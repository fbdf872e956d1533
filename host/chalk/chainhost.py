"""The host's side of the hash chain: what checking needs and the board does not (the shared part,
the canonical encoding, the links and HMAC, is scoreboard.chain, which the board runs too)."""

import binascii
import hmac

from scoreboard import chain, sign

CanonError = chain.CanonError
_HEX = "0123456789abcdef"


def of_rec(rec):
    """The chained form of a link `rec` payload (or an archived record in that form)."""
    kind = rec.get("type") or "A"
    if kind == "H":
        return chain.record(rec["seq"], "H", rec["header"])
    if kind == "E":
        return chain.record(rec["seq"], "E", rec["end"])
    return chain.record(rec["seq"], "A", rec)


def unhex(s):
    """bytes of a lowercase hex string of 64 digits, else None."""
    if type(s) is not str or len(s) != 64 or any(c not in _HEX for c in s):
        return None
    return binascii.unhexlify(s)


def check_sig(key, device, seq, link, sig):
    """True if `sig` (hex) signs this chain head under `key` (a constant-time comparison)."""
    if type(sig) is not str:
        return False
    return hmac.compare_digest(sign.sign(key, device, seq, link), sig)
