# Domino bingo (game id "domino-bingo"), by the rule digest rules/domino-bingo.md (DB-1 .. DB-8).
#
# The board keeps score, not the play: one action per hand,
#   {"a":"hand","trump":0..6,"points":[a,b],"declared":[d0,d1],"big":[x,y]}
# per player: the points counted in tricks (DB-2..DB-5; together at most DB-6's total for the
# trump), the doubles declared and won (DB-8: a sum of 20, 40, 50 and 60), and the big points
# earned during the hand (bingo DB-3, emperor and invincible DB-8). A player whose points plus
# declarations reach 70 earns one more big point; the first to `big_points_to_win` (7 by default)
# with more big points than the other wins (both are the digest's interpretation).
#
# Encoding: a hand's code stands alone (the rules of any game of this config decode it): its seven
# numbers packed into two 30-bit words (WORDS = 2). The first word holds what every hand has
# (trump, both players' points, the low bits of the declarations / 10 and of the big points), so a
# usual hand's code is below 2**27, a small int even on a 32-bit board; the second word holds the
# high bits, nonzero only for hands with large declarations or several big points.
#   bits 0-2 trump | 3-10 points a | 11-18 points b | 19-21 d0/10 & 7 | 22-24 d1/10 & 7 |
#   25 x & 1 | 26 y & 1 | 27-33 d0/10 >> 3 | 34-40 d1/10 >> 3 | 41-47 x >> 1 | 48-54 y >> 1
# So a hand's declarations are at most 10230 and its big points at most 255 per player: far more
# than a hand can give (DB-7, DB-8: a player leads at most 14 tricks, each declaration is worth
# at most 60 points or 3 big points, and bingo beats a trump double at most once: 840 points, 43
# big points), so only a mistyped number is refused.

from ...rules.base import Game, RuleError, check_keys, config_value, race_winner

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

_BIG0 = const(0)  # + player
_HANDS = const(2)
_WINNER = const(3)  # -1 while the game is on
_LAST = const(4)  # + player: big points earned in the latest hand, bonus included (display only)
_SIZE = const(6)

# DB-6: the points in play by trump suit (0 = blanks .. 6 = sixes).
TOTALS = (143, 135, 138, 131, 134, 147, 140)
BONUS_AT = 70  # a hand's points + declarations reaching 70 earn one big point (interpretation)
DECLARED_MAX = 10230  # declared in one hand, per player (see Encoding above)
BIG_MAX = 255  # big points earned in one hand, per player
_HIGH = const(27)  # the high fields' first bit


def declaration_ok(d):
    """DB-8: a sum of 20, 40, 50 and 60: 0, 20, or any multiple of 10 from 40 up."""
    return type(d) is int and d >= 0 and d % 10 == 0 and d != 10 and d != 30


