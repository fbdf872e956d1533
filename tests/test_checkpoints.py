"""Undo from checkpoints: the state kept in each block of encoded actions must give exactly what
a full refold from the initial state gives, at every point of every game, after any run of
undos; on CPython and on the MicroPython unix port."""

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chalk.randomgame import GAMES
from scoreboard.rules import RuleError, new_game
from scoreboard.rules.base import Codes, Game
from tests.conftest import report_micropython
from tests.mpy import MP_TESTS, run_mp

GAME_IDS = sorted(GAMES)
# ops: ("act", seed) plays a random legal-looking action; ("undo", n) retracts up to n actions.
OPS = st.lists(st.one_of(st.tuples(st.just("act"), st.integers(0, 2 ** 16)),
                         st.tuples(st.just("undo"), st.integers(1, 12))),
               min_size=1, max_size=120)


LONG = {"target": 100000, "big_points_to_win": 10000, "start": 10000000}


def config_of(game_id):
    from scoreboard.rules import ConfigError

    cfg = dict(GAMES[game_id][0])
    for key in LONG:  # long games: many blocks before anyone wins, as far as the config allows
        if cfg.get(key) is not None:
            for v in (LONG[key], LONG[key] // 10, LONG[key] // 100):
                try:
                    new_game(game_id, dict(cfg, **{key: v}))
                except ConfigError:
                    continue
                cfg[key] = v
                break
    return cfg


def play(game_id, ops, accuracy=0.3):
    """The game after `ops`, and the action list (undos included) that made it."""
    _, opening, make = GAMES[game_id]
    g = new_game(game_id, config_of(game_id))
    done = []
    if opening is not None:
        g.apply(opening)
        done.append(opening)
    for op, arg in ops:
        if op == "undo":
            for _ in range(min(arg, len(g))):
                g.apply({"a": "undo"})
                done.append({"a": "undo"})
            continue
        if not len(g) and opening is not None:
            g.apply(opening)  # undone back to before the start: start again
            done.append(opening)
            continue
        if g.outcome() is not None or (opening is not None and g.state().get("next") is None):
            continue
        action = make(random.Random(arg), g.state(), accuracy)
        try:
            g.apply(action)
        except RuleError:
            continue
        done.append(action)
    return g, done


def assert_checkpoints_agree(g):
    codes = list(g._codes)
    assert g._s == g.fold(codes)
    for k in range(len(codes) + 1):
        assert g.state_at(k) == g.fold(codes, k), "state after %d actions" % k


@pytest.fixture
def small_blocks(monkeypatch):
    # Blocks of 4 put a checkpoint every few actions, so short games cross many of them.
    monkeypatch.setattr(Codes, "_BLOCK", 4)


@pytest.mark.parametrize("game_id", GAME_IDS)
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_checkpoint_undo_equals_full_refold(small_blocks, game_id, ops):
    g, _ = play(game_id, ops)
    assert_checkpoints_agree(g)
    # and undoing all the way back goes through the same states a refold gives
    codes = list(g._codes)
    while len(g):
        n = len(g)
        want = g.export(g.fold(codes, n - 1))
        assert g.apply({"a": "undo"}) == want
        assert_checkpoints_agree(g)


@pytest.mark.parametrize("game_id", GAME_IDS)
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS, calls=st.lists(st.integers(0, 40), min_size=1, max_size=30))
def test_the_state_refilled_between_scans_is_the_refold_and_an_undo_takes_it(small_blocks,
                                                                            game_id, ops, calls):
    # The main loop refills (Game.refill) a slice a pass, between the host's commands and the
    # players' actions: stopped after any number of calls, or run to its end, an undo gives what
    # a full refold gives; run to its end, the undo takes the kept state and refolds nothing.
    g, _ = play(game_id, ops)
    for k in calls:
        if not len(g):
            break
        for _ in range(k):
            if not g.refill():
                break
        codes = list(g._codes)
        n = len(g)
        if k >= 40:  # (always more than a block of 4 takes): refilled to its end
            assert not g.refill() and g._backs and g._backs[-1][0] == n - 1
            g.state_at = None  # (what an undo refolds with when no state is kept: not called)
            pending = g.prepare({"a": "undo"})
            del g.state_at
            assert g.export(pending[1]) == g.export(g.fold(codes, n - 1))
        want = g.export(g.fold(codes, n - 1))
        assert g.apply({"a": "undo"}) == want
        assert_checkpoints_agree(g)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_long_game_with_undos_at_the_real_block_size(game_id):
    rng = random.Random(7)
    ops = [("undo", rng.randint(1, 40)) if rng.random() < 0.02 else ("act", rng.randrange(2 ** 16))
           for _ in range(1500)]
    g, _ = play(game_id, ops, accuracy=0.02)
    if g.outcome() is not None and len(g) <= 2 * Codes._BLOCK:
        pytest.skip("%s: a random game ends after %d actions (the small-block test covers it)"
                    % (game_id, len(g)))
    assert len(g) > 2 * Codes._BLOCK
    assert_checkpoints_agree(g)


