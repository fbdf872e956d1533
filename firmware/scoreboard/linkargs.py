# The commands a board takes and the checks of their arguments (docs/serial-protocol.md): in a
# module of their own beside link.py, so a board compiles each in a smaller piece of its heap.
# Every argument is checked here, before a handler sees it: types, ranges, and values the
# journal, the hash chain and the host take (no fractions, no lone surrogates, bounded depth).
# Runs unchanged on MicroPython and CPython.

from . import frames

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

# Commands the host may send: name -> ((arg, check, required, default), ...). Args are checked
# here, before the handler sees them, so a handler only deals with well-typed values.
_NAME_MAX = const(40)  # a player's name, in characters
_PLAYERS_MAX = const(9)  # names in `new`: no game seats more (each game's rules check their own)
_EVENTS_MAX = const(32)  # about what one frame holds


def _is_int(v):
    return type(v) is int  # bool is not an int here: JSON true is not 1


_SEQ_MAX = (1 << 53) - 1  # seqs, times and counts: integers every JSON reader keeps exact


def _seq(v):
    if _is_int(v) and 0 <= v <= _SEQ_MAX:
        return None
    return "a non-negative integer"


# The wall clock a board takes: 2000-01-01 up to the end of 2099 (UTC). The ESP32's epoch is
# 2000, and a far-off time is no clock at all (the unix port's gmtime crashes on one).
CLOCK_MIN = 946684800000
CLOCK_MAX = 4102444799999


def _clock(v):
    if _is_int(v) and CLOCK_MIN <= v <= CLOCK_MAX:
        return None
    return "Unix time in ms from %d (2000-01-01) to %d (2099-12-31)" % (CLOCK_MIN, CLOCK_MAX)


def _text_ok(s):
    """A string the journal, the chain and every reader take: no lone surrogate (a \\ud800
    escape; MicroPython's JSON reader also turns an escaped pair beyond U+FFFF into two)."""
    try:
        b = s.encode()  # MicroPython holds a surrogate as ED A0..BF xx; CPython refuses it
    except UnicodeError:
        return False
    i = b.find(b"\xed")
    while i >= 0:
        if i + 1 < len(b) and b[i + 1] >= 0xA0:
            return False
        i = b.find(b"\xed", i + 1)
    return True


_VALUE_DEPTH = const(6)  # an action's values: the contract's are two deep


def _value_ok(v, depth=0):
    """A JSON value the board's journal and readers take: numbers (finite), strings without a
    lone surrogate, true, false, null, lists and objects with string keys, nested at most
    _VALUE_DEPTH."""
    t = type(v)
    if t is int or v is None or t is bool:
        return True
    if t is float:
        # A fraction goes on to the rules, which refuse it in their own fields with their rule
        # id (a scenario reads the same over serial as in-process); one anywhere else is
        # refused by the journal before it is written (the chain has no fractions).
        return v == v and v - v == 0  # not NaN, not infinite
    if t is str:
        return _text_ok(v)
    if depth >= _VALUE_DEPTH:
        return False
    if t is list:
        for x in v:
            if not _value_ok(x, depth + 1):
                return False
        return True
    if t is dict:
        for k in v:
            if type(k) is not str or not _text_ok(k) or not _value_ok(v[k], depth + 1):
                return False
        return True
    return False


def _want(v):
    # A lowercase hex bitmap of at most 64 digits (256 records).
    if type(v) is str and 0 < len(v) <= 64 and not v.strip("0123456789abcdef"):
        return None
    return "a lowercase hex bitmap of at most 64 digits"


def _block(v):
    # The most packed bytes an `r` frame of the stream carries (pack.Block.LIMIT at most): the
    # host asks for smaller blocks on a line that loses frames, so a lost one loses fewer.
    if _is_int(v) and 16 <= v <= 360:
        return None
    return "an integer from 16 to 360 (bytes of packed records a frame)"


def _bool(v):
    return None if type(v) is bool else "true or false"


def _dict(v):
    if type(v) is dict and _value_ok(v):
        return None
    return "a JSON object (of numbers, strings, true, false, null, lists and objects)"


def _game(v):
    if type(v) is str and 0 < len(v) <= 32 and _text_ok(v):
        return None
    from . import games

    return "a game id string (%s)" % ", ".join(games.IDS)


def _name(v):
    return type(v) is str and 0 < len(v) <= _NAME_MAX and _text_ok(v)


def _players(v):
    what = ("a list of at most %d names (strings of 1..%d characters, or a pair of them for a "
            "side of two)" % (_PLAYERS_MAX, _NAME_MAX))
    if type(v) is not list or len(v) > _PLAYERS_MAX:
        return what
    for p in v:
        if _name(p):
            continue
        if type(p) is list and 0 < len(p) <= 2 and _name(p[0]) and (len(p) == 1 or _name(p[1])):
            continue
        return what
    return None


