# Canonical compact JSON: keys sorted, no spaces, strings as raw UTF-8, the same bytes on
# MicroPython and CPython (MicroPython dicts do not keep insertion order; the two json modules
# escape differently). The link's frames (frames.py) and their compact text (pack.py) both write
# it. Runs unchanged on MicroPython and CPython.

import json

MAX_DEPTH = 8  # payload nesting; the contract's payloads are two or three deep

# CPython escapes non-ASCII unless told not to; MicroPython writes UTF-8 and takes no options.
try:
    json.dumps("", ensure_ascii=False)

    def _jstr(s):
        return json.dumps(s, ensure_ascii=False)
except TypeError:
    _jstr = json.dumps


def str_into(s, out):
    if "\x08" in s or "\x0c" in s:
        # The one escape the two json modules write differently (\b vs \u0008): split it out.
        start = 0
        out.append('"')
        for i in range(len(s)):
            c = s[i]
            if c == "\x08" or c == "\x0c":
                out.append(_jstr(s[start:i])[1:-1])
                out.append("\\u0008" if c == "\x08" else "\\u000c")
                start = i + 1
        out.append(_jstr(s[start:])[1:-1])
        out.append('"')
    else:
        out.append(_jstr(s))


def dump_into(obj, out, depth):
    t = type(obj)
    if t is str:
        str_into(obj, out)
    elif obj is None or t is bool or t is int:
        out.append(json.dumps(obj))
    elif t is float:
        # Allowed, but digits may differ by platform (single-precision on ESP32): prefer ints.
        if obj != obj or obj in (float("inf"), float("-inf")):
            raise ValueError("NaN and infinity are not JSON")
        out.append(json.dumps(obj))
    elif depth >= MAX_DEPTH:
        raise ValueError("payload nested deeper than %d" % MAX_DEPTH)
    elif t is dict:
        # Each container is joined into one string as it is finished: no fragment list grows
        # beyond one container's, so a big reply needs no large contiguous block of a board's
        # fragmented heap (only the line itself).
        part = ["{"]
        first = True
        for k in sorted(obj):
            if type(k) is not str:
                raise ValueError("payload keys must be strings, not %r" % (k,))
            if not first:
                part.append(",")
            first = False
            str_into(k, part)
            part.append(":")
            dump_into(obj[k], part, depth + 1)
        part.append("}")
        out.append("".join(part))
    elif t is list or t is tuple:
        part = ["["]
        for i in range(len(obj)):
            if i:
                part.append(",")
            dump_into(obj[i], part, depth + 1)
        part.append("]")
        out.append("".join(part))
    else:
        raise ValueError("cannot put %s in a frame" % t.__name__)


def dumps(obj):
    """Canonical compact JSON: sorted keys, raw UTF-8, the same text on MicroPython and CPython."""
    out = []
    dump_into(obj, out, 0)
    return "".join(out)
