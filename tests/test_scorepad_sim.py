"""The scorepad end to end on the MicroPython unix port: the bundled traces (keys typed for a
whole game of texas-42, domino-bingo and tally) played on a simulated scorepad must journal the
sample logs' actions and end in their states; `chalk test` runs the three games' scenario files
over the link on one scorepad, switching game between them; `chalk sim --game` refuses a game a
board cannot play."""

import json

import pytest

from chalk import cli
from chalk.sim import Sim, run_virtual
from chalk.traces import from_matchlog
from scoreboard import matchlog
from scoreboard.rules import new_game
from tests.mpy import ROOT, micropython_path

pytestmark = pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")

SAMPLES = ROOT / "host" / "chalk" / "samples"
SCENARIOS = ROOT / "tests" / "scenarios"
GAMES = ("texas-42", "domino-bingo", "tally")


def chalk(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("game", GAMES)
def test_sample_trace_plays_the_sample_game(game, tmp_path):
    lines = (SAMPLES / (game + ".jsonl")).read_text().splitlines()
    log = matchlog.read(lines)
    config = log.header["config"]
    want = [matchlog.strip_meta(r) for _, r in log.actions]
    # The committed trace is the one the sample log makes (bench/make_samples.py).
    assert from_matchlog(lines).lines() == (SAMPLES / "traces" / (game + ".jsonl")).read_text(
        ).splitlines()
    actions, summary = run_virtual("scorepad", SAMPLES / "traces" / (game + ".jsonl"),
                                   game=game, game_config=config)
    for a in actions:
        assert type(a.pop("t")) is int
    assert actions == want
    g = new_game(game, config)
    for a in want:
        g.apply(a)
    assert summary["game"] == game and summary["config"] == config
    assert summary["state"] == g.state() and g.state()["winner"] is not None
    assert any(r.startswith("WINNER ") for r in summary["screen"]), summary["screen"]
    assert summary["warnings"] == []


def test_undo_and_refusals_typed_on_the_pad(tmp_path):
    """A hand typed wrong (took 43: T42-3), put right, scored, undone, scored again."""
    head = {"chalk": 1, "game": "texas-42", "config": {"target": 250}}
    hands = [{"a": "hand", "bidder": 0, "bid": 30, "took": 35}, {"a": "undo"},
             {"a": "hand", "bidder": 1, "bid": 84, "took": 42}]
    tr = from_matchlog([json.dumps(head)] + [json.dumps(dict(a, seq=i + 1, t=0))
                                             for i, a in enumerate(hands)])
    tr.keys("2#30#43#")  # refused on the screen: T42-3; nothing journaled
    path = tmp_path / "t.jsonl"
    tr.write(path)
    actions, summary = run_virtual("scorepad", path)
    for a in actions:
        a.pop("t")
    assert actions == hands
    assert summary["state"] == {"scores": [0, 42], "hands": 1, "winner": None}
    assert any("T42-3" in w for w in summary["warnings"]), summary


def test_chalk_test_runs_every_scorepad_scenario_on_one_board(tmp_path, capsys):
    with Sim("scorepad", flash=tmp_path / "flash", test_mode=True) as sim:
        code, out, err = chalk(capsys, "test", *[SCENARIOS / g for g in GAMES],
                               "--port", sim.port)
    assert code == 0, out + err
    files = [f for g in GAMES for f in (SCENARIOS / g).glob("*.json")]
    assert out.splitlines()[-1].startswith("%d scenarios: %d passed, 0 failed"
                                           % (len(files), len(files))), out


def test_sim_game_must_suit_the_board(capsys, tmp_path):
    code, out, err = chalk(capsys, "sim", "--virtual", "--board", "five-pins", "--game", "tally",
                           "--trace", SAMPLES / "traces" / "tally.jsonl",
                           "--flash", tmp_path / "f")
    assert code != 0 and "Traceback" not in err
    assert err.startswith("chalk: board five-pins cannot play that: ")
