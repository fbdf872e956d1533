"""Check an archive against the rules: replay each archived game through scoreboard.rules on
CPython and compare, after its header and after every action, with the state the board
reported for that seq. The board and the host run the same rules code, so any difference is
damage (to the archive or on the board) or two versions of the rules disagreeing.
"""

import json
from collections import namedtuple

from chalk.archive import load_cell
from chalk.errors import ChalkError
from scoreboard import matchlog
from scoreboard.rules import RuleError

Difference = namedtuple("Difference", "game seq expected reported")
Difference.__doc__ = """One disagreement: game id, seq, what the replay gives (a state dict, or
the rules' refusal as text) and what the board reported (a state dict, or a note)."""

Result = namedtuple("Result", "game actions compared differences")


def verify_game(archive, game):
    """Replay one archived game (a games() row); return Result."""
    gid = game["id"]
    reported = archive.states(gid)
    diffs = []
    compared = 0
    actions = archive.actions(gid)
    if game.get("damaged"):  # a header or end cell that is not JSON any more
        return Result(game, len(actions), 0, [Difference(
            gid, game["seq"], "a readable %s" % " and ".join(game["damaged"]), "damaged")])
    try:
        rules = matchlog.new_game(game["header"])
    except matchlog.LineError as e:
        return Result(game, len(actions), 0, [Difference(gid, game["seq"], "no game: %s" % e,
                                                         reported.get(game["seq"]))])

    def compare(seq, expected):
        nonlocal compared
        if seq in reported:
            compared += 1
            if reported[seq] != expected:
                diffs.append(Difference(gid, seq, expected, reported[seq]))

    compare(game["seq"], rules.state())
    for seq, _t, line in actions:
        rec = load_cell(line)
        if rec is None:
            diffs.append(Difference(gid, seq, "a match-log line",
                                    "unreadable: %s" % str(line)[:60]))
            break
        if type(rec) is not dict or rec.get("seq") != seq:
            diffs.append(Difference(gid, seq, "a line with seq %d" % seq, line[:80]))
            break
        try:
            state = rules.apply(matchlog.strip_meta(rec))
        except RuleError as e:
            # The board applied it, the rules here refuse it: nothing after can be compared.
            diffs.append(Difference(gid, seq, "refused: %s" % e, reported.get(seq, "accepted")))
            break
        compare(seq, state)
    return Result(game, len(actions), compared, diffs)


def verify(archive, ids=None):
    """Verify the games with these ids (None: every game); a list of Result."""
    if ids:
        games = [archive.game(i) for i in ids]
    else:
        games = archive.games()
    return [verify_game(archive, g) for g in games]


def _short(v):
    # Both sides with sorted keys, so a person can compare them by eye.
    return v if isinstance(v, str) else json.dumps(v, separators=(",", ":"), sort_keys=True)


def report(results):
    """The lines a person reads: one per game, one per difference."""
    out = []
    for r in results:
        g = r.game
        what = "ok" if not r.differences else "%d difference%s" % (
            len(r.differences), "" if len(r.differences) == 1 else "s")
        out.append("game %d (%s #%s on %s): %d actions, %d reported states compared: %s" % (
            g["id"], g["game"], g["game_no"], g["device"], r.actions, r.compared, what))
        for d in r.differences:
            out.append("  game %d seq %d: expected %s, reported %s" % (
                d.game, d.seq, _short(d.expected), _short(d.reported)))
    return out


def check(results):
    """ChalkError if any result has a difference."""
    bad = [r for r in results if r.differences]
    if bad:
        n = sum(len(r.differences) for r in bad)
        raise ChalkError("%d difference%s between the archive and the rules in %d game%s" % (
            n, "" if n == 1 else "s", len(bad), "" if len(bad) == 1 else "s"),
            "a difference means a damaged archive, a damaged journal on the board, or a board "
            "running other rules than this chalk (`chalk deploy` updates it)")
