# The common shape of every game's rules.
#
# A game is a fold of its actions: `apply(action)` checks one action against the rules and either
# moves the state on or raises RuleError with the state untouched. `undo()` retracts the latest
# action. Runs unchanged on MicroPython and CPython, so it uses only the subset both share.
#
# Memory: a board keeps a whole match in RAM, so each applied action is stored as one small int
# (the game's `encode`), not as the action dict, in fixed blocks that also keep a checkpoint of
# the state every block (see Codes): undo refolds at most one block, boot is one pass; the
# states before the latest few actions are kept too, so undos in a row refold nothing.
# The state itself is a flat list of ints (indices are per-game constants), so copying it for an
# all-or-nothing step is one short list copy.

import json
from array import array

_BACKS = 8  # states before the latest actions kept for undo (Rules._backs)


class RuleError(Exception):
    """An action the rules do not allow. `rule` is the digest id (e.g. "SH-18")."""

    def __init__(self, rule, message, action=None, state=None):
        self.rule = rule
        self.reason = message
        self.action = action
        self.state = state
        text = rule + ": " + message
        if action is not None:
            text += "; action " + clip(json.dumps(action))
        if state is not None:
            text += "; state " + clip(json.dumps(state))
        super().__init__(text)

    def __str__(self):
        return self.args[0]


class ConfigError(ValueError):
    """A game config the rules cannot play with."""


def clip(text, width=200):
    """Text quoted in a message, cut to `width` characters: a 400-digit number or a huge key
    from a hostile file is not echoed whole."""
    return text if len(text) <= width else text[: width - 3] + "..."


def _q(value):
    return clip(json.dumps(value), 60)  # config values come from JSON: they dump


def config_value(config, key, default, allowed=None, low=None, high=None):
    """Read one config key with its default, checking it is allowed (an integer from `low` to
    `high` when those are given)."""
    value = config.get(key, default)
    if allowed is not None and value not in allowed:
        raise ConfigError(
            "config %s=%s is not one of %s" % (key, _q(value), json.dumps(list(allowed)))
        )
    if low is not None and (type(value) is not int or value < low):
        raise ConfigError("config %s=%s must be an integer >= %d" % (key, _q(value), low))
    if high is not None and value > high:
        raise ConfigError("config %s=%s must be an integer from %d to %d"
                          % (key, _q(value), low, high))
    return value


def check_keys(config, known, game):
    for key in config:
        if key not in known:
            raise ConfigError("unknown config key %s for %s (known: %s)"
                              % (_q(key), game, ", ".join(known)))


def race_winner(a, b, target):
    """A race to a target between two totals (texas 42's T42-7, domino bingo's big points):
    once either has reached `target`, the higher wins (0 or 1); equal totals play on and are
    judged the same way after the next hand. -1 while nobody has won."""
    if (a >= target or b >= target) and a != b:
        return 0 if a > b else 1
    return -1


def foul_mask(action, known, rule):
    """The bit mask of an action's `fouls` (bit i: known[i]; absent: none), or a RuleError
    citing `rule` for a value that is not a list, a code not in `known`, a code listed twice."""
    fouls = action.get("fouls", [])
    if type(fouls) is not list:
        raise RuleError(rule, "fouls must be a list of foul codes", action)
    mask = 0
    for foul in fouls:
        i = known.index(foul) if type(foul) is str and foul in known else -1
        if i < 0:
            raise RuleError(rule, "unknown foul %r (known: %s)" % (foul, ", ".join(known)),
                            action)
        if mask >> i & 1:
            raise RuleError(rule, "foul %s listed twice" % foul, action)
        mask |= 1 << i
    return mask