_CHAIN_KEYS = ("link", "sig", "head", "kid")  # the chain's own keys (chain.py): never hashed


def _action(v):
    if type(v) is dict and type(v.get("a")) is str:
        if not _value_ok(v):
            return ("an action object of numbers, strings, true, false, null, lists and "
                    "objects nested at most %d deep" % _VALUE_DEPTH)
        for k in _CHAIN_KEYS:
            if k in v:
                return "an action without the chain's keys (link, sig, head, kid)"
        return None
    return 'an action object with an "a" kind, such as {"a":"undo"}'


_TRACE_KEYS = ("t", "line", "v")
_EVENT_KEYS = ("kind", "id", "value", "t")


_T_MAX = const(86400000)  # an injected event's t: at most a day ahead (ms)
_INT_MAX = const(0x3FFFFFFF)  # an input event's id and value are small ints (sense/events.py)


def _small(v):
    return _is_int(v) and -_INT_MAX <= v <= _INT_MAX


def _short_name(v):
    return type(v) is str and 0 < len(v) <= 64 and _text_ok(v)


def _event(e):
    if type(e) is not dict:
        return False
    t = e.get("t", 0)
    if not (_is_int(t) and 0 <= t <= _T_MAX):
        return False
    if "line" in e:  # sensor-trace form: {"t": ms, "line": "pin.C", "v": 0|1}
        for k in e:
            if k not in _TRACE_KEYS:
                return False
        v = e.get("v")
        if not _short_name(e["line"]):
            return False
        if e["line"][:7] == "colour.":  # analog: an ADC reading
            return type(v) is int and 0 <= v <= 4095
        return v in (0, 1) and type(v) is int
    for k in e:  # input-event form: {"kind": "press"|int, "id": int|str, "value": int, "t"?}
        if k not in _EVENT_KEYS:
            return False
    kind, ident = e.get("kind"), e.get("id")
    return ((_short_name(kind) or _small(kind)) and (_short_name(ident) or _small(ident))
            and _small(e.get("value")))


def _events(v):
    what = ('a list of 1..%d input events, each {"t":ms,"line":name,"v":0|1} or '
            '{"kind":k,"id":i,"value":n}' % _EVENTS_MAX)
    if type(v) is not list or not 0 < len(v) <= _EVENTS_MAX:
        return what
    for e in v:
        if not _event(e):
            try:
                text = frames.dumps(e)
            except ValueError:
                text = "(not JSON the board writes)"
            return what + "; bad event: " + text[:60]
    return None


def _challenge(v):
    if type(v) is str and len(v) == 64 and not v.strip("0123456789abcdef"):
        return None
    return "64 lowercase hex digits (32 random bytes)"


COMMANDS = {
    "hello": (),
    "state": (),
    "new": (("game", _game, True, None), ("config", _dict, False, {}),
            ("players", _players, False, [])),
    "undo": (),
    "journal": (("after", _seq, True, None), ("want", _want, False, None),
                ("block", _block, False, None)),
    "ack": (("seq", _seq, True, None),),
    "clock": (("ms", _clock, True, None),),
    "inject": (("events", _events, True, None),),
    "act": (("action", _action, True, None),),
    "service": (("on", _bool, True, None),),
    "sign": (("game_no", _seq, False, None),),
    "key": (("challenge", _challenge, True, None),),
    "record": (("on", _bool, True, None),),
    # Coded frames (docs/serial-protocol.md): the code's range is checked by scoreboard/fec.py.
    "parity": (("nsym", _seq, True, None), ("span", _seq, False, 96)),
}
TEST_ONLY = ("inject", "act")


def check(cmd, args, test_mode):
    """The arguments of a command, defaults filled in, once each is checked; else (code,
    message) of the `err` reply: an unknown command, a test-only one off test mode, an argument
    missing, of the wrong type or unknown."""
    spec = COMMANDS.get(cmd)
    if spec is None:
        return ("unknown", "unknown command %s (known: %s)" % (cmd, ", ".join(sorted(COMMANDS))))
    if cmd in TEST_ONLY and not test_mode:
        return ("test_mode", "%s is refused: input injection is off on this board; enable it "
                'with "link": {"test_mode": true} in the board config (or run the simulator in '
                "test mode)" % cmd)
    checked = {}
    for name, fn, required, default in spec:
        if name not in args:
            if required:
                return ("args", "%s needs %s" % (cmd, name))
            checked[name] = default
            continue
        what = fn(args[name])
        if what is not None:
            return ("args", "%s: %s must be %s" % (cmd, name, what))
        checked[name] = args[name]
    for name in args:
        if name not in checked:
            known = ", ".join([s[0] for s in spec]) or "none"
            return ("args", "%s takes no argument %s (known: %s)" % (cmd, name, known))
    return checked
