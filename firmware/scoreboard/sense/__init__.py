# Sensing: raw line bitmaps + a time in ms in, input events out (design, "The flow of data").
# Pure logic, no clock and no `machine`: hal/ reads the lines, the app loop calls tick().
# Nothing on a tick path (or note_edge) allocates; see docs/sensing.md.

from .buttons import Buttons
from .events import (
    CHATTER,
    FAULT,
    HEALTHY,
    KEY,
    LINE,
    LONG,
    PEG,
    PIN_DOWN,
    PRESS,
    SHOT,
    SHOT_CLOSED,
    SHOT_SETTLED,
    STUCK,
    TMASK,
    EventRing,
    elapsed,
    kind_name,
)
from .health import LineHealth

# The tilt latch, the peg grid and the keypad are loaded by the boards that have them (the
# app imports sense.tilt, sense.pegs, sense.keypad): a board holds in RAM the code, and the
# names, of what it senses only. Their names here are found when first asked for.
_LAZY = {"Keypad": "keypad", "PegGrid": "pegs", "hole_bit": "pegs", "peg_id": "pegs",
         "peg_where": "pegs", "CLOSING": "tilt", "PIN_NAMES": "tilt", "TiltLatch": "tilt",
         "pins_text": "tilt"}


def __getattr__(name):
    part = _LAZY.get(name)
    if part is None:
        raise AttributeError(name)
    return getattr(__import__("scoreboard.sense." + part, None, None, [name]), name)

__all__ = [
    "Buttons",
    "CHATTER",
    "CLOSING",
    "EventRing",
    "FAULT",
    "HEALTHY",
    "KEY",
    "Keypad",
    "LINE",
    "LONG",
    "LineHealth",
    "PEG",
    "PIN_DOWN",
    "PIN_NAMES",
    "PRESS",
    "PegGrid",
    "SHOT",
    "SHOT_CLOSED",
    "SHOT_SETTLED",
    "STUCK",
    "TMASK",
    "TiltLatch",
    "elapsed",
    "hole_bit",
    "kind_name",
    "peg_id",
    "peg_where",
    "pins_text",
]

# Pocket sensors: sense/pockets.py is imported by the boards that have them.
from .events import POCKET  # noqa: E402

__all__ += ["POCKET"]
