# Texas 42 (game id "texas-42"), by the rule digest rules/texas-42.md (T42-1 .. T42-7).
#
# The board keeps score, not the play: one action per hand, {"a":"hand","bidder":S,"bid":B,
# "took":N} - the bidding side (0 = players 1 and 3, 1 = players 2 and 4, T42-1), its bid (30..42,
# 84 or 168, T42-2) and the points it took (tricks + count, 0..42, T42-3; the other side took the
# rest). Scoring by T42-6, the winner by T42-7.

from ...rules.base import Game, RuleError, check_keys, config_value, race_winner

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

_SCORE0 = const(0)  # + side
_HANDS = const(2)
_WINNER = const(3)  # -1 while the game is on
_LAST = const(4)  # + side: what each side scored in the latest hand (display only)
_SIZE = const(6)

HAND_POINTS = 42  # T42-3: 35 in count dominoes + 7 tricks
BIDS = tuple(range(30, 43)) + (84, 168)  # T42-2
MARKS = (84, 168)  # T42-2: 2 or 4 marks, the same commitment as 42

# Action code: bit 0 bidder side | bits 1-4 index into BIDS | bits 5-10 points taken. < 2**11.


def hand_points(bidder, bid, took):
    """T42-6: (points of side 0, points of side 1) for one hand."""
    made = took == HAND_POINTS if bid in MARKS else took >= bid
    pts = [0, 0]
    if made:
        # T42-6: both sides score what they actually took (for 84 and 168, the 42 of the hand).
        pts[bidder] = took
        pts[1 - bidder] = HAND_POINTS - took
    else:
        # T42-6 set: the bidders score nothing; the opponents what they took plus the bid.
        pts[1 - bidder] = HAND_POINTS - took + bid
    return pts


class Rules(Game):
    GAME = "texas-42"
    ACTIONS = ("hand",)
    PLAYERS = 4  # two sides of two (T42-1)
    FIELDS = "hand bidder:i bid:i took:i"  # JSON types, for the match-log reader

    def check_config(self, config):
        check_keys(config, ("target",), self.GAME)
        target = config_value(config, "target", 250, low=1, high=10000)  # T42-7: 250 default
        self._target = target
        return {"target": target}

    def initial(self):
        s = [0] * _SIZE
        s[_WINNER] = -1
        return s

    def _bad(self, rule, message, action):
        return RuleError(rule, message, action, self.state())

    def encode(self, action):
        bidder = action.get("bidder")
        if type(bidder) is not int or bidder < 0 or bidder > 1:
            raise self._bad("T42-1", "bidder must be side 0 (players 1 and 3) or 1 (players 2 "
                            "and 4)", action)
        bid = action.get("bid")
        if type(bid) is not int or bid not in BIDS:
            raise self._bad("T42-2", "bid must be 30..42, 84 or 168", action)
        took = action.get("took")
        if type(took) is not int or took < 0 or took > HAND_POINTS:
            # T42-3: a hand is worth 42 (35 count + 7 tricks). Every total 0..42 can be made of
            # tricks and count, so the range is the whole check.
            raise self._bad("T42-3", "took must be the bidders' points 0..42 (a hand is worth "
                            "42)", action)
        return bidder | BIDS.index(bid) << 1 | took << 5

    def decode(self, code):
        return {"a": "hand", "bidder": code & 1, "bid": BIDS[code >> 1 & 15], "took": code >> 5}

    def step(self, s, code):
        if s[_WINNER] >= 0:
            raise RuleError("T42-7", "game over: side %d has won %d to %d; only undo is allowed"
                            % (s[_WINNER], s[_SCORE0 + s[_WINNER]], s[_SCORE0 + 1 - s[_WINNER]]))
        pts = hand_points(code & 1, BIDS[code >> 1 & 15], code >> 5)
        s[_SCORE0] += pts[0]
        s[_SCORE0 + 1] += pts[1]
        s[_LAST] = pts[0]
        s[_LAST + 1] = pts[1]
        s[_HANDS] += 1
        # T42-7: once a side has reached the target, the higher total wins; equal totals play
        # on, and the next hand is judged the same way.
        s[_WINNER] = race_winner(s[_SCORE0], s[_SCORE0 + 1], self._target)

    def export(self, s):
        return {"scores": [s[_SCORE0], s[_SCORE0 + 1]], "hands": s[_HANDS],
                "winner": None if s[_WINNER] < 0 else s[_WINNER]}

    def winner_of(self, s):
        return None if s[_WINNER] < 0 else s[_WINNER]

    def view(self):
        """Display facts beyond the match-log state: the target and the latest hand's points."""
        s = self._s
        return {"target": self._target,
                "last": [s[_LAST], s[_LAST + 1]] if s[_HANDS] else None}
