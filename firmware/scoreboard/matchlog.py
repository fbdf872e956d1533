# Match log v1 (docs/match-log.md): JSON Lines, a header line then one action per line.
# Runs on MicroPython and CPython: the board writes logs, the host reads, replays and exports them.
#
# The reader is lenient: it reads every line, collects a problem for each bad one (by line
# number) and keeps going, so a user sees all that is wrong with a file at once.

import json

VERSION = 1

# Keys a log line carries beside the action itself; the rules never see them.
_META = ("seq", "t")


def header(game, config, players=None, started=None, **extra):
    h = {"chalk": VERSION, "game": game, "config": config, "players": players or []}
    if started is not None:
        h["started"] = started
    for k in extra:
        h[k] = extra[k]
    return h


def dumps(obj):
    """One compact JSON line (no newline), the same bytes on MicroPython and CPython."""
    return json.dumps(obj, separators=(",", ":"))


def action_line(seq, t, action):
    """The log line of an action: seq and t first, then the action's own keys."""
    rec = {"seq": seq, "t": t}
    for k in action:
        if k not in _META:
            rec[k] = action[k]
    return dumps(rec)


def strip_meta(rec):
    """The action a log line stands for, without seq and t."""
    return {k: rec[k] for k in rec if k not in _META}


def write(stream, head, actions):
    """Write a whole log: `actions` are (seq, t, action) triples."""
    stream.write(dumps(head) + "\n")
    for seq, t, action in actions:
        stream.write(action_line(seq, t, action) + "\n")


class MatchLog:
    """What a reader found: the header, the actions as (line_no, record), and the problems."""

    def __init__(self):
        self.header = None
        self.actions = []
        self.problems = []

    def problem(self, line_no, text):
        self.problems.append((line_no, text))


def check_header(h):
    """A list of what is wrong with a header dict (empty if nothing)."""
    if type(h) is not dict:
        return ["the header must be a JSON object"]
    bad = []
    v = h.get("chalk")
    if v is None:
        bad.append('the header has no "chalk" version key (is this a Chalk match log?)')
    elif type(v) is not int or v < 1:
        bad.append('"chalk" must be a positive integer version, not %s' % json.dumps(v))
    elif v > VERSION:
        bad.append("match log version %d is newer than this reader (v%d): upgrade chalk"
                   % (v, VERSION))
    if type(h.get("game")) is not str:
        from . import games

        bad.append('the header needs "game", a game id string (%s)' % ", ".join(games.IDS))
    if type(h.get("config", {})) is not dict:
        bad.append('"config" must be a JSON object')
    if type(h.get("players", [])) is not list:
        bad.append('"players" must be a JSON array')
    return bad


def read(lines, kinds=None):
    """Read a whole match log from an iterable of text lines into a MatchLog.

    `kinds`: the action kinds the game knows (besides "undo"); by default those of the header's
    game. An unknown kind is a problem of its line. Never raises for bad content.
    """
    log = MatchLog()
    for item in scan(lines, log, kinds):
        log.actions.append(item)
    return log


def scan(lines, log, kinds=None):
    """Generator behind read(): fills log.header and log.problems as it goes and yields
    (line_no, record) for each good action line, so a board can replay a long log without
    holding it in RAM."""
    from .safejson import LimitError, loads  # here: writing a log (the board) needs no parser

    last_seq = None
    first = True  # the header is the first non-blank line
    fields = None
    n = 0
    for raw in lines:
        n += 1
        text = raw.strip()
        if first and text.startswith("\ufeff"):
            text = text[1:].strip()  # a byte order mark some editors put first: accepted
        if not text:
            continue  # blank lines (a trailing newline, say) carry nothing
        try:
            rec = loads(text)
        except LimitError as e:
            log.problem(n, ("the header is " if first else "") + "not valid JSON (%s): %s"
                        % (e, _clip(text)))
            first = False
            continue
        except ValueError:
            log.problem(n, ("the header is " if first else "") + "not valid JSON: " + _clip(text))
            first = False
            continue
        if first:
            first = False
            for p in check_header(rec):
                log.problem(n, p)
            log.header = rec if type(rec) is dict else {}
            if kinds is None and not log.problems:
                kinds, fields = _kinds(log, n)
            continue
        if type(rec) is not dict:
            log.problem(n, "an action must be a JSON object: %s" % _clip(text))
            continue
        kind = rec.get("a")
        if type(kind) is not str:
            log.problem(n, 'no action kind ("a") in %s' % _clip(text))
            continue
        if kinds is not None and kind != "undo" and kind not in kinds:
            log.problem(n, "unknown action kind %s (known: %s)"
                        % (json.dumps(kind), ", ".join(tuple(kinds) + ("undo",))))
            continue
        bad = _check_fields(rec, fields.get(kind) if fields is not None else None)
        if bad:
            log.problem(n, bad)
            continue
        seq = rec.get("seq")
        if type(seq) is not int:
            log.problem(n, '"seq" must be an integer: %s' % _clip(text))
            continue
        if last_seq is not None and seq <= last_seq:
            log.problem(n, "seq %d does not follow seq %d" % (seq, last_seq))
            continue
        t = rec.get("t", 0)
        if type(t) is not int or t < 0:
            log.problem(n, '"t" must be a non-negative integer (ms since start): %s' % _clip(text))
            continue
        last_seq = seq
        yield n, rec
    if first:
        log.problem(1, "empty match log: no header line")


