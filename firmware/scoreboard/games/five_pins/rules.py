# Five pins: carom billiards with five pins, two players, sets to a target score.
# Rule digest: rules/five-pins.md (ids FP-1 .. FP-26).
#
# Actions (match log v1): {"a":"break","player":P} once, then
# {"a":"shot","player":P,"pins":"12C","carom":0|3|4,"fouls":[codes]} one per shot, with, where
# the referee ruled so: "void":1 (FP-17: nothing counts), "struck":"2" (FP-22: pins the switches
# counted that are not down, not counted) and "in_contact":1 (FP-24: played from the break
# position after the balls were in contact: nothing for the shooter, fouls as ever).
# Only what the rules can check from those actions lives here: the lag (FP-7), the foul calls
# (FP-13..FP-16) and which pins went down (FP-18..FP-23) are decided at the table.

from ...rules.base import ConfigError, Game, RuleError, check_keys, config_value, foul_mask

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

# State: a flat list of ints; -1 stands for "nobody".
SCORE0 = 0  # current set's scores (SCORE0 + player)
SCORE1 = 1
SETS0 = 2  # sets won (SETS0 + player)
SETS1 = 3
SET = 4  # current set, 1-based
NEXT = 5  # player on move, -1 before the break and once the match is won
BREAKER = 6  # breaker of the current set, -1 before the break
HAND = 7  # 1 if the next shot is played with ball in hand (FP-26)
WINNER = 8  # match winner or -1
ENDED = 9  # player who won a set with the last shot, else -1 (display only)
ENDED0 = 10  # that set's final scores (display only)
ENDED1 = 11
SIZE = 12

# Encoded action, one int (< 2**30, a small int on a 32-bit board):
#   shot: bit 0 = 1 | bit 1 player | bits 2-6 pins (1,2,3,4,C) | bits 7-8 carom index into
#         CAROMS | bits 9-23 fouls, bit i = FOULS[i] | bit 24 in_contact | bits 25-29 struck
#   break: bit 0 = 0, bit 2 = 0 | bit 1 player
#   void shot (FP-17): bit 0 = 0, bit 2 = 1 | bit 1 player | bits 3-7 struck
PINS = "1234C"
# The ids as names of their own and as bytes, for code a board runs: a character taken out of a
# str (PINS[i], or iterating it) is a new name in the board's qstr pool, for good.
_PIN_IDS = ("1", "2", "3", "4", "C")
_PIN_BYTES = b"1234C"
CENTRE = 16  # pin C in the pins mask
CAROMS = (0, 3, 4)
FOULS = ("pin", "miss", "red_first", "pins_first", "wrong_ball", "ball_off", "moving", "not_tip",
         "double_hit", "push", "touch", "contact", "foot", "placing", "jump")
PIN_FOUL = 1  # FOULS[0]
RED_FIRST = 4  # FOULS[2]
PINS_FIRST = 8  # FOULS[3]
_VOID = const(4)  # bit 2 of a kind-0 code: a void shot
_IN_CONTACT = const(1 << 24)
_STRUCK = const(25)
# Side pins down, by mask & 15 (bytes: no list of ints on the heap).
_SIDES = b"\x00\x01\x01\x02\x01\x02\x02\x03\x01\x02\x02\x03\x02\x03\x03\x04"


def pins_of(mask):
    """The `pins` string of a pins mask ("12C")."""
    out = ""
    for i in range(5):
        if mask >> i & 1:
            out += _PIN_IDS[i]
    return out


def pin_points(mask):
    """FP-9: side pins 2 each; the centre 4 with a side pin, 8 alone (all five = 12)."""
    sides = _SIDES[mask & 15]
    points = 2 * sides
    if mask & CENTRE:
        points += 4 if sides else 8
    return points


def foul_penalty(fouls, pin_penalty):
    """FP-13: the penalties of a shot's fouls, added up."""
    total = 0
    i = 0
    while fouls >> i:
        if fouls >> i & 1:
            if i == 0:
                total += pin_penalty  # FP-14: no extra points unless configured
            elif i == 2:
                # FP-15 red_first: 2 for the miss + 2 for the red. Interpretation: the code
                # stands for both; `miss` listed beside it is a further foul (+2, FP-13).
                total += 4
            else:
                total += 2  # FP-15
        i += 1
    return total


MAX_TARGET = 10000
MAX_SETS = 99
MAX_PENALTY = 100


