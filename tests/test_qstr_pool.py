"""MicroPython interns every one-character str taken out of a str by its index, for good (its
qstr pool). The pool grows by doubling into one new block, and a block of 9-14 KB asked for late,
on a heap left in pieces by a long game, is not there: the board stops with a MemoryError. So
the names a board holds grow with its code, never with what a host, a player or a table sends:
hashing players' names into the chain, checking a game id or a frame type, encoding a frame."""

import os
import re

import pytest

from tests.mpy import micropython_path, run_mp

pytestmark = pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")

CODE = r'''
import micropython
from scoreboard import chain, frames, games, rules


def work(names, game, typ):
    header = {"game": "five-pins", "players": names, "note": "a \"quote\"\n\ttab \x01"}
    chain.step(chain.ZERO, chain.record(1, "H", header))
    chain.canon(header)
    frames.encode(7, "rec", {"seq": 1, "type": "H", "header": header})
    games.module_name(game)
    try:
        rules.rules_for(game)
    except rules.ConfigError:
        pass
    frames._type_ok(typ)


work(["Ann", "Bob"], "five-pins", "rec")  # every code path once: its own names interned
print("BEFORE")
micropython.qstr_info()
work(["Zo\u00eb \u00c6r\u00f8", "\u0141ukasz \u674e", "\u00df\u0153\u20ac\u00a7"],
     "\u00c6\u00d8\u00c5-\u0133", "qwxyzjk9")
work(["Q", "V", "W"], "Xq-Zv", "vvzzqq")
print("AFTER")
micropython.qstr_info()
'''


def test_what_a_host_sends_is_never_interned_on_the_board():
    # (The firmware compiled from source here, which a board never does: more than its 96k.)
    out = run_mp(code=CODE, heap="160k").stdout
    counts = [int(n) for n in re.findall(r"n_qstr=(\d+)", out)]
    assert "BEFORE" in out and "AFTER" in out and len(counts) == 2, out
    assert counts[1] == counts[0], "the board's qstr pool grew by %d names" % (
        counts[1] - counts[0])


def _changes(game):
    """A game as sensor-trace line changes [{"t", "line", "v"}], from the live power-cut test's
    table: shove ha'penny's first 12 actions (pegs, void, out of turn, undo), a whole five-pins
    match (pins falling and standing, caroms, fouls, undos); and the journal's last seq after
    it (the header, then one record an action)."""
    import random

    from chalk.randomgame import random_match
    from scoreboard.rules import new_game
    from tests.test_sim_powercut import Table, five_lines, shove_lines

    rng = random.Random(1)
    if game == "shove-hapenny":
        config = {"sides": 2, "per_side": 1, "overflow": "auto"}
        played = [a for _, _, a in random_match(game, seed=37, accuracy=0.55)[1]][:12]
    else:
        config = {"target": 30, "sets": 1, "pin_foul_penalty": 0}
        played = [a for _, _, a in random_match(game, seed=32, config=config)[1]]
    rules = new_game(game, config)
    table = Table(game, None, None)
    out = []
    t = 100
    for a in played:
        before = rules.state()
        if a["a"] == "turn" and (a.get("void") or a["side"] != before["next"]):
            a["beds"] = [0] * 9  # the scorer's pegs: none for a void or out-of-turn turn
        table.after = rules.apply(a)
        lines = (shove_lines if game == "shove-hapenny" else five_lines)(table, before, a, rng)[0]
        out += [{"t": t + dt, "line": n, "v": v} for dt, n, v in lines]
        t += max(dt for dt, _, _ in lines) + 900
    out.sort(key=lambda c: c["t"])
    return out, 1 + len(played)


def _random_changes(board):
    """Another board's game: a random one as its scorer plays it (chalk.traces), 40 actions at
    most, in the board's own config."""
    import io
    import json

    from chalk.randomgame import random_match
    from chalk.sim import board_config
    from chalk.traces import from_matchlog
    from scoreboard import matchlog

    cfg = json.loads(board_config(board).read_text())
    head, actions = random_match(cfg["game"], seed=5, max_actions=40,
                                 config=cfg.get("game_config"))
    buf = io.StringIO()
    matchlog.write(buf, head, actions)
    tr = from_matchlog(buf.getvalue().splitlines(), seed=5)
    return ([{"t": t, "line": n, "v": v} for t, n, v in sorted(tr.records, key=lambda r: r[0])],
            1 + len(actions))


@pytest.mark.parametrize("game", ["shove-hapenny", "five-pins", "seven-pins", "novuss",
                                  "scorepad"])
def test_a_game_played_and_the_hosts_commands_intern_no_name_after_boot(tmp_path, game):
    # The pool grows by doubling into one new block (14 KB here, 9 KB on an ESP32) when a name
    # passes its end: a name first interned mid-game may be the one that needs it, on a heap in
    # pieces, and the board stopped with a MemoryError after journaling an action, its record
    # never sent (the first digit of an `a` frame's seq, taken out by index; a pin id). Every
    # name a board needs in play is its code's, there from boot.
    import json
    import subprocess

    from chalk.sim import SIM_HEAP, board_config, install, micropython
    from tests.mpy import ROOT

    changes, last = _changes(game) if game in ("shove-hapenny", "five-pins") else \
        _random_changes(game)
    with open(tmp_path / "changes.jsonl", "w") as f:
        f.write("".join(json.dumps(c) + "\n" for c in changes))
    flash = tmp_path / "flash"
    install(flash, board_config(game))  # the board's .mpy files, as a live simulated board runs
    # Twice on one flash: a first boot, and a boot into the game it left (a power cut), whose
    # resync goes through a finished game too.
    for run in (1, 2):
        out = subprocess.run(
            [micropython(), "-X", "heapsize=" + SIM_HEAP,
             str(ROOT / "tests" / "mp" / "play_names.py"), "board.json", ".",
             str(tmp_path / "changes.jsonl")],
            capture_output=True, text=True, timeout=300, cwd=str(flash),
            env=dict(os.environ, MICROPYPATH=os.pathsep.join([str(flash / "lib"), str(flash)])))
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
        seqs = dict(re.findall(r"^(BOOTED|PLAYED|ASKED) (\d+)$", out.stdout, re.M))
        counts = [int(n) for n in re.findall(r"n_qstr=(\d+)", out.stdout)]
        # Every action played was journaled; the line injected after it was seen too.
        assert seqs["PLAYED"] == str(last - 1), out.stdout[-3000:]
        assert (seqs["BOOTED"] == "1") == (run == 1), out.stdout[-3000:]
        assert int(seqs["ASKED"]) >= last - 1, out.stdout[-3000:]
        replies = re.findall(r"^REPLY (\w+) (.*)$", out.stdout, re.M)
        # Every command answered; the ones play and a resync need, ok (none refused for want of
        # memory: a name the pool could not take shows there first).
        assert len(replies) == 17, out.stdout[-3000:]
        assert all({"ok", "err"} & set(r.split()) for _, r in replies), replies
        plays = ("new", "hello", "state", "journal", "inject")
        assert all("ok" in r.split() for c, r in replies if c in plays), replies
        assert not re.findall(r"^MEMORY (%s)$" % "|".join(plays), out.stdout, re.M), replies
        assert "event" in dict(replies)["inject"].split(), replies
        assert len(counts) == 3, out.stdout[-3000:]
        assert counts[1] == counts[0], "play interned %d names (boot %d)" % (
            counts[1] - counts[0], run)
        assert counts[2] == counts[0], "the host's commands interned %d names (boot %d)" % (
            counts[2] - counts[0], run)