def test_a_state_too_wide_for_32_bit_ints_is_kept_as_a_list():
    class Wide(Game):
        GAME = "wide"
        ACTIONS = ("add",)

        def check_config(self, config):
            return config

        def initial(self):
            return [0, 0]

        def encode(self, action):
            return action["n"]

        def decode(self, code):
            return {"a": "add", "n": code}

        def step(self, s, code):
            s[0] += code * 2 ** 40  # beyond an array("i") slot
            s[1] += 1

        def export(self, s):
            return {"s": list(s)}

        def winner_of(self, s):
            return None

    g = Wide()
    for i in range(3 * Codes._BLOCK + 5):
        g.apply({"a": "add", "n": i % 5})
    assert None not in g._codes._marks[1:]  # every checkpoint but the initial one is a list
    assert_checkpoints_agree(g)
    g.undo()
    assert_checkpoints_agree(g)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_checkpoint_undo_on_micropython(game_id, tmp_path):
    rng = random.Random(3)
    ops = [("undo", rng.randint(1, 9)) if rng.random() < 0.15 else ("act", rng.randrange(2 ** 16))
           for _ in range(160)]
    Codes_block = Codes._BLOCK
    try:
        Codes._BLOCK = 5
        g, done = play(game_id, ops)
        want = []
        replay = new_game(game_id, config_of(game_id))
        for a in done:
            want.append({"state": replay.apply(a), "len": len(replay)})
    finally:
        Codes._BLOCK = Codes_block
    p = tmp_path / "ops.jsonl"
    p.write_text("\n".join(json.dumps(x) for x in
                           [{"game": game_id, "config": config_of(game_id)}] + done) + "\n")
    out = run_mp(MP_TESTS / "checkpoint_check.py", args=[p, 5])
    got = [json.loads(line) for line in out.stdout.splitlines()]
    assert got == want
    assert sum(1 for a in done if a["a"] == "undo") >= 5
    report_micropython("%s: checkpoint undo == full refold after each of %d actions"
                       % (game_id, len(done)), len(done))


def test_a_refill_with_no_room_to_load_gives_up_and_the_undo_refolds_itself(monkeypatch):
    # rules/refill.py is loaded the first time a refill is due, from the main loop: a heap with
    # no room for it then must cost the board nothing but the refill (never the loop's end).
    import sys

    class NoRoom:
        def __getattr__(self, name):
            raise MemoryError("memory allocation failed, allocating 512 bytes")

    g, _ = play("five-pins", [("act", s) for s in range(40)] + [("undo", 12)])
    codes = list(g._codes)
    monkeypatch.setitem(sys.modules, "scoreboard.rules.refill", NoRoom())
    backs = list(g._backs)
    assert not (backs and backs[-1][0] == len(g) - 1)  # (12 undos, 8 kept: a refill is due)
    assert g.refill() is False and g._backs == backs  # given up, nothing changed
    assert g.apply({"a": "undo"}) == g.export(g.fold(codes, len(codes) - 1))