class Codes:
    """The encoded actions of a game, in fixed blocks of ints: a long match grows by one small
    block at a time, never by reallocating one ever larger list, which a fragmented heap of a
    board may not have room for (a 1,000-action game would need one 4 KB block).

    With `width` (the length of the game's state list), each block also keeps a checkpoint: the
    state before its first action, written into the block's tail when that action is appended.
    Going back to any point then refolds at most one block of actions from the nearest
    checkpoint, so an undo costs the same at action 10,000 as at action 100 and a journal with
    undos boots in one pass. A state that does not fit 32-bit ints is kept as a list instead.

    A code takes `words` ints of 30 bits (the game's WORDS: a code that stands alone may need
    more than one small int, as a hand of seven numbers does). On a board, spill.SpilledCodes keeps
    only the newest blocks in RAM and the others on flash."""

    _BLOCK = 128

    def __init__(self, width=0, words=1):
        self._w = width
        self._words = words
        self._blocks = []
        self._marks = []  # per block: None (checkpoint in the block's tail) or a list copy
        self._n = 0

    def _new(self):
        return array("i", bytes(4 * (self._BLOCK * self._words + self._w)))

    def append(self, code, state=None):
        """Add a code; `state` is the state before it (the checkpoint when a block starts)."""
        n = self._n
        K = self._BLOCK
        b = n // K
        i = n - b * K
        if i == 0:
            if b == len(self._blocks):
                self._blocks.append(self._new())
                self._marks.append(None)
            if self._w and state is not None:
                self._mark(b, state)
        self._put(self._blocks[b], i, code)
        self._n = n + 1

    def _put(self, blk, i, code):
        w = self._words
        if w == 1:
            blk[i] = code
            return
        for k in range(i * w, i * w + w):
            blk[k] = code & 0x3FFFFFFF
            code >>= 30

    def _mark(self, b, state):
        blk = self._blocks[b]
        base = self._BLOCK * self._words
        try:
            for j in range(self._w):
                blk[base + j] = state[j]
            ok = len(state) == self._w
            for j in range(self._w):
                if blk[base + j] != state[j]:
                    ok = False  # a port that truncated a wide int: keep an exact copy instead
        except (OverflowError, TypeError, IndexError):
            ok = False
        self._marks[b] = None if ok else list(state)

    def checkpoint(self, b):
        """A new list: the state before the action at index b * block, as appended."""
        mark = self._marks[b]
        if mark is not None:
            return list(mark)
        return list(self.block(b)[self._BLOCK * self._words:])

    def block(self, b):
        """Block b's array."""
        return self._blocks[b]

    def code(self, blk, i):
        """Code i of a block's array."""
        w = self._words
        if w == 1:
            return blk[i]
        j = i * w + w - 1
        c = blk[j]
        while j > i * w:
            j -= 1
            c = c << 30 | blk[j]
        return c

    def spill(self):
        """Move a block to flash (spill.SpilledCodes); False: nothing to move here."""
        return False

    def pop(self):
        """Drop the latest code (an undo)."""
        self._n -= 1
        while len(self._blocks) > self._n // self._BLOCK + 1:
            self._blocks.pop()  # one spare block is kept for the next action; free the rest
            self._marks.pop()

    def __len__(self):
        return self._n

    def __getitem__(self, i):
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError("no action %d of %d" % (i, self._n))
        b = i // self._BLOCK
        return self.code(self.block(b), i - b * self._BLOCK)

    def __iter__(self):
        K = self._BLOCK
        n = self._n
        for b in range(len(self._blocks)):
            blk = self.block(b)
            for i in range(K if n > K else n):
                yield self.code(blk, i)
            n -= K
            if n <= 0:
                return