class Rules(Game):
    GAME = "five-pins"
    ACTIONS = ("break", "shot")
    PLAYERS = 2
    # The JSON type of each action key, for the match-log reader (a wrong type is an unreadable
    # line, not a rule broken): i integer, s string, I list of integers, S list of strings. A
    # string, not a dict: it costs a board's heap next to nothing.
    FIELDS = "break player:i; shot player:i pins:s carom:i fouls:S void:i struck:s in_contact:i"

    def check_config(self, config):
        check_keys(config, ("target", "sets", "pin_foul_penalty"), self.GAME)
        # Upper bounds: no table plays past them, and the numbers stay small ints on a board.
        target = config_value(config, "target", 60, low=1, high=MAX_TARGET)
        sets = config_value(config, "sets", 3, low=1, high=MAX_SETS)
        if sets % 2 == 0:
            raise ConfigError("config sets=%d must be odd (FP-5: an odd number of sets)" % sets)
        pin_penalty = config_value(config, "pin_foul_penalty", 0, low=0, high=MAX_PENALTY)
        self._target = target
        self._to_win = sets // 2 + 1
        self._pin_penalty = pin_penalty
        return {"target": target, "sets": sets, "pin_foul_penalty": pin_penalty}

    def initial(self):
        s = [0] * SIZE
        s[SET] = 1
        s[NEXT] = -1
        s[BREAKER] = -1
        s[WINNER] = -1
        s[ENDED] = -1
        return s

    def _bad(self, rule, message, action):
        # Malformed actions are caught before step(), so name the state here.
        raise RuleError(rule, message, action, self.state())

    def encode(self, action):
        player = action.get("player")
        if type(player) is not int or player < 0 or player > 1:
            self._bad("FP-1", "player must be 0 or 1 (two players, each with his own ball)", action)
        if action.get("a") == "break":
            return player << 1
        void = self._flag(action, "void", "FP-17", "the referee voided the shot")
        contact = self._flag(action, "in_contact", "FP-24", "played from the break position "
                             "after the balls were in contact")
        mask = self._pins(action, "pins", "FP-2", "the pins down", "" if void else None)
        struck = self._pins(action, "struck", "FP-22", "the pins the switches counted that "
                            "are not down", "")
        if mask & struck:
            self._bad("FP-22", "pin %s is both down and struck: a pin the referee strikes is "
                      "not down" % pins_of(mask & struck)[0], action)
        if void:
            # FP-17: a void shot is not charged and counts nothing: it carries no pins (those
            # the switches counted go in struck), no carom and no foul.
            if mask or action.get("carom", 0) != 0 or action.get("fouls", []) != [] or contact:
                self._bad("FP-17", "a void shot counts nothing: no pins (they go in struck), "
                          "carom, foul or in_contact", action)
            return _VOID | player << 1 | struck << 3
        carom = action.get("carom", 0)
        if type(carom) is not int or carom not in CAROMS:
            self._bad("FP-10", "carom must be 0, 3 or 4: only the first carom counts", action)
        fmask = foul_mask(action, FOULS, "FP-13")
        # Interpretation: a pin foul (FP-14) and pins_first (FP-15) are by definition the cue
        # ball knocking pins, so a shot claiming them with no pin down is a mistaken entry.
        # Other calls are the referee's and are not second-guessed (e.g. `foot`/`placing` are
        # accepted on any shot, not only at a break or with ball in hand).
        if fmask & PIN_FOUL and not mask:
            self._bad("FP-14", "a pin foul needs the pins the cue ball knocked down", action)
        if fmask & PINS_FIRST and not mask:
            self._bad("FP-15", "pins_first needs the pins the cue ball knocked down", action)
        return (1 | player << 1 | mask << 2 | CAROMS.index(carom) << 7 | fmask << 9
                | contact << 24 | struck << _STRUCK)

    def _flag(self, action, key, rule, what):
        value = action.get(key, 0)
        if type(value) is not int or value not in (0, 1):
            self._bad(rule, "%s must be 1 (%s) or 0" % (key, what), action)
        return value

    def _pins(self, action, key, rule, what, default=None):
        pins = action.get(key, default)
        if type(pins) is not str:
            self._bad(rule, "%s must be a string of %s, from \"1234C\"" % (key, what), action)
        where = "" if key == "pins" else " in " + key
        mask = 0
        # Over the bytes, not the characters (_PIN_IDS): a host's `act` could send any.
        raw = pins.encode()
        for k in range(len(raw)):
            i = _PIN_BYTES.find(raw[k])
            if i < 0:
                self._bad(rule, "unknown pin in %r%s: the pins are 1, 2, 3, 4 and C"
                          % (pins, where), action)
            if mask >> i & 1:
                self._bad(rule, "pin %s listed twice%s" % (_PIN_IDS[i], where), action)
            mask |= 1 << i
        return mask

    def decode(self, code):
        player = code >> 1 & 1
        if not code & 1:
            if not code & _VOID:
                return {"a": "break", "player": player}
            out = {"a": "shot", "player": player, "pins": "", "carom": 0, "fouls": [], "void": 1}
            if code >> 3:
                out["struck"] = pins_of(code >> 3)
            return out
        fouls = []
        for i in range(len(FOULS)):
            if code >> (9 + i) & 1:
                fouls.append(FOULS[i])
        out = {"a": "shot", "player": player, "pins": pins_of(code >> 2 & 31),
               "carom": CAROMS[code >> 7 & 3], "fouls": fouls}
        if code & _IN_CONTACT:
            out["in_contact"] = 1
        if code >> _STRUCK:
            out["struck"] = pins_of(code >> _STRUCK)
        return out

    def step(self, s, code):
        if s[WINNER] >= 0:
            w = s[WINNER]
            raise RuleError("FP-5", "match over: player %d won %d sets to %d; only undo is allowed"
                            % (w, s[SETS0 + w], s[SETS1 - w]))
        player = code >> 1 & 1
        if not code & (1 | _VOID):
            if s[BREAKER] >= 0:
                raise RuleError("FP-7", "the break is decided once, before the first shot; later "
                                "sets alternate it (FP-5)")
            s[BREAKER] = player
            s[NEXT] = player
            return
        if s[BREAKER] < 0:
            raise RuleError("FP-7", "no shot before the break: record who won the lag and breaks")
        if player != s[NEXT]:
            raise RuleError("FP-6", "player %d is not on move, player %d is (one shot each)"
                            % (player, s[NEXT]))
        if not code & 1:
            # FP-17: a void shot is not charged and counts nothing. Interpretation: it was the
            # shooter's one shot all the same (FP-6): the turn passes, ball in hand is spent.
            s[NEXT] = 1 - player
            s[HAND] = 0
            s[ENDED] = -1
            return
        points = pin_points(code >> 2 & 31) + CAROMS[code >> 7 & 3]  # FP-11
        fouls = code >> 9 & 0x7FFF
        if code & _IN_CONTACT and not fouls:
            # FP-24: played from the break position after the balls were in contact with no
            # legal shot: the shot scores nothing for the shooter (its fouls count, below).
            points = 0
        if fouls:
            # FP-13: all the shot's points and the penalties go to the opponent; FP-26: ball in
            # hand after any foul but a pin foul (FP-14).
            to = 1 - player
            points += foul_penalty(fouls, self._pin_penalty)
            s[HAND] = 1 if fouls & ~PIN_FOUL else 0
        else:
            to = player
            s[HAND] = 0
        s[NEXT] = 1 - player  # FP-6: a scoring shot earns no extra shot
        s[ENDED] = -1
        score = s[SCORE0 + to] + points
        if score < self._target:
            s[SCORE0 + to] = score
            return
        # FP-4: the set is won; the winner's score is capped at the target.
        s[SCORE0 + to] = self._target
        s[ENDED] = to
        s[ENDED0] = s[SCORE0]
        s[ENDED1] = s[SCORE1]
        s[SETS0 + to] += 1
        s[HAND] = 0  # Interpretation (FP-26): a new set starts from the break position.
        if s[SETS0 + to] >= self._to_win:
            # FP-5: match won. Interpretation: nobody is on move any more (next = null), and the
            # final set's scores stay on show.
            s[WINNER] = to
            s[NEXT] = -1
            return
        # FP-5: a new set; the break alternates set by set whoever won.
        s[SCORE0] = 0
        s[SCORE1] = 0
        s[SET] += 1
        s[BREAKER] = 1 - s[BREAKER]
        s[NEXT] = s[BREAKER]

    def export(self, s):
        return {
            "scores": [s[SCORE0], s[SCORE1]],
            "sets": [s[SETS0], s[SETS1]],
            "set": s[SET],
            "next": None if s[NEXT] < 0 else s[NEXT],
            "breaker": None if s[BREAKER] < 0 else s[BREAKER],
            "ball_in_hand": s[HAND] == 1,
            "winner": None if s[WINNER] < 0 else s[WINNER],
        }

    def winner_of(self, s):
        return None if s[WINNER] < 0 else s[WINNER]

    def view(self):
        """Display facts beyond the match-log state: the last shot and the set it ended."""
        s = self._s
        v = {"target": self._target, "sets_to_win": self._to_win, "last": None, "set_won": None}
        code = self._codes[-1] if self._codes else 0
        if code & _VOID and not code & 1:
            v["last"] = {"player": code >> 1 & 1, "points": 0, "penalty": 0,
                         "to": code >> 1 & 1, "fouls": [], "void": True}
        elif code & 1:
            player = code >> 1 & 1
            fouls = code >> 9 & 0x7FFF
            v["last"] = {
                "player": player,
                "points": 0 if code & _IN_CONTACT and not fouls else
                pin_points(code >> 2 & 31) + CAROMS[code >> 7 & 3],
                "penalty": foul_penalty(fouls, self._pin_penalty) if fouls else 0,
                "to": 1 - player if fouls else player,
                "fouls": self.decode(code)["fouls"],
            }
        if s[ENDED] >= 0:
            v["set_won"] = {"player": s[ENDED], "scores": [s[ENDED0], s[ENDED1]]}
        return v
