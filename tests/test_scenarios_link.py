"""`chalk test`: the shared scenario files, run over the serial link against simulated boards.

The same files test_five_pins.py and test_shove_hapenny.py run in-process and
test_micropython_rules.py runs on the unix port; here each step crosses the pseudo-terminal as
an `act` (or `inject`) command and the state the board reports is checked.
"""

import json
import shutil
from pathlib import Path

import pytest

from chalk import cli, link, remote, scenarios
from chalk.sim import Sim
from scoreboard.rules import rules_for

SCENARIOS = Path(__file__).resolve().parent / "scenarios"
GAMES = ("five-pins", "shove-hapenny", "seven-pins", "novuss")


@pytest.fixture(scope="module")
def boards(tmp_path_factory):
    """A simulated board of each game, in test mode: {game: port}."""
    sims = {}
    try:
        for game in GAMES:
            sims[game] = Sim(game, flash=tmp_path_factory.mktemp(game), test_mode=True)
            sims[game].start()
        yield {game: sim.port for game, sim in sims.items()}
    finally:
        for sim in sims.values():
            sim.stop()


def chalk(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def rows(out):
    """The table rows of `chalk test` output, by scenario name."""
    got = {}
    for line in out.splitlines()[1:-1]:
        parts = line.split()
        if parts and parts[0] != "(":
            got[parts[0]] = parts
    return got


@pytest.mark.parametrize("game", GAMES)
def test_every_shared_scenario_passes_on_the_board(boards, capsys, game):
    files = sorted((SCENARIOS / game).glob("*.json"))
    assert len(files) >= (8 if game == "novuss" else 18)
    code, out, err = chalk(capsys, "test", SCENARIOS, "--port", boards[game])
    assert code == 0, out + err
    table = rows(out)
    for f in files:
        name = "%s/%s" % (game, f.name)
        steps = len(json.loads(f.read_text())["steps"])
        assert table[name][1:3] == ["%d/%d" % (steps, steps), "pass"], out
    others = sorted(p.name for p in SCENARIOS.iterdir() if p.is_dir() and p.name != game)
    skipped = sum(len(list((SCENARIOS / o).glob("*.json"))) for o in others)
    assert out.splitlines()[-1] == (
        "%d scenarios: %d passed, 0 failed, %d skipped (%s and %s; the board plays %s)"
        % (len(files) + skipped, len(files), skipped, ", ".join(others[:-1]), others[-1],
           game))


def test_a_wrong_expectation_fails_with_a_table_naming_the_step(boards, capsys, tmp_path):
    sc = json.loads((SCENARIOS / "five-pins" / "fp-7-break-first.json").read_text())
    sc["steps"][5]["expect"]["scores"] = [0, 3]  # the board says [0, 2] (FP-9: pin 1 is 2)
    sc["steps"][6]["error"] = "FP-6"  # the board refuses it under FP-7
    bad = tmp_path / "fp-7-wrong.json"
    bad.write_text(json.dumps(sc))
    good = SCENARIOS / "five-pins" / "fp-6-alternate.json"
    code, out, err = chalk(capsys, "test", bad, good, "--port", boards["five-pins"])
    assert code == 1
    lines = out.splitlines()
    assert lines[0].split() == ["scenario", "steps", "result", "first", "problem"]
    row = next(ln for ln in lines if ln.startswith(str(bad)))
    assert " 8/10 " in row and " FAIL " in row
    assert 'step 6: {"a":"shot","player":1,"pins":"1"} -> scores is [0, 2], expected [0, 3]' \
        in row
    assert "(1 more failing steps; -v lists them)" in out
    assert next(ln for ln in lines if ln.startswith(str(good))).split()[1:3] == ["8/8", "pass"]
    assert lines[-1] == "2 scenarios: 1 passed, 1 failed"
    # -v lists every failing step, the refused action with the rule it broke.
    code, out, err = chalk(capsys, "test", bad, "-v", "--port", boards["five-pins"])
    assert code == 1
    assert "step 7: " in err and "expected a FP-6 error, got FP-7" in err


def test_a_config_the_board_refuses_is_an_error_row(boards, capsys, tmp_path):
    sc = {"name": "bad config", "game": "five-pins", "config": {"target": 0},
          "steps": [{"do": {"a": "break", "player": 0}, "expect": {"next": 0}}]}
    path = tmp_path / "bad-config.json"
    path.write_text(json.dumps(sc))
    code, out, err = chalk(capsys, "test", path, "--port", boards["five-pins"])
    assert code == 1
    assert out.splitlines()[1].split(None, 3) == [
        str(path), "-", "ERROR", "the board refused new: config target=0 must be an integer >= 1"]


def test_a_step_of_input_events_goes_through_the_sensors(boards, capsys, tmp_path):
    press = [{"t": 0, "line": "btn.confirm", "v": 1}, {"t": 100, "line": "btn.confirm", "v": 0}]
    shot = [{"t": 0, "line": "pin.1", "v": 1}, {"t": 150, "line": "pin.1", "v": 0},
            {"t": 400, "line": "btn.confirm", "v": 1}, {"t": 500, "line": "btn.confirm", "v": 0}]
    # What the rules say the break and that shot give, worked out in-process.
    game = rules_for("five-pins")({})
    after_break = game.apply({"a": "break", "player": 0})
    after_shot = game.apply({"a": "shot", "player": 0, "pins": "1", "carom": 0, "fouls": []})
    sc = {"name": "events", "game": "five-pins", "config": {}, "steps": [
        {"events": press, "expect": after_break},
        {"events": shot, "expect": after_shot},
        # a wobble shorter than min_fall_ms is no fall (FP-21): nothing happens
        {"events": [{"t": 0, "line": "pin.C", "v": 1}, {"t": 5, "line": "pin.C", "v": 0}],
         "wait_ms": 300, "expect": after_shot},
    ]}
    path = tmp_path / "events.json"
    path.write_text(json.dumps(sc))
    code, out, err = chalk(capsys, "test", path, "--port", boards["five-pins"])
    assert code == 0, out + err
    assert rows(out)[str(path)][1:3] == ["3/3", "pass"]


def test_a_board_not_in_test_mode_is_refused_with_the_hint(tmp_path, capsys):
    with Sim("five-pins", flash=tmp_path / "flash") as sim:
        with remote.connect(sim.port) as board:
            before = board.request("state")
        code, out, err = chalk(capsys, "test", SCENARIOS / "five-pins", "--port", sim.port)
        assert code == 1 and out == ""
        assert err.splitlines()[0] == ("chalk: the board on %s is not in test mode: `chalk "
                                       "test` needs it to take actions and input events from "
                                       "the host" % sim.port)
        assert '"link": {"test_mode": true}' in err and "chalk sim --test-mode" in err
        with remote.connect(sim.port) as board:
            assert board.request("state")["game_no"] == before["game_no"]  # no new game


def test_scenario_files_are_found_and_checked(tmp_path):
    found = scenarios.find([SCENARIOS])
    assert len(found) == len(list(SCENARIOS.glob("*/*.json")))
    names = [n for n, _ in found]
    assert names == sorted(names) and "five-pins/example-1.json" in names
    with pytest.raises(link.ChalkError, match="no scenario file or directory"):
        scenarios.find([tmp_path / "nope.json"])
    with pytest.raises(link.ChalkError, match="no scenario files"):
        scenarios.find([tmp_path])
    (tmp_path / "x.json").write_text('{"game": "five-pins", "steps": [{"expect": {}}]}')
    with pytest.raises(link.ChalkError, match="step 1 needs either"):
        scenarios.load(tmp_path / "x.json")
    shutil.copy(SCENARIOS / "five-pins" / "example-1.json", tmp_path / "x.json")
    assert scenarios.load(tmp_path / "x.json")["game"] == "five-pins"
    # An empty config is sent complete: the board would keep the previous game's otherwise.
    assert scenarios.full_config("five-pins", {}) == rules_for("five-pins")({}).config
    assert scenarios.full_config("five-pins", {"target": -1}) == {"target": -1}
