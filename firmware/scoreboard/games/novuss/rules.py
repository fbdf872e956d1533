# Novuss (game id "novuss"), by the rule digest rules/novuss.md (NV-1..NV-7) and the match-log
# contract's novuss vocabulary, which decides where the two read differently.
#
# Two sides, each with `pucks` pucks to pocket (NV-1, NV-3). Actions (match log v1):
# {"a":"start","side":S} once, then {"a":"shot","side":S,"own":n,"opp":m,"fouls":[codes]} one per
# shot ("void":1 where the referee voided it: a third party or force majeure spoilt it, as FP-17
# rules at the pin tables: nothing counts, and the turn passes as after any shot that pockets no
# own puck, NV-6). The pocket sensors count the pucks; the fouls are the referee's buttons. Penalty
# pucks are kept as a debt and paid back onto the table as soon as the offender has pucks off it
# (NV-7).

from ...rules.base import ConfigError, Game, RuleError, check_keys, clip, config_value, foul_mask

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

# State: a flat list of ints; -1 stands for "nobody".
_LEFT0 = const(0)  # pucks of side s still on the table (_LEFT0 + s)
_LEFT1 = const(1)
_DEBT0 = const(2)  # penalty pucks side s owes (_DEBT0 + s), NV-7
_DEBT1 = const(3)
_NEXT = const(4)  # side on move; -1 before the start and once the game is won
_WINNER = const(5)  # -1 while the game is on
_SIZE = const(6)

# Encoded action, one int (< 2**19, a small int on any port):
#   shot: bit 0 = 1 | bit 1 side | bits 2-5 own | bits 6-9 opp | bits 10-17 fouls, bit i =
#         FOULS[i]
#   start: bit 0 = 0, bit 2 = 0 | bit 1 side;  void shot: bit 0 = 0, bit 2 = 1 | bit 1 side
FOULS = ("no_own_touch", "striker_pocketed", "striker_off", "direct_in_zone", "opp_off",
         "zone_ricochet", "opp_first", "own_off")
_PENALTY_FOULS = const(7)  # the first seven cost a penalty puck each (NV-7)
_DIRECT_IN_ZONE = const(8)  # FOULS[3]
_OWN_OFF = const(128)  # FOULS[7]: passes the turn, no penalty (NV-6)
_FOUL_SHIFT = const(10)
_VOID = const(4)  # bit 2 of a kind-0 code: a void shot
_MAX_PUCKS = const(8)  # NV-1: 8 pucks a side


def penalties(fouls):
    """NV-7: the penalty pucks a shot's fouls cost, one each (own_off costs none)."""
    n = 0
    for i in range(_PENALTY_FOULS):
        n += fouls >> i & 1
    return n