class Rules(Game):
    GAME = "domino-bingo"
    ACTIONS = ("hand",)
    PLAYERS = 2  # DB-1
    FIELDS = "hand trump:i points:I declared:I big:I"  # JSON types, for the match-log reader
    WORDS = 2  # a hand's code: two 30-bit words (see Encoding above)

    def check_config(self, config):
        check_keys(config, ("big_points_to_win",), self.GAME)
        to_win = config_value(config, "big_points_to_win", 7, low=1, high=1000000)
        self._to_win = to_win
        return {"big_points_to_win": to_win}

    def initial(self):
        s = [0] * _SIZE
        s[_WINNER] = -1
        return s

    def _bad(self, rule, message, action):
        return RuleError(rule, message, action, self.state())

    def _pair(self, action, key, rule):
        v = action.get(key)
        if type(v) not in (list, tuple) or len(v) != 2:
            # DB-1: two players, one number each.
            raise self._bad("DB-1", "%s must list two numbers, one per player" % key, action)
        for x in v:
            if type(x) is not int or x < 0:
                raise self._bad(rule, "%s must be whole numbers >= 0, not %s" % (key, x), action)
        return v

    def encode(self, action):
        trump = action.get("trump")
        if type(trump) is not int or trump < 0 or trump > 6:
            raise self._bad("DB-1", "trump must be the suit 0..6 (0 = blanks) the turned "
                            "domino names", action)
        points = self._pair(action, "points", "DB-6")
        if points[0] + points[1] > TOTALS[trump]:
            raise self._bad("DB-6", "points %d + %d are more than the %d in play with trump %d"
                            % (points[0], points[1], TOTALS[trump], trump), action)
        declared = action.get("declared")
        if type(declared) not in (list, tuple) or len(declared) != 2:
            raise self._bad("DB-1", "declared must list two numbers, one per player", action)
        for d in declared:
            if not declaration_ok(d):
                raise self._bad("DB-8", "declared %s is not a sum of 20, 40, 50 and 60 (doubles "
                                "declared: 2 = 20, 3 = 40, 4 = 50, 5 = 60)" % (d,), action)
        big = self._pair(action, "big", "DB-3")
        for d in declared:
            if d > DECLARED_MAX:
                raise self._bad("DB-8", "declared %d is more than one hand can give (at most %d)"
                                % (d, DECLARED_MAX), action)
        for x in big:
            if x > BIG_MAX:
                raise self._bad("DB-3", "big %d is more than one hand can give (at most %d)"
                                % (x, BIG_MAX), action)
        d0 = declared[0] // 10
        d1 = declared[1] // 10
        x, y = big
        low = (trump | points[0] << 3 | points[1] << 11 | (d0 & 7) << 19 | (d1 & 7) << 22
               | (x & 1) << 25 | (y & 1) << 26)
        high = d0 >> 3 | (d1 >> 3) << 7 | (x >> 1) << 14 | (y >> 1) << 21
        return low | high << _HIGH if high else low

    def _fields(self, code):
        """(trump, a, b, d0, d1, x, y) of a hand's code."""
        low = code & 0x7FFFFFF
        high = code >> _HIGH
        return (low & 7, low >> 3 & 255, low >> 11 & 255,
                10 * ((low >> 19 & 7) | (high & 127) << 3),
                10 * ((low >> 22 & 7) | (high >> 7 & 127) << 3),
                (low >> 25 & 1) | (high >> 14 & 127) << 1,
                (low >> 26 & 1) | (high >> 21 & 127) << 1)

    def decode(self, code):
        h = self._fields(code)
        return {"a": "hand", "trump": h[0], "points": [h[1], h[2]], "declared": [h[3], h[4]],
                "big": [h[5], h[6]]}

    def step(self, s, code):
        if s[_WINNER] >= 0:
            w = s[_WINNER]
            raise RuleError("DB-3", "game over: player %d has won %d big points to %d; only "
                            "undo is allowed" % (w, s[_BIG0 + w], s[_BIG0 + 1 - w]))
        h = self._fields(code)
        for p in (0, 1):
            earned = h[5 + p]
            if h[1 + p] + h[3 + p] >= BONUS_AT:
                earned += 1
            s[_BIG0 + p] += earned
            s[_LAST + p] = earned
        s[_HANDS] += 1
        # Once a player has reached big_points_to_win, the one with more big points wins;
        # equal plays on and is judged the same way after the next hand.
        s[_WINNER] = race_winner(s[_BIG0], s[_BIG0 + 1], self._to_win)

    def export(self, s):
        return {"big": [s[_BIG0], s[_BIG0 + 1]], "hands": s[_HANDS],
                "winner": None if s[_WINNER] < 0 else s[_WINNER]}

    def winner_of(self, s):
        return None if s[_WINNER] < 0 else s[_WINNER]

    def view(self):
        """Display facts beyond the match-log state: the goal and the latest hand's big points."""
        s = self._s
        return {"to_win": self._to_win,
                "last": [s[_LAST], s[_LAST + 1]] if s[_HANDS] else None}
