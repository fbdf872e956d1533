# Five pins: carom billiards with five pins, two players, sets to a target score.
# Rule digest: rules/five-pins.md (ids FP-1 .. FP-26).
#
# Actions (match log v1): {"a":"break","player":P} once, then
# {"a":"shot","player":P,"pins":"12C","carom":0|3|4,"fouls":[codes]} one per shot.
# Only what the rules can check from those actions lives here: the lag (FP-7), the foul calls
# (FP-13..FP-16) and which pins went down (FP-18..FP-23) are decided at the table.

from ...rules.base import ConfigError, Game, RuleError, check_keys, config_value

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

# Encoded action, one int (< 2**24, a small int on a 32-bit board):
#   bit 0 kind (0 break, 1 shot) | bit 1 player | bits 2-6 pins (1,2,3,4,C) |
#   bits 7-8 carom index into CAROMS | bits 9-23 fouls, bit i = FOULS[i]
PINS = "1234C"
CENTRE = 16  # pin C in the pins mask
CAROMS = (0, 3, 4)
FOULS = ("pin", "miss", "red_first", "pins_first", "wrong_ball", "ball_off", "moving", "not_tip",
         "double_hit", "push", "touch", "contact", "foot", "placing", "jump")
PIN_FOUL = 1  # FOULS[0]
RED_FIRST = 4  # FOULS[2]
PINS_FIRST = 8  # FOULS[3]
_SIDES = (0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4)  # side pins down, by mask & 15


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
    FIELDS = "break player:i; shot player:i pins:s carom:i fouls:S"

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
        pins = action.get("pins")
        if type(pins) is not str:
            self._bad("FP-2", "pins must be a string of the pins down, from \"1234C\"", action)
        mask = 0
        for ch in pins:
            i = PINS.find(ch)
            if i < 0:
                self._bad("FP-2", "unknown pin %r: the pins are 1, 2, 3, 4 and C" % ch, action)
            if mask >> i & 1:
                self._bad("FP-2", "pin %s listed twice" % ch, action)
            mask |= 1 << i
        carom = action.get("carom", 0)
        if type(carom) is not int or carom not in CAROMS:
            self._bad("FP-10", "carom must be 0, 3 or 4: only the first carom counts", action)
        fouls = action.get("fouls", [])
        if type(fouls) is not list:
            self._bad("FP-13", "fouls must be a list of foul codes", action)
        fmask = 0
        for code in fouls:
            i = FOULS.index(code) if type(code) is str and code in FOULS else -1
            if i < 0:
                self._bad("FP-13", "unknown foul %r (known: %s)" % (code, ", ".join(FOULS)),
                          action)
            if fmask >> i & 1:
                self._bad("FP-13", "foul %s listed twice" % code, action)
            fmask |= 1 << i
        # Interpretation: a pin foul (FP-14) and pins_first (FP-15) are by definition the cue
        # ball knocking pins, so a shot claiming them with no pin down is a mistaken entry.
        # Other calls are the referee's and are not second-guessed (e.g. `foot`/`placing` are
        # accepted on any shot, not only at a break or with ball in hand).
        if fmask & PIN_FOUL and not mask:
            self._bad("FP-14", "a pin foul needs the pins the cue ball knocked down", action)
        if fmask & PINS_FIRST and not mask:
            self._bad("FP-15", "pins_first needs the pins the cue ball knocked down", action)
        return 1 | player << 1 | mask << 2 | CAROMS.index(carom) << 7 | fmask << 9

    def decode(self, code):
        player = code >> 1 & 1
        if not code & 1:
            return {"a": "break", "player": player}
        pins = ""
        for i in range(5):
            if code >> (2 + i) & 1:
                pins += PINS[i]
        fouls = []
        for i in range(len(FOULS)):
            if code >> (9 + i) & 1:
                fouls.append(FOULS[i])
        return {"a": "shot", "player": player, "pins": pins, "carom": CAROMS[code >> 7 & 3],
                "fouls": fouls}

    def step(self, s, code):
        if s[WINNER] >= 0:
            w = s[WINNER]
            raise RuleError("FP-5", "match over: player %d won %d sets to %d; only undo is allowed"
                            % (w, s[SETS0 + w], s[SETS1 - w]))
        player = code >> 1 & 1
        if not code & 1:
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
        points = pin_points(code >> 2 & 31) + CAROMS[code >> 7 & 3]  # FP-11
        fouls = code >> 9
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
        if code & 1:
            player = code >> 1 & 1
            fouls = code >> 9
            v["last"] = {
                "player": player,
                "points": pin_points(code >> 2 & 31) + CAROMS[code >> 7 & 3],
                "penalty": foul_penalty(fouls, self._pin_penalty) if fouls else 0,
                "to": 1 - player if fouls else player,
                "fouls": self.decode(code)["fouls"],
            }
        if s[ENDED] >= 0:
            v["set_won"] = {"player": s[ENDED], "scores": [s[ENDED0], s[ENDED1]]}
        return v