class Game:
    """Base of every game. Subclasses set GAME, ACTIONS and implement the hooks below."""

    GAME = None  # game id, as in the match log header
    ACTIONS = ()  # action kinds this game understands, besides "undo"
    PLAYERS = None  # how many players (or sides) it seats: entries in a header's "players"
    FIELDS = ""  # the JSON types of its action keys, for the match-log reader ("shot player:i")
    WORDS = 1  # 30-bit ints an action's code takes (Codes)

    def __init__(self, config=None):
        self.config = self.check_config(dict(config or {}))
        self._s = self.initial()
        self._codes = Codes(len(self._s), self.WORDS)
        # The states before the latest actions, newest last, as (n, the state after the first
        # n kept actions): undos in a row take them, without refolding (at most _BACKS kept).
        self._backs = []
        self._gen = 0  # moves with every action and undo (a refill under way starts again)
        self._fill = None  # refill(): [generation, n, the state being refolded, index]

    # -- hooks a game implements -------------------------------------------------------------
    def check_config(self, config):
        """Return the full config (defaults filled in) or raise ConfigError."""
        raise NotImplementedError

    def initial(self):
        """The state (a flat list of ints) before any action."""
        raise NotImplementedError

    def encode(self, action):
        """Check an action's vocabulary and pack it into one int (RuleError if malformed)."""
        raise NotImplementedError

    def decode(self, code):
        """The action dict an encoded action stands for (inverse of encode)."""
        raise NotImplementedError

    def step(self, s, code):
        """Apply an encoded action to state list `s` in place, or raise RuleError."""
        raise NotImplementedError

    def export(self, s):
        """The state list as the match-log contract's JSON-able dict."""
        raise NotImplementedError

    def winner_of(self, s):
        """The winning side/player of state `s`, or None."""
        raise NotImplementedError

    # -- the common interface ---------------------------------------------------------------
    def apply(self, action):
        """Apply one action dict; returns the new state dict. RuleError leaves nothing changed."""
        return self.commit(self.prepare(action))

    def prepare(self, action):
        """Check an action against the rules without changing anything; return the pending step
        for commit(). A board journals the action between the two (write-ahead)."""
        if type(action) is not dict:
            raise RuleError("LOG", "an action must be a JSON object", action)
        kind = action.get("a")
        if kind == "undo":
            if not self._codes:
                raise RuleError("LOG", "nothing to undo", action, self.state())
            n = len(self._codes) - 1
            backs = self._backs
            if backs and backs[-1][0] == n:
                return (None, list(backs[-1][1]))  # the state before the latest action: kept
            return (None, self.state_at(n))
        if kind not in self.ACTIONS:
            raise RuleError(
                "LOG",
                "unknown action kind %s for %s (known: %s)"
                % (json.dumps(kind), self.GAME, ", ".join(self.ACTIONS + ("undo",))),
                action,
            )
        s = list(self._s)
        try:
            code = self.encode(action)
            self.step(s, code)
        except RuleError as e:
            # Name the offending action and the untouched state in the message.
            raise RuleError(e.rule, e.reason, action, self.state())
        return (code, s)

    def commit(self, pending):
        """Make a prepared step the current state; returns the new state dict."""
        self.push(pending)
        return self.state()

    def push(self, pending):
        """commit() without building the state dict: replay and boot, which fold many actions
        and look at the state once."""
        code, s = pending
        backs = self._backs
        self._gen += 1
        if code is None:
            self._codes.pop()  # undo: retract the latest action not already retracted
            if backs and backs[-1][0] == len(self._codes):
                backs.pop()  # that state is the current one now
        else:
            # The state before it: a checkpoint per block, and the next undo's at hand (a state
            # is never changed in place: a step works on a copy).
            if len(backs) >= _BACKS:
                backs.pop(0)
            backs.append((len(self._codes), self._s))
            self._codes.append(code, self._s)
        self._s = s

    def spill_to(self, codes):
        """Keep the codes from now on in `codes` (spill.SpilledCodes holding the same codes:
        only the newest blocks in RAM, the others on flash)."""
        if len(codes) != len(self._codes):
            raise ValueError("spill_to() needs the same codes")
        self._codes = codes

    def spill(self):
        """Move one block of codes beyond what RAM keeps to the store; False if none is due."""
        return self._codes.spill()

    def undo(self):
        """Retract the latest action not already retracted."""
        return self.apply({"a": "undo"})

    def fold(self, codes, n=None):
        """The state after the first n (default: all) encoded actions, folded from the initial
        state (what the checkpoints must agree with). Indexes rather than slices."""
        s = self.initial()
        for i in range(len(codes) if n is None else n):
            self.step(s, codes[i])
        return s

    def refill(self):
        """Between scans: when no kept state is the one before the latest action (more undos
        in a row than are kept, or a boot), it is refolded a slice a call (rules/refill.py,
        loaded then) and kept, so that the next undo takes it at once instead of refolding up
        to a block of actions in its own step. True while there is more to do."""
        backs = self._backs
        n = len(self._codes) - 1
        if n < 0 or (backs and backs[-1][0] == n):
            self._fill = None
            return False
        try:
            from .refill import step
        except MemoryError:
            return False  # no room to load it now: an undo refolds in its own step, as before
        return step(self, n, _BACKS)

    def state_at(self, n):
        """The state after the first n kept actions (0 <= n <= len), refolded from the nearest
        checkpoint at or before n: at most one block of steps, however long the game."""
        codes = self._codes
        if n == len(codes):
            return list(self._s)
        K = codes._BLOCK
        b = n // K
        if b >= len(codes._blocks) or n < 0:
            raise IndexError("no state after %d of %d actions" % (n, len(codes)))
        f = self._fill
        if f is not None and f[0] == self._gen and f[1] == n:
            s = list(f[2])  # refill() is part of the way there: on from where it is
            start = f[3]
        else:
            s = codes.checkpoint(b)
            start = 0
        blk = codes.block(b)
        step = self.step
        if codes._words == 1:
            for i in range(start, n - b * K):
                step(s, blk[i])
        else:
            for i in range(start, n - b * K):
                step(s, codes.code(blk, i))
        return s

    def state(self):
        return self.export(self._s)

    def actions(self):
        """The actions that make up the current state, oldest first (undone ones left out)."""
        return [self.decode(c) for c in self._codes]

    def __len__(self):
        return len(self._codes)

    def outcome(self):
        """None while the game is on; else {"winner": side/player, "game": id}."""
        w = self.winner_of(self._s)
        if w is None:
            return None
        return {"game": self.GAME, "winner": w}
