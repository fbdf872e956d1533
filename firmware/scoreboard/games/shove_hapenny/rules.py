# Shove ha'penny (game id "shove-hapenny"), by the rule digest rules/shove-hapenny.md (SH-1..SH-18).
#
# State: one flat list of ints, indexed by the constants below. An action is packed into one small
# int (see encode) so a board keeps a whole match in RAM as a list of ints.

from ...rules.base import Game, RuleError, check_keys, config_value

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

_BEDS = const(0)  # side s, bed b (0-based) at _BEDS + 9 * s + b; each 0..3 (SH-2)
_NEXT = const(18)  # side on move; -1 before the start (SH-5)
_TURNS = const(19)  # every turn action, void and out-of-turn ones included
_SKIP = const(20)  # + side: 1 = that side misses its next turn (SH-18)
_WINNER = const(22)  # -1 while the game is on (SH-7)
_PARTNER = const(23)  # + side: partner (0/1) who shoots that side's next turn (SH-4)
_CLAIMER = const(25)  # side that may claim the preceding turn's overflows; -1 = none (SH-15)
_PENDING = const(26)  # + bed: overflows of the latest turn (claimable with overflow="claim")
_SIZE = const(35)

_NEEDED = const(3)  # scores per bed (SH-7, SH-14)
_TARGET = const(27)  # 3 scores in each of the nine beds (SH-7)
_COINS = const(5)  # coins per player and turn (SH-3, SH-6)

# Action code: bits 0-1 kind, bit 2 side, bits 3-4 void (index into _VOIDS), bits 5+ the beds of a
# turn as base-6 digits (bed 1 lowest) or the bed of a claim. At most 5 coins keeps a turn below
# 5 * 6**8 << 5 < 2**29: a small int even on 32-bit ports (31-bit signed), never a heap long.
_START = const(0)
_TURN = const(1)
_CLAIM = const(2)
_KINDS = ("start", "turn", "claim")
_VOIDS = (None, "touched", "removed")  # SH-17
_DOWN = (8, 7, 6, 5, 4, 3, 2, 1, 0)  # beds, last first: packing as base-6 digits


def _total(s, side):
    t = 0
    base = _BEDS + 9 * side
    for b in range(9):
        t += s[base + b]
    return t


