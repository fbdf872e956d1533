# Board configs: the 4x4 keypad of a scorepad (docs/board-config.md, docs/scorepad.md). Split
# from boardconfig so that boards without a keypad never load it. Runs on MicroPython and CPython.

from .boardconfig import (
    KEY_LEGENDS,
    KEYPAD_COLS,
    KEYPAD_ROWS,
    BoardConfigError,
    _bool,
    _check_gpio,
    _check_keys,
    _obj,
    _q,
    _require,
    _str,
)

_KEYPAD = ("rows", "cols", "keys", "pull", "strapping_ok")


def keypad(value):
    kp = _obj(value, "keypad")
    _check_keys(kp, _KEYPAD, "keypad")
    ok = _bool(kp.get("strapping_ok", False), "keypad.strapping_ok")
    pull = _str(kp.get("pull", "up"), "keypad.pull", ("up", "none"))
    out = {"pull": pull, "strapping_ok": ok}
    for key, n, direction in (("rows", KEYPAD_ROWS, "out"), ("cols", KEYPAD_COLS, "in")):
        gpios = _require(kp, key, "keypad", " (a list of %d GPIOs)" % n)
        if type(gpios) is not list or len(gpios) != n:
            raise BoardConfigError("keypad.%s must be a list of %d GPIOs, %s first, not %s"
                                   % (key, n, "the top row" if key == "rows"
                                      else "the left column", _q(gpios)), "keypad." + key)
        for i, gpio in enumerate(gpios):
            # Rows are driven (open drain, so two keys down never short two outputs); columns
            # read, with the internal pull-ups unless "pull": "none" (external resistors).
            _check_gpio("keypad.%s[%d]" % (key, i), gpio, direction,
                        pull if direction == "in" else "none", ok)
        out[key] = list(gpios)
    keys = kp.get("keys", KEY_LEGENDS)
    if type(keys) is not str or len(keys) != KEYPAD_ROWS * KEYPAD_COLS:
        raise BoardConfigError("keypad.keys must be a string of the %d key legends, row by row "
                               "(e.g. %s), not %s" % (KEYPAD_ROWS * KEYPAD_COLS,
                                                      _q(KEY_LEGENDS), _q(keys)), "keypad.keys")
    for i, ch in enumerate(keys):
        if ch in " .\"" or keys.find(ch) != i:
            raise BoardConfigError("keypad.keys: legend %s %s; each key needs its own "
                                   "printable legend" % (_q(ch), "appears twice" if ch not in
                                                         " .\"" else "is not allowed"),
                                   "keypad.keys")
    for ch in KEY_LEGENDS:
        if ch not in keys:
            raise BoardConfigError("keypad.keys must hold the legends %s (in any order: the "
                                   "referees use them), not %s" % (_q(KEY_LEGENDS), _q(keys)),
                                   "keypad.keys")
    out["keys"] = keys
    return out