class Rules(Game):
    GAME = "novuss"
    ACTIONS = ("start", "shot")
    PLAYERS = 2  # sides: a side of two is a pair of names (NV-2)
    FIELDS = "start side:i; shot side:i own:i opp:i fouls:S void:i"  # JSON types (log reader)

    def check_config(self, config):
        check_keys(config, ("per_side", "pucks"), self.GAME)
        per_side = config_value(config, "per_side", 1, (1, 2), low=1)  # NV-2
        # NV-1: 8 pucks a side. Interpretation: fewer (1..8) make a shorter game on the same
        # board; more than the board holds are refused.
        pucks = config_value(config, "pucks", _MAX_PUCKS, low=1)
        if pucks > _MAX_PUCKS:
            raise ConfigError("config pucks=%s must be 1..8 (NV-1: 8 pucks a side)"
                              % clip(str(pucks), 60))
        self._pucks = pucks
        return {"per_side": per_side, "pucks": pucks}

    def initial(self):
        s = [0] * _SIZE
        s[_LEFT0] = self._pucks
        s[_LEFT1] = self._pucks
        s[_NEXT] = -1
        s[_WINNER] = -1
        return s

    def _bad(self, rule, message, action):
        raise RuleError(rule, message, action, self.state())

    def encode(self, action):
        side = action.get("side")
        if type(side) is not int or side < 0 or side > 1:
            self._bad("NV-2", "side must be 0 or 1 (two sides, NV-2)", action)
        if action.get("a") == "start":
            return side << 1
        void = action.get("void", 0)
        if type(void) is not int or void not in (0, 1):
            self._bad("NV-6", "void must be 1 (the referee voided the shot) or 0", action)
        if void:
            # A void shot counts nothing: no puck, no foul (the pucks it sent in go back).
            if action.get("own", 0) != 0 or action.get("opp", 0) != 0 or \
                    action.get("fouls", []) != []:
                self._bad("NV-6", "a void shot counts nothing: no own, opp or foul", action)
            return _VOID | side << 1
        counts = [0, 0]
        for i in range(2):
            key = ("own", "opp")[i]
            n = action.get(key, 0)
            if type(n) is not int or n < 0 or n > self._pucks:
                self._bad("NV-1", "%s must be an integer 0..%d (pucks a side)"
                          % (key, self._pucks), action)
            counts[i] = n
        fmask = foul_mask(action, FOULS, "NV-7")
        return 1 | side << 1 | counts[0] << 2 | counts[1] << 6 | fmask << _FOUL_SHIFT

    def decode(self, code):
        side = code >> 1 & 1
        if not code & 1:
            if code & _VOID:
                return {"a": "shot", "side": side, "own": 0, "opp": 0, "fouls": [], "void": 1}
            return {"a": "start", "side": side}
        fouls = []
        for i in range(len(FOULS)):
            if code >> (_FOUL_SHIFT + i) & 1:
                fouls.append(FOULS[i])
        return {"a": "shot", "side": side, "own": code >> 2 & 15, "opp": code >> 6 & 15,
                "fouls": fouls}

    def step(self, s, code):
        if s[_WINNER] >= 0:
            raise RuleError("NV-3", "game over: side %d has pocketed all its pucks; only undo "
                            "is allowed" % s[_WINNER])
        side = code >> 1 & 1
        if not code & (1 | _VOID):
            if s[_NEXT] >= 0:
                raise RuleError("NV-6", "the game has already started; start comes once")
            s[_NEXT] = side
            return
        if s[_NEXT] < 0:
            raise RuleError("NV-6", "no shot before the start: record which side shoots first")
        if side != s[_NEXT]:
            raise RuleError("NV-6", "side %d is not on move, side %d is" % (side, s[_NEXT]))
        other = 1 - side
        if not code & 1:
            s[_NEXT] = other  # a void shot pockets no own puck: the turn passes (NV-6)
            return
        own = code >> 2 & 15
        opp = code >> 6 & 15
        fouls = code >> _FOUL_SHIFT
        if own > s[_LEFT0 + side]:
            raise RuleError("NV-1", "own=%d but side %d has only %d pucks on the table"
                            % (own, side, s[_LEFT0 + side]))
        if opp > s[_LEFT0 + other]:
            raise RuleError("NV-1", "opp=%d but side %d has only %d pucks on the table"
                            % (opp, other, s[_LEFT0 + other]))
        if fouls & _DIRECT_IN_ZONE:
            own = 0  # NV-5/NV-7: the pucks pocketed by a direct shot in the zone are put back
        s[_LEFT0 + side] -= own
        s[_LEFT0 + other] -= opp
        # NV-7: the digest places a penalty puck from the offender's pocketed pucks and keeps a
        # debt only while all of them are on the table; the contract makes every penalty a debt
        # and pays it at the end of every shot as far as the side has pucks off the table,
        # whoever pocketed them. The two agree on the board; the contract's order decides.
        s[_DEBT0 + side] += penalties(fouls)
        for t in range(2):
            pay = min(s[_DEBT0 + t], self._pucks - s[_LEFT0 + t])
            s[_LEFT0 + t] += pay
            s[_DEBT0 + t] -= pay
        # NV-3: the digest's "first to pocket all its own pucks"; the contract: a side with no
        # puck left and no debt wins, whoever pocketed its last puck (an opponent pocketing it
        # loses the game), both at once the shooter's side. The contract decides.
        done_side = s[_LEFT0 + side] == 0 and s[_DEBT0 + side] == 0
        done_other = s[_LEFT0 + other] == 0 and s[_DEBT0 + other] == 0
        if done_side or done_other:
            s[_WINNER] = side if done_side else other
            s[_NEXT] = -1
            return
        # NV-6: the turn passes when the shot pockets no own puck, pockets an opponent's with its
        # own, or has any foul (own_off included, with no penalty).
        if own == 0 or opp or fouls:
            s[_NEXT] = other

    def export(self, s):
        return {
            "left": [s[_LEFT0], s[_LEFT1]],
            "debt": [s[_DEBT0], s[_DEBT1]],
            "next": None if s[_NEXT] < 0 else s[_NEXT],
            "winner": None if s[_WINNER] < 0 else s[_WINNER],
        }

    def winner_of(self, s):
        return None if s[_WINNER] < 0 else s[_WINNER]

    def view(self):
        """Display facts beyond the match-log state: the latest shot."""
        v = {"pucks": self._pucks, "per_side": self.config["per_side"], "last": None}
        code = self._codes[-1] if self._codes else 0
        if code & (1 | _VOID):
            v["last"] = self.decode(code)
            v["last"]["penalties"] = penalties(code >> _FOUL_SHIFT)
        return v
