# JSON from outside the board (match logs, board configs, sensor traces): json.loads with limits.
#
# A parser recurses (CPython: RecursionError) or allocates (MicroPython: MemoryError) once per
# nesting level, so `"[" * 100000` must be refused before it is parsed. NaN and Infinity are not
# JSON, though CPython's parser takes them. Runs on MicroPython and CPython.

import json

MAX_DEPTH = 32


class LimitError(ValueError):
    """JSON this reader refuses though a parser might take it: too deep, NaN, Infinity."""


def loads(text, depth=MAX_DEPTH):
    """Parse one JSON text; ValueError if it is not JSON, LimitError (a ValueError) if it nests
    deeper than `depth` or uses NaN/Infinity."""
    if text.count("[") + text.count("{") > depth or "N" in text or "I" in text:
        _scan(text, depth)  # the slow check, only for text that might need it
    return json.loads(text)


def _scan(text, depth):
    level = 0
    in_str = False
    esc = False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch == "[" or ch == "{":
            level += 1
            if level > depth:
                raise LimitError("nested deeper than %d levels" % depth)
        elif ch == "]" or ch == "}":
            level -= 1
        elif ch == "N" or ch == "I":
            raise LimitError("NaN and Infinity are not JSON numbers")
