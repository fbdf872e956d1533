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
from .keypad import Keypad
from .pegs import PegGrid, hole_bit, peg_id, peg_where
from .tilt import CLOSING, PIN_NAMES, TiltLatch, pins_text

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
