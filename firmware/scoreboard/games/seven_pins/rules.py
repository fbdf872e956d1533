# Seven pins on a pyramid table (game id "seven-pins"), by the rule digest rules/seven-pins.md
# (SP-1..SP-16) and the match-log contract's seven-pins vocabulary, which decides where the two
# read differently.
#
# Count-down: each player starts at `start` and writes points off; legal knock-downs write off,
# penalties add (SP-3, SP-4). Actions (match log v1): {"a":"break","player":P} once, then
# {"a":"shot","player":P,"pins":["M1","K",...],"pocketed":0..2,"carom":0|1,"called":0|1,
#  "fouls":[codes]} one per shot, with, where the referee ruled so, "void":1 (a third party or
# force majeure spoilt the shot, as FP-17: nothing counts, the turn passes, SP-9) and
# "struck":[pins] (pins the switches counted that are not down, as FP-22: not counted). Which
# ball knocked a pin, cushions first or not, a carom made:
# those are decided at the table (by the tilt switches, pocket sensors and the referee's buttons);
# the rules take them as given and do the arithmetic and the turn.

from ...rules.base import ConfigError, Game, RuleError, check_keys, config_value, foul_mask

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

# State: a flat list of ints; -1 stands for "nobody".
_TOTAL0 = const(0)  # totals still to write off (_TOTAL0 + player)
_TOTAL1 = const(1)
_NEXT = const(2)  # player on move; -1 before the break and once the game is won
_WINNER = const(3)  # -1 while the game is on
_LAST = const(4)  # display only: how the latest shot moved its shooter's total (+ adds, - off)
_SIZE = const(5)

# Encoded action, one int (< 2**25, a small int on any port):
#   shot: bit 0 = 1 | bit 1 player | bits 2-8 pins, bit i = PINS[i] | bits 9-10 pocketed |
#         bit 11 carom | bit 12 called | bits 13-17 fouls, bit i = FOULS[i] | bits 18-24 struck
#   break: bit 0 = 0, bit 2 = 0 | bit 1 player
#   void shot: bit 0 = 0, bit 2 = 1 | bit 1 player | bits 3-9 struck
PINS = ("K", "S1", "S2", "S3", "S4", "M1", "M3")
_K = const(1)
_SMALL = 2 | 4 | 8 | 16
_CENTRAL = _K | _SMALL
_ALL = const(127)
FOULS = ("cue_pins", "off_table", "miss", "cue_pocketed", "no_cushion")
_CUE_PINS = const(1)
_OFF_TABLE = const(2)
_PENALTY = _CUE_PINS | _OFF_TABLE  # SP-8, SP-13: the shot's sum is added, not written off
_MISS = const(4)
_CUE_POCKETED = const(8)
_FOUL_SHIFT = const(13)
_FOUL_BITS = const(31)
_VOID = const(4)  # bit 2 of a kind-0 code: a void shot
_STRUCK = const(18)


def pin_ids(mask):
    """The `pins` list of a pins mask, in PINS' order."""
    out = []
    for i in range(len(PINS)):
        if mask >> i & 1:
            out.append(PINS[i])
    return out


def _first(mask):
    i = 0
    while not mask >> i & 1:
        i += 1
    return i


def pin_points(mask):
    """SP-5: M1, M3 30 each; S1-S4 5 each; the king 25 with a small pin down, 50 with none;
    the king and all four small pins 100 for those five (the medium pins add their 30)."""
    points = 0
    if mask & 32:
        points += 30
    if mask & 64:
        points += 30
    if mask & _CENTRAL == _CENTRAL:
        return points + 100
    small = (mask >> 1 & 1) + (mask >> 2 & 1) + (mask >> 3 & 1) + (mask >> 4 & 1)
    points += 5 * small
    if mask & _K:
        points += 25 if small else 50
    return points


def shot_sum(code):
    """The contract's sum of a shot: pins (SP-5) + 5 per pocketed ball (SP-10) + 5 for a carom
    (SP-11)."""
    return pin_points(code >> 2 & _ALL) + 5 * (code >> 9 & 3) + 5 * (code >> 11 & 1)


def extra_penalty(code):
    """The 5-point additions of SP-11/SP-12 that come in any shot: `miss`, `cue_pocketed` and a
    called carom not made, 5 each."""
    fouls = code >> _FOUL_SHIFT & _FOUL_BITS
    n = (fouls >> 2 & 1) + (fouls >> 3 & 1)
    if code >> 12 & 1 and not code >> 11 & 1:
        n += 1
    return 5 * n


