"""A long game resumes on the simulated board: 1,000 journaled actions replayed at boot within
the simulated heap, to the state the host's rules give (design: persistence)."""

import pytest

from chalk.randomgame import random_match
from chalk.sim import run_virtual
from scoreboard.journal import Journal
from scoreboard.rules import new_game
from tests.mpy import micropython_path

pytestmark = pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")


@pytest.mark.parametrize("game, accuracy", [("shove-hapenny", 0.012), ("five-pins", 0.3)])
def test_a_1000_action_game_resumes_at_boot(game, accuracy, tmp_path):
    config = {"target": 1000} if game == "five-pins" else {}
    for seed in range(200):
        head, actions = random_match(game, seed=seed, max_actions=1000, accuracy=accuracy,
                                     config=config)
        if len(actions) == 1000:
            break
    assert len(actions) == 1000
    flash = tmp_path / "flash"
    j = Journal(str(flash))  # a simulated board keeps its journal at the top of its flash
    j.boot()
    j.new_game(dict(head))
    for _seq, t, action in actions:
        j.append(dict(action, t=t))
    j.close()
    got, summary = run_virtual(game, None, flash=flash)
    want = new_game(game, head["config"])
    for _seq, _t, action in actions:
        want.apply(action)
    assert len(got) == 1000
    assert summary["state"] == want.state()
    assert summary["last_seq"] == 1001
