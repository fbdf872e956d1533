"""The rules on MicroPython: every scenario file and replayed log must give, step by step, the
same states on the micropython unix port (ESP32-sized heap) as on CPython."""

import io
import json

import pytest

from chalk.randomgame import random_match
from scoreboard import matchlog, scenario
from scoreboard.rules import RuleError, new_game
from tests.conftest import report_micropython
from tests.mpy import MP_TESTS, ROOT, run_mp

SCENARIOS = sorted((ROOT / "tests" / "scenarios").glob("*/*.json"))
SAMPLES = sorted((ROOT / "host" / "chalk" / "samples").glob("*.jsonl"))


def cpython_steps(path):
    sc = json.loads((ROOT / path).read_text())
    game = new_game(sc["game"], sc.get("config"))
    return [{"file": str(path), "step": i, "state": st, "error": err, "problems": probs}
            for i, st, err, probs in scenario.run(sc, game.apply, game.state, RuleError)]


def test_micropython_is_the_real_unix_port():
    out = run_mp(code="import sys, gc; print(sys.implementation.name, gc.mem_free() < 98304)")
    assert out.stdout.split() == ["micropython", "True"]


def test_every_scenario_gives_the_same_states_on_micropython_and_cpython():
    assert len(SCENARIOS) >= 20, "scenario files missing"
    # One MicroPython run per game, with paths relative to the checkout (its working
    # directory): the heap then holds one game's rules and a short argv, wherever the checkout
    # lies, as a board holds one game.
    games = sorted({p.parent for p in SCENARIOS})
    rel = [str(p.relative_to(ROOT)) for p in SCENARIOS]
    mp = []
    for g in games:
        files = [str(p.relative_to(ROOT)) for p in SCENARIOS if p.parent == g]
        out = run_mp(MP_TESTS / "run_scenarios.py", args=files)
        mp += [json.loads(line) for line in out.stdout.splitlines()]
    cp = [step for p in rel for step in cpython_steps(p)]
    assert len(mp) == len(cp)
    for m, c in zip(mp, cp):
        assert m == c, "MicroPython and CPython disagree at %s step %d" % (c["file"], c["step"])
    failing = [(c["file"], c["step"], c["problems"]) for c in cp if c["problems"]]
    assert failing == []
    report_micropython("scenario files, identical states on CPython (%d steps)" % len(mp),
                       len(SCENARIOS))


def replay_on_micropython(path):
    out = run_mp(MP_TESTS / "replay_log.py", args=[path], check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("game", ["shove-hapenny", "five-pins", "seven-pins", "novuss", "texas-42",
                                  "domino-bingo", "tally"])
def test_long_random_matches_replay_identically_on_micropython(game, tmp_path):
    seeds = range(4)
    for seed in seeds:
        head, actions = random_match(game, seed=seed, accuracy=0.3)
        p = tmp_path / ("%s-%d.jsonl" % (game, seed))
        with open(p, "w") as f:
            matchlog.write(f, head, actions)
        want = matchlog.replay(matchlog.read(p.read_text().splitlines())).state()
        assert replay_on_micropython(p) == want
    report_micropython("random %s matches replayed, identical final states" % game, len(seeds))


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_bundled_samples_replay_identically_on_micropython(sample):
    want = matchlog.replay_lines(io.StringIO(sample.read_text())).state()
    assert replay_on_micropython(sample) == want
    report_micropython("bundled sample %s replayed" % sample.name, 1)


def test_a_refused_action_is_reported_the_same_on_micropython(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text('{"chalk":1,"game":"five-pins","config":{}}\n'
                 '{"seq":1,"t":0,"a":"shot","player":0,"pins":"1"}\n')
    out = run_mp(MP_TESTS / "replay_log.py", args=[p], check=False)
    assert out.returncode == 1
    assert out.stdout.startswith("line 2: FP-7")