class Rules(Game):
    GAME = "seven-pins"
    ACTIONS = ("break", "shot")
    PLAYERS = 2
    # JSON types, for the match-log reader (see rules.base.Game.FIELDS)
    FIELDS = ("break player:i; shot player:i pins:S pocketed:i carom:i called:i fouls:S "
              "void:i struck:S")

    def check_config(self, config):
        check_keys(config, ("start",), self.GAME)
        start = config_value(config, "start", 300, low=5, high=100000)
        if start % 5:
            # SP-3 with SP-5: every value is a multiple of 5, so is the agreed total.
            raise ConfigError("config start=%d must be a multiple of 5 (SP-3), e.g. 300 or 500"
                              % start)
        self._start = start
        return {"start": start}

    def initial(self):
        s = [0] * _SIZE
        s[_TOTAL0] = self._start
        s[_TOTAL1] = self._start
        s[_NEXT] = -1
        s[_WINNER] = -1
        return s

    def _bad(self, rule, message, action):
        # Malformed actions are caught before step(), so name the state here.
        raise RuleError(rule, message, action, self.state())

    def _count(self, action, key, high, rule, what):
        value = action.get(key, 0)
        if type(value) is not int or value < 0 or value > high:
            self._bad(rule, "%s must be an integer 0..%d (%s)" % (key, high, what), action)
        return value

    def encode(self, action):
        player = action.get("player")
        if type(player) is not int or player < 0 or player > 1:
            self._bad("SP-3", "player must be 0 or 1 (two players, each with his own total)",
                      action)
        if action.get("a") == "break":
            return player << 1
        void = action.get("void", 0)
        if type(void) is not int or void not in (0, 1):
            self._bad("SP-9", "void must be 1 (the referee voided the shot) or 0", action)
        mask = self._pins(action, "pins")
        struck = self._pins(action, "struck")
        if mask & struck:
            self._bad("SP-2", "pin %s is both down and struck: a pin the referee strikes is "
                      "not down" % PINS[_first(mask & struck)], action)
        if void:
            # Interpretation (FP-17 at this table): a void shot counts nothing, so it carries
            # no pins (those the switches counted go in struck), balls, carom, call or foul.
            counted = [k for k, none in (("pocketed", 0), ("carom", 0), ("called", 0),
                                         ("fouls", [])) if action.get(k, none) != none]
            if mask or counted:
                self._bad("SP-9", "a void shot counts nothing: no pins (they go in struck), "
                          "balls, carom, call or foul", action)
            return _VOID | player << 1 | struck << 3
        pocketed = self._count(action, "pocketed", 2, "SP-10", "two object balls, SP-1")
        carom = self._count(action, "carom", 1, "SP-11", "the cue ball hit both object balls")
        called = self._count(action, "called", 1, "SP-11", "a carom was announced")
        fmask = foul_mask(action, FOULS, "SP-4")
        return (1 | player << 1 | mask << 2 | pocketed << 9 | carom << 11 | called << 12
                | fmask << _FOUL_SHIFT | struck << _STRUCK)

    def _pins(self, action, key):
        pins = action.get(key, [])
        if type(pins) is not list:
            self._bad("SP-2", "%s must be a list of the pins %s, ids K, S1-S4, M1, M3"
                      % (key, "down" if key == "pins" else "struck"), action)
        mask = 0
        for pin in pins:
            i = PINS.index(pin) if type(pin) is str and pin in PINS else -1
            if i < 0:
                self._bad("SP-2", "unknown pin %r: the pins are K, S1, S2, S3, S4, M1 and M3"
                          % (pin,), action)
            if mask >> i & 1:
                self._bad("SP-2", "pin %s listed twice (each pin once)" % pin, action)
            mask |= 1 << i
        return mask

    def decode(self, code):
        player = code >> 1 & 1
        if not code & 1:
            if not code & _VOID:
                return {"a": "break", "player": player}
            out = {"a": "shot", "player": player, "pins": [], "pocketed": 0, "carom": 0,
                   "called": 0, "fouls": [], "void": 1}
            if code >> 3:
                out["struck"] = pin_ids(code >> 3)
            return out
        fouls = []
        for i in range(len(FOULS)):
            if code >> (_FOUL_SHIFT + i) & 1:
                fouls.append(FOULS[i])
        out = {"a": "shot", "player": player, "pins": pin_ids(code >> 2 & _ALL),
               "pocketed": code >> 9 & 3, "carom": code >> 11 & 1, "called": code >> 12 & 1,
               "fouls": fouls}
        if code >> _STRUCK:
            out["struck"] = pin_ids(code >> _STRUCK)
        return out

    def step(self, s, code):
        if s[_WINNER] >= 0:
            raise RuleError("SP-3", "game over: player %d reached 0; only undo is allowed"
                            % s[_WINNER])
        player = code >> 1 & 1
        if not code & (1 | _VOID):
            if s[_NEXT] >= 0:
                raise RuleError("SP-15", "the break comes once, before the first shot")
            s[_NEXT] = player
            s[_LAST] = 0
            return
        if s[_NEXT] < 0:
            raise RuleError("SP-15", "no shot before the break: record who breaks")
        if player != s[_NEXT]:
            raise RuleError("SP-9", "player %d is not on move, player %d is (a series goes on "
                            "until the shooter scores nothing or fouls)" % (player, s[_NEXT]))
        if not code & 1:
            # A void shot counts nothing: no pin knocked down legally, so the series ends and
            # the turn passes (SP-9).
            s[_LAST] = 0
            s[_NEXT] = 1 - player
            return
        fouls = code >> _FOUL_SHIFT & _FOUL_BITS
        total = s[_TOTAL0 + player]
        points = shot_sum(code)
        all_seven = code >> 2 & _ALL == _ALL
        if not fouls:
            if all_seven:
                # SP-6: all seven pins in one legal shot win at once, whatever the total.
                s[_LAST] = -total
                s[_TOTAL0 + player] = 0
                s[_WINNER] = player
                s[_NEXT] = -1
                return
            change = -points  # SP-4: a legal shot writes its sum off
        elif fouls & _PENALTY:
            # SP-8, SP-13: a penalty shot adds its sum once (both fouls together add it once).
            # SP-8's digest adds "the pins' value"; the contract adds the whole sum (pocketed
            # balls and a carom too), and the contract decides.
            # SP-6: all seven in a penalty shot add the starting total in its place. The digest
            # says "with a foul"; the contract limits it to penalty shots (cue_pins/off_table),
            # and the contract decides: all seven with only miss/cue_pocketed/no_cushion add
            # nothing for the pins.
            change = self._start if all_seven else points
        else:
            # Contract: a shot with only miss, cue_pocketed or no_cushion writes nothing off
            # (SP-7: pins without the cushion do not count).
            change = 0
        # SP-11, SP-12: 5 each, in any shot. SP-12's digest has the miss "+5" on its own; the
        # contract adds it in any shot beside whatever else the shot does, and decides.
        change += extra_penalty(code)
        s[_LAST] = change
        total += change
        if total <= 0:
            # SP-3: the first to reach 0 wins. The digest says "reach 0"; the contract lets a
            # total go below 0 and win, shown as 0, and decides.
            s[_TOTAL0 + player] = 0
            s[_WINNER] = player
            s[_NEXT] = -1
            return
        s[_TOTAL0 + player] = total
        # SP-9: the digest keeps the series going while a pin is knocked down legally; the
        # contract keeps it after a shot with no foul, no missed call and a sum above 0 (so a
        # pocketed ball or a carom alone goes on too, as SP-10 and SP-11 say), and decides.
        # SP-14's "play on from the position" is the non-offender's choice at the table and is
        # not modelled (contract).
        missed_call = code >> 12 & 1 and not code >> 11 & 1
        if fouls or missed_call or points <= 0:
            s[_NEXT] = 1 - player

    def export(self, s):
        return {
            "totals": [s[_TOTAL0], s[_TOTAL1]],
            "next": None if s[_NEXT] < 0 else s[_NEXT],
            "winner": None if s[_WINNER] < 0 else s[_WINNER],
        }

    def winner_of(self, s):
        return None if s[_WINNER] < 0 else s[_WINNER]

    def view(self):
        """Display facts beyond the match-log state: the latest shot and what it did."""
        v = {"start": self._start, "last": None}
        code = self._codes[-1] if self._codes else 0
        if code & 1:
            v["last"] = {"player": code >> 1 & 1, "sum": shot_sum(code),
                         "change": self._s[_LAST], "fouls": self.decode(code)["fouls"]}
        return v
