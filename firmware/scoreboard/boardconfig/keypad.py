# Board configs: the 4x4 keypad of a scorepad (docs/board-config.md, docs/scorepad.md). A piece of
# its own so that boards without a keypad never load it. Runs on MicroPython and CPython.

from .common import (
    KEY_LEGENDS,
    KEYPAD_COLS,
    KEYPAD_ROWS,
    BoardConfigError,
    check_gpio,
    check_keys,
    expect_bool,
    expect_object,
    expect_str,
    quote,
    require,
)

_KEYPAD = ("rows", "cols", "keys", "pull", "strapping_ok")


def keypad(value):
    kp = expect_object(value, "keypad")
    check_keys(kp, _KEYPAD, "keypad")
    ok = expect_bool(kp.get("strapping_ok", False), "keypad.strapping_ok")
    pull = expect_str(kp.get("pull", "up"), "keypad.pull", ("up", "none"))
    out = {"pull": pull, "strapping_ok": ok}
    for key, n, direction in (("rows", KEYPAD_ROWS, "out"), ("cols", KEYPAD_COLS, "in")):
        gpios = require(kp, key, "keypad", " (a list of %d GPIOs)" % n)
        if type(gpios) is not list or len(gpios) != n:
            raise BoardConfigError("keypad.%s must be a list of %d GPIOs, %s first, not %s"
                                   % (key, n, "the top row" if key == "rows"
                                      else "the left column", quote(gpios)), "keypad." + key)
        for i, gpio in enumerate(gpios):
            # Rows are driven (open drain, so two keys down never short two outputs); columns
            # read, with the internal pull-ups unless "pull": "none" (external resistors).
            check_gpio("keypad.%s[%d]" % (key, i), gpio, direction,
                        pull if direction == "in" else "none", ok)
        out[key] = list(gpios)
    keys = kp.get("keys", KEY_LEGENDS)
    if type(keys) is not str or len(keys) != KEYPAD_ROWS * KEYPAD_COLS:
        raise BoardConfigError("keypad.keys must be a string of the %d key legends, row by row "
                               "(e.g. %s), not %s" % (KEYPAD_ROWS * KEYPAD_COLS, quote(KEY_LEGENDS),
                                                      quote(keys)), "keypad.keys")
    for i, ch in enumerate(keys):
        if ch in " .\"" or keys.find(ch) != i:
            raise BoardConfigError("keypad.keys: legend %s %s; each key needs its own "
                                   "printable legend" % (quote(ch), "appears twice" if ch not in
                                                         " .\"" else "is not allowed"),
                                   "keypad.keys")
    for ch in KEY_LEGENDS:
        if ch not in keys:
            raise BoardConfigError("keypad.keys must hold the legends %s (in any order: the "
                                   "referees use them), not %s" % (quote(KEY_LEGENDS), quote(keys)),
                                   "keypad.keys")
    out["keys"] = keys
    return out
