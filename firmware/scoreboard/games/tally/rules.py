# Tally (game id "tally"): per-player counters for the seed games with nothing to sense - caps,
# backgammon, parcheesi, or any other count (rules/other-seed-games.md, TL-1 .. TL-5).
#
# Actions: {"a":"add","player":P,"n":N} changes one count by N (TL-2), {"a":"finish"} ends the
# game (TL-4). State: {"counts":[...], "winner":null|P|"draw"}.

from ...rules.base import ConfigError, Game, RuleError, check_keys, clip, config_value

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

_WINNER = const(0)  # -1 while the game is on, -2 a draw (TL-4)
_FINISHED = const(1)  # 1 once `finish` ended the game
_COUNT0 = const(2)  # + player
_DRAW = const(-2)

KINDS = ("caps", "backgammon", "parcheesi", "custom")
MAX_PLAYERS = 9
MAX_TARGET = 1000000  # an upper bound no tally reaches; keeps the numbers small ints on a board
# Action code: bit 0 kind (0 add, 1 finish) | bits 1-4 player | bits 5-29 n + _N_OFFSET.
# |n| < 2**23 keeps every code below 2**29: a small int on a 32-bit board.
_N_OFFSET = 1 << 23


class Rules(Game):
    GAME = "tally"
    ACTIONS = ("add", "finish")
    FIELDS = "add player:i n:i"  # JSON types, for the match-log reader

    def check_config(self, config):
        check_keys(config, ("players", "target", "kind"), self.GAME)
        players = config_value(config, "players", 2, low=2)  # TL-1: 2..9 players
        if players > MAX_PLAYERS:
            raise ConfigError("config players=%d must be 2..9 (TL-1)" % players)
        target = config.get("target")
        if target is not None and (type(target) is not int or not 1 <= target <= MAX_TARGET):
            raise ConfigError("config target=%s must be null or an integer from 1 to %d (TL-1)"
                              % (clip(repr(target), 60), MAX_TARGET))
        kind = config_value(config, "kind", "custom", KINDS)
        self._players = players
        self._target = target
        return {"players": players, "target": target, "kind": kind}

    def initial(self):
        s = [0] * (_COUNT0 + self._players)
        s[_WINNER] = -1
        return s

    def _bad(self, rule, message, action):
        return RuleError(rule, message, action, self.state())

    def encode(self, action):
        if action["a"] == "finish":
            return 1
        player = action.get("player")
        if type(player) is not int or player < 0 or player >= self._players:
            raise self._bad("TL-5", "player must be 0..%d (%d players)"
                            % (self._players - 1, self._players), action)
        n = action.get("n")
        if type(n) is not int:
            raise self._bad("TL-5", "n must be a whole number (negative to take away)", action)
        if n <= -_N_OFFSET or n >= _N_OFFSET:
            raise self._bad("TL-2", "n must be between %d and %d" % (1 - _N_OFFSET,
                                                                     _N_OFFSET - 1), action)
        return player << 1 | (n + _N_OFFSET) << 5

    def decode(self, code):
        if code & 1:
            return {"a": "finish"}
        return {"a": "add", "player": code >> 1 & 15, "n": (code >> 5) - _N_OFFSET}

    def step(self, s, code):
        if s[_WINNER] != -1 or s[_FINISHED]:
            raise RuleError("TL-5", "the game is over (%s); only undo is allowed"
                            % self._result(s))
        if code & 1:
            # TL-4: the highest count wins; equal highest counts make a draw.
            s[_FINISHED] = 1
            best = -1
            winner = -1
            for p in range(self._players):
                c = s[_COUNT0 + p]
                if c > best:
                    best = c
                    winner = p
                elif c == best:
                    winner = _DRAW
            s[_WINNER] = winner
            return
        p = code >> 1 & 15
        c = s[_COUNT0 + p] + (code >> 5) - _N_OFFSET
        s[_COUNT0 + p] = c if c > 0 else 0  # TL-2: a count never goes below 0
        if self._target is not None and s[_COUNT0 + p] >= self._target:
            s[_WINNER] = p  # TL-3: the first to reach the target wins at once

    def _result(self, s):
        w = s[_WINNER]
        if w == _DRAW:
            return "a draw"
        if w >= 0:
            return "player %d won" % w
        return "finished"

    def export(self, s):
        w = s[_WINNER]
        return {"counts": s[_COUNT0:_COUNT0 + self._players],
                "winner": "draw" if w == _DRAW else (None if w < 0 else w)}

    def winner_of(self, s):
        w = s[_WINNER]
        return "draw" if w == _DRAW else (None if w < 0 else w)

    def view(self):
        """Display facts beyond the match-log state."""
        return {"target": self._target, "kind": self.config["kind"]}