def _kinds(log, n):
    # (the game's action kinds, the JSON types of their keys or None)
    from .rules import ConfigError, rules_for

    try:
        cls = rules_for(log.header["game"])
    except ConfigError as e:
        log.problem(n, str(e))
        return None, None
    fields = {}
    for part in getattr(cls, "FIELDS", "").split(";"):  # "kind key:t key:t; kind ..."
        words = part.split()
        if words:
            fields[words[0]] = [w.split(":") for w in words[1:]]
    return cls.ACTIONS, fields


_TYPES = {"i": "an integer", "s": "a string", "I": "a list of integers",
          "S": "a list of strings"}


def _check_fields(rec, spec):
    """What is wrong with the JSON types of an action's keys (None if nothing): a player given
    as "one", 1.5, true or null is an unreadable line, not a move the rules refuse."""
    if not spec:
        return None
    for key, want in spec:
        if key not in rec:
            continue  # a missing key is the rules' to judge (some have defaults)
        v = rec[key]
        item = int if want in "iI" else str
        if want in "is":
            ok = type(v) is item
        else:
            ok = type(v) is list and all(type(x) is item for x in v)
        if not ok:
            return "%s must be %s, not %s" % (json.dumps(key), _TYPES[want], _clip(_dumps(v)))
    return None


def _dumps(v):
    try:
        return json.dumps(v)
    except (TypeError, ValueError):
        return repr(v)


def _clip(text, width=60):
    return text if len(text) <= width else text[: width - 3] + "..."


class LineError(Exception):
    """A log line the rules refuse: `line` is its number, `rule` the digest id broken."""

    def __init__(self, line, rule, message):
        self.line = line
        self.rule = rule
        super().__init__("line %d: %s" % (line, message))


def new_game(head):
    """The rules engine a header asks for (LineError on line 1 if it cannot be built)."""
    from .rules import ConfigError, rules_for

    try:
        return rules_for(head.get("game"))(head.get("config") or {})
    except ConfigError as e:
        raise LineError(1, "CONFIG", str(e))


def replay(log, on_step=None):
    """Fold a MatchLog's actions through its game's rules; return the game.

    `on_step(line_no, record, state)` is called after each action. The first action the rules
    refuse raises LineError naming its line and rule.
    """
    game = new_game(log.header)
    for n, rec in log.actions:
        _apply(game, n, rec, on_step)
    return game


def replay_lines(lines, on_step=None):
    """Replay a log while reading it, holding one line at a time; return the game.

    The first bad line or refused action raises LineError naming it.
    """
    log = MatchLog()
    game = None
    for n, rec in scan(lines, log):
        if log.problems:
            break
        if game is None:
            game = new_game(log.header)
        _apply(game, n, rec, on_step)
    if log.problems:
        n, text = log.problems[0]
        raise LineError(n, "LOG", text)
    return game if game is not None else new_game(log.header)


def _apply(game, n, rec, on_step):
    global _RuleError
    if _RuleError is None:
        from .rules import RuleError

        _RuleError = RuleError
    try:
        if on_step is None:
            # No state dict per action (one at the end), and the record itself becomes the
            # action: nobody else sees it.
            rec.pop("seq", None)
            rec.pop("t", None)
            game.push(game.prepare(rec))
            return
        state = game.apply(strip_meta(rec))
    except _RuleError as e:
        raise LineError(n, e.rule, str(e))
    on_step(n, rec, state)


_RuleError = None  # rules.RuleError, imported on first use (writing a log needs no rules)