class Rules(Game):
    GAME = "shove-hapenny"
    ACTIONS = _KINDS
    PLAYERS = 2  # sides: a side of two is a pair of names (SH-4)
    # The JSON type of each action key, for the match-log reader (see rules.base.Game.FIELDS).
    FIELDS = "start side:i; turn side:i beds:I void:s; claim side:i bed:i"

    def check_config(self, config):
        check_keys(config, ("sides", "per_side", "overflow"), self.GAME)
        # `low` also demands a real int: 2.0 == 2 and True == 1 would slip through `allowed`.
        sides = config_value(config, "sides", 2, (2,), low=2)  # SH-4: two players or two pairs
        per_side = config_value(config, "per_side", 1, (1, 2), low=1)
        overflow = config_value(config, "overflow", "auto", ("auto", "claim", "off"))  # SH-15
        self._per_side = per_side
        self._overflow = overflow
        return {"sides": sides, "per_side": per_side, "overflow": overflow}

    def initial(self):
        s = [0] * _SIZE
        s[_NEXT] = -1
        s[_WINNER] = -1
        s[_CLAIMER] = -1
        return s

    # -- actions <-> ints ---------------------------------------------------------------------
    def _bad(self, rule, message, action):
        return RuleError(rule, message, action, self.state())

    def encode(self, action):
        kind = _KINDS.index(action["a"])
        side = action.get("side")
        if type(side) is not int or side < 0 or side > 1:
            raise self._bad("SH-4", "side must be 0..1", action)  # SH-4: two sides, 0 and 1
        code = kind | side << 2
        if kind == _CLAIM:
            bed = action.get("bed")
            if type(bed) is not int or bed < 1 or bed > 9:
                raise self._bad("SH-15", "a claim must name a bed 1..9", action)
            return code | bed << 5
        if kind == _START:
            return code
        beds = action.get("beds")
        if type(beds) not in (list, tuple) or len(beds) != 9:
            raise self._bad("SH-1", "beds must list the coins in each of the 9 beds", action)
        packed = 0
        total = 0
        for b in _DOWN:
            n = beds[b]
            if type(n) is not int or n < 0 or n > _COINS:
                raise self._bad("SH-3", "bed %d: coins must be an integer 0..5" % (b + 1), action)
            total += n
            packed = packed * 6 + n
        if total > _COINS:
            # SH-3/SH-6: a turn is the player's five coins, so no more than five can score.
            raise self._bad("SH-3", "%d coins in beds, a turn has only 5" % total, action)
        if "void" in action:
            void = action["void"]
            if void not in _VOIDS[1:]:
                raise self._bad("SH-17", 'void must be "touched" or "removed"', action)
            return code | _VOIDS.index(void) << 3 | packed << 5
        return code | packed << 5

    def decode(self, code):
        kind = code & 3
        action = {"a": _KINDS[kind], "side": (code >> 2) & 1}
        if kind == _CLAIM:
            action["bed"] = code >> 5
        elif kind == _TURN:
            beds = []
            packed = code >> 5
            for _ in range(9):
                beds.append(packed % 6)
                packed //= 6
            action["beds"] = beds
            void = (code >> 3) & 3
            if void:
                action["void"] = _VOIDS[void]
        return action

    # -- the rules ----------------------------------------------------------------------------
    def step(self, s, code):
        kind = code & 3
        side = (code >> 2) & 1
        if s[_WINNER] >= 0:
            raise RuleError("SH-7", "game over: side %d has won; only undo is allowed" % s[_WINNER])
        if kind == _START:
            if s[_NEXT] >= 0:
                raise RuleError("SH-5", "the game has already started; start comes once")
            s[_NEXT] = side
        elif kind == _CLAIM:
            self._claim(s, side, (code >> 5) - 1)
        else:
            self._turn(s, side, (code >> 3) & 3, code >> 5)

    def _turn(self, s, side, void, packed):
        if s[_NEXT] < 0:
            raise RuleError("SH-5", "no turn before the start (toss or preliminary round)")
        other = 1 - side
        # SH-15: overflows may be claimed only right after the turn that made them. (Pending
        # overflows are left only with a claimer, so there is nothing to clear without one.)
        if s[_CLAIMER] >= 0:
            s[_CLAIMER] = -1
            for b in range(_PENDING, _PENDING + 9):
                s[b] = 0
        s[_TURNS] += 1
        if side != s[_NEXT]:
            # SH-18: out of turn scores nothing and costs the side its next turn. A flag, not a
            # count: playing out of turn again before missing a turn still misses one turn.
            s[_SKIP + side] = 1
            return
        if packed and not void:  # SH-17: a void turn scores nothing but is a turn all the same
            self._score(s, side, packed)
        # SH-4: partners alternate within a side on the turns that side plays in turn; a missed
        # turn (SH-18) does not move the rotation on, the same partner shoots next time.
        if self._per_side > 1:
            s[_PARTNER + side] = (s[_PARTNER + side] + 1) % self._per_side
        if s[_SKIP + other]:
            # SH-18: the other side misses this turn, so the shooter goes again.
            s[_SKIP + other] = 0
            s[_NEXT] = side
        else:
            s[_NEXT] = other  # SH-6: sides alternate
        # After a win `next` still passes as usual; SH-7 refuses any further action anyway.

    def _score(self, s, side, packed):
        own = _BEDS + 9 * side
        opp = _BEDS + 9 * (1 - side)
        # SH-16: the shooter's own scores first, bed 1 to 9; SH-14: only while the bed needs them.
        # `packed` holds the beds as base-6 digits, bed 1 lowest: beds past the last coin are 0.
        over = 0
        gained = 0
        b = 0
        while packed:
            n = packed % 6
            packed //= 6
            if n:
                room = _NEEDED - s[own + b]
                if room > 0:
                    k = n if n < room else room
                    s[own + b] += k
                    gained += k
                    n -= k
                s[_PENDING + b] = n
                over += n
            b += 1
        if gained and _total(s, side) == _TARGET:
            s[_WINNER] = side  # SH-7, always by the winner's own coin
        if not over:
            return
        if self._overflow == "claim":
            s[_CLAIMER] = 1 - side  # SH-15: kept until the next turn, taken by claim actions
            return
        if self._overflow == "auto":
            # SH-15/SH-16: then the overflows, bed 1 to 9, to the opponent's same bed while it
            # needs them, never the opponent's winning score (that overflow is lost).
            opp_total = _total(s, 1 - side)
            for b in range(9):
                n = s[_PENDING + b]
                while n and s[opp + b] < _NEEDED and opp_total + 1 < _TARGET:
                    s[opp + b] += 1
                    opp_total += 1
                    n -= 1
        for b in range(_PENDING, _PENDING + 9):  # what is not credited is lost ("off": all of it)
            s[b] = 0

    def _claim(self, s, side, b):
        if self._overflow != "claim":
            raise RuleError("SH-15", 'claims need config overflow="claim" (it is "%s")'
                            % self._overflow)
        if s[_NEXT] < 0:
            raise RuleError("SH-5", "no claim before the start")
        if s[_CLAIMER] != side or not s[_PENDING + b]:
            raise RuleError("SH-15", "the preceding turn left side %d no overflow to claim in "
                            "bed %d" % (side, b + 1))
        if s[_BEDS + 9 * side + b] >= _NEEDED:
            raise RuleError("SH-15", "side %d has filled bed %d already" % (side, b + 1))
        if _total(s, side) + 1 >= _TARGET:
            raise RuleError("SH-15", "an overflow may not give the winning score; side %d must "
                            "make it with its own coin" % side)
        s[_PENDING + b] -= 1
        s[_BEDS + 9 * side + b] += 1

    # -- reading the state --------------------------------------------------------------------
    def export(self, s):
        return {
            "beds": [s[_BEDS:_BEDS + 9], s[_BEDS + 9:_BEDS + 18]],
            # Nobody is on move before the start or once the game is won (SH-5, SH-7).
            "next": None if s[_NEXT] < 0 or s[_WINNER] >= 0 else s[_NEXT],
            "turns": s[_TURNS],
            "skip": [s[_SKIP], s[_SKIP + 1]],
            "winner": None if s[_WINNER] < 0 else s[_WINNER],
        }

    def winner_of(self, s):
        return None if s[_WINNER] < 0 else s[_WINNER]

    def view(self):
        """Display facts derived from the state (not part of the match-log state).

        needed: scores each side still needs; complete: beds each side has filled;
        partner: which partner (0/1) shoots each side's next turn (always 0 with one player);
        claimable: per side, per bed, how many overflows a claim could take now (SH-15).
        """
        s = self._s
        needed = []
        complete = []
        claimable = [[0] * 9, [0] * 9]
        for side in (0, 1):
            base = _BEDS + 9 * side
            total = 0
            full = 0
            for b in range(9):
                total += s[base + b]
                if s[base + b] >= _NEEDED:
                    full += 1
            needed.append(_TARGET - total)
            complete.append(full)
            if side == s[_CLAIMER] and s[_WINNER] < 0 and total + 1 < _TARGET:
                for b in range(9):
                    claimable[side][b] = min(s[_PENDING + b], _NEEDED - s[base + b])
        return {
            "needed": needed,
            "complete": complete,
            "partner": [s[_PARTNER], s[_PARTNER + 1]],
            "claimable": claimable,
        }
