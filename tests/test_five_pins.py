"""Five pins (rules/five-pins.md, FP-1..FP-26): scenarios, rule-by-rule tests, properties."""

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoreboard import scenario
from scoreboard.games.five_pins.rules import FOULS, Rules
from scoreboard.rules import ConfigError, RuleError, new_game

SCENARIOS = sorted((Path(__file__).parent / "scenarios" / "five-pins").glob("*.json"))
KEYS = {"scores", "sets", "set", "next", "breaker", "ball_in_hand", "winner"}


def brk(p):
    return {"a": "break", "player": p}


def shot(p, pins="", carom=0, fouls=()):
    if type(fouls) is tuple:
        fouls = list(fouls)
    return {"a": "shot", "player": p, "pins": pins, "carom": carom, "fouls": fouls}


def game(config=None, breaker=0, *actions):
    g = Rules(config)
    g.apply(brk(breaker))
    for a in actions:
        g.apply(a)
    return g


def refused(g, action, rule):
    """Apply an action that must be refused with `rule`; check nothing moved."""
    before, n = g.state(), len(g)
    with pytest.raises(RuleError) as e:
        g.apply(action)
    assert e.value.rule == rule
    assert g.state() == before and len(g) == n
    return e.value


# -- (a) the scenario files --------------------------------------------------------------------


def test_scenarios_exist():
    names = {p.stem for p in SCENARIOS}
    for i in range(1, 8):
        assert "example-%d" % i in names
    for rule in ("FP-4", "FP-5", "FP-6", "FP-7", "FP-9", "FP-10", "FP-11", "FP-12", "FP-13",
                 "FP-14", "FP-15", "FP-16", "FP-26"):
        assert any(n.startswith(rule.lower() + "-") for n in names), rule


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario(path):
    sc = json.loads(path.read_text())
    assert sc["game"] == "five-pins" and sc["rules"] and sc["steps"]
    g = new_game(sc["game"], sc.get("config"))
    results = scenario.run(sc, g.apply, g.state, RuleError)
    problems = ["step %d %s: %s" % (i, json.dumps(sc["steps"][i]["do"]), "; ".join(p))
                for i, _, _, p in results if p]
    assert not problems, "\n".join(problems)


# -- (b) rule by rule --------------------------------------------------------------------------


def test_initial_state_and_exact_keys():
    g = Rules()
    assert g.state() == {"scores": [0, 0], "sets": [0, 0], "set": 1, "next": None,
                         "breaker": None, "ball_in_hand": False, "winner": None}
    g.apply(brk(1))
    assert set(g.state()) == KEYS
    assert g.outcome() is None


def test_fp1_player_must_be_0_or_1():
    g = game()
    for p in (2, -1, "0", None, True, 0.0):
        refused(g, shot(p), "FP-1")
    refused(Rules(), brk(2), "FP-1")


def test_fp2_pin_ids():
    g = game()
    for pins in ("5", "11", "c", "1 2", None, 12, ["1"]):
        refused(g, shot(0, pins), "FP-2")
    assert g.apply(shot(0, "C4"))["scores"] == [6, 0]
    assert g.actions()[-1]["pins"] == "4C"


def test_fp4_set_won_capped_at_target():
    g = game({"target": 10}, 0, shot(0, "1"), shot(1, "12", 3))
    assert g.state()["scores"] == [2, 7]
    st_ = g.apply(shot(0, "1234C"))  # 2 + 12 = 14
    assert st_["sets"] == [1, 0] and st_["set"] == 2 and st_["scores"] == [0, 0]
    assert g.view()["set_won"] == {"player": 0, "scores": [10, 7]}
    assert g.view()["last"] == {"player": 0, "points": 12, "penalty": 0, "to": 0, "fouls": []}


def test_fp4_exactly_the_target_wins():
    g = game({"target": 8, "sets": 1}, 0, shot(0, "C"))
    assert g.state()["scores"] == [8, 0] and g.state()["winner"] == 0


def test_fp4_foul_gives_the_set_to_the_opponent():
    g = game({"target": 5}, 0, shot(0, "12"), shot(1, "", 0, ["moving"]))
    assert g.state()["scores"] == [0, 0] and g.state()["sets"] == [1, 0]
    assert g.view()["set_won"] == {"player": 0, "scores": [5, 0]}


def test_fp5_break_alternates_whoever_wins():
    g = game({"target": 2, "sets": 5}, 1)
    breakers = [g.state()["breaker"]]
    for _ in range(4):  # player 0 wins every set, from the break or not
        s = g.state()
        if s["next"] == 1:
            g.apply(shot(1))
        s = g.apply(shot(0, "1"))
        if s["winner"] is not None:
            break
        breakers.append(s["breaker"])
    assert breakers == [1, 0, 1]
    s = g.state()
    assert s["winner"] == 0 and s["sets"] == [3, 0] and s["set"] == 3 and s["next"] is None
    assert s["scores"] == [2, 0]
    assert g.outcome() == {"game": "five-pins", "winner": 0}


def test_fp5_new_set_starts_clean():
    g = game({"target": 4}, 0, shot(0, "1"), shot(1, "", 0, ["miss"]))
    s = g.state()
    assert s == {"scores": [0, 0], "sets": [1, 0], "set": 2, "next": 1, "breaker": 1,
                 "ball_in_hand": False, "winner": None}


def test_fp5_match_over_refuses_all_but_undo():
    g = game({"target": 2, "sets": 1}, 0, shot(0, "1"))
    assert g.state()["winner"] == 0
    e = refused(g, shot(1, "1"), "FP-5")
    assert "match over" in str(e)
    refused(g, shot(0), "FP-5")
    refused(g, brk(0), "FP-5")
    assert g.apply({"a": "undo"})["winner"] is None


def test_fp6_one_shot_each():
    g = game()
    refused(g, shot(1, "1"), "FP-6")
    assert g.apply(shot(0, "12"))["next"] == 1  # scoring earns no extra shot
    refused(g, shot(0, "1"), "FP-6")
    assert g.apply(shot(1))["next"] == 0
    assert g.apply(shot(0, "", 0, ["miss"]))["next"] == 1


def test_fp7_break_first_and_once():
    g = Rules()
    e = refused(g, shot(0, "1"), "FP-7")
    assert "break" in e.reason
    assert g.apply(brk(1)) == {"scores": [0, 0], "sets": [0, 0], "set": 1, "next": 1,
                               "breaker": 1, "ball_in_hand": False, "winner": None}
    refused(g, brk(0), "FP-7")
    g.apply(shot(1))
    refused(g, brk(1), "FP-7")


@pytest.mark.parametrize("pins, points", [
    ("", 0), ("1", 2), ("4", 2), ("13", 4), ("123", 6), ("1234", 8), ("C", 8), ("1C", 6),
    ("C3", 6), ("12C", 8), ("C421", 10), ("1234C", 12),
])
def test_fp9_pin_values(pins, points):
    assert game(None, 0, shot(0, pins)).state()["scores"] == [points, 0]


def test_fp10_only_the_first_carom():
    g = game()
    assert g.apply(shot(0, "", 4))["scores"] == [4, 0]
    assert g.apply(shot(1, "", 3))["scores"] == [4, 3]
    for carom in (7, 1, 2, -3, "4", None, 4.0):
        refused(g, shot(0, "", carom), "FP-10")
    assert g.apply({"a": "shot", "player": 0, "pins": "1"})["scores"] == [6, 3]  # carom optional


def test_fp11_pins_plus_carom_to_the_shooter():
    g = game(None, 1)
    assert g.apply(shot(1, "12", 4))["scores"] == [0, 8]
    assert g.apply(shot(0, "3C", 3))["scores"] == [9, 8]
    assert g.apply(shot(1, "1234C", 4))["scores"] == [9, 24]


def test_fp12_valid_shot_scoring_nothing():
    g = game()
    s = g.apply({"a": "shot", "player": 0, "pins": ""})
    assert s["scores"] == [0, 0] and s["next"] == 1 and s["ball_in_hand"] is False


def test_fp13_fouls_add_up_and_all_points_go_over():
    g = game()
    assert g.apply(shot(0, "12", 4, ["touch"]))["scores"] == [0, 10]
    assert g.apply(shot(1, "", 0, ["miss", "ball_off", "double_hit"]))["scores"] == [6, 10]
    assert g.apply(shot(0, "C", 3, ["pin", "ball_off"]))["scores"] == [6, 23]
    # red_first already holds the 2 for the miss; a separate miss adds 2 more
    s = g.apply(shot(1, "1", 0, ["red_first", "miss"]))
    assert s["scores"] == [14, 23] and s["ball_in_hand"] is True
    assert g.view()["last"] == {"player": 1, "points": 2, "penalty": 6, "to": 0,
                                "fouls": ["miss", "red_first"]}


@pytest.mark.parametrize("fouls", [["miss", "miss"], ["scratch"], "miss", [None], [2], None])
def test_fp13_bad_foul_lists(fouls):
    refused(game(), shot(0, "", 0, fouls), "FP-13")


def test_fp14_pin_foul_default():
    g = game()
    s = g.apply(shot(0, "2C", 0, ["pin"]))
    assert s["scores"] == [0, 6] and s["ball_in_hand"] is False and s["next"] == 1
    s = g.apply(shot(1, "1", 3, ["pin"]))
    assert s["scores"] == [5, 6] and s["ball_in_hand"] is False


def test_fp14_pin_foul_penalty_2():
    g = game({"pin_foul_penalty": 2})
    assert g.apply(shot(0, "2C", 0, ["pin"]))["scores"] == [0, 8]
    s = g.apply(shot(1, "1", 3, ["pin"]))
    assert s["scores"] == [7, 8] and s["ball_in_hand"] is False


def test_fp14_pin_foul_needs_pins():
    refused(game(), shot(0, "", 0, ["pin"]), "FP-14")
    refused(game(), shot(0, "", 4, ["pin", "miss"]), "FP-14")


@pytest.mark.parametrize("code", [c for c in FOULS if c != "pin"])
def test_fp15_every_foul(code):
    pins = "1" if code == "pins_first" else ""
    s = game(None, 0, shot(0, pins, 0, [code])).state()
    assert s["scores"] == [0, (4 if code == "red_first" else 2) + (2 if pins else 0)]
    assert s["ball_in_hand"] is True and s["next"] == 1


def test_fp15_pins_first_needs_pins():
    refused(game(), shot(0, "", 0, ["pins_first"]), "FP-15")


def test_fp16_invalid_shots_scoring_for_the_opponent():
    g = game()
    s = g.apply(shot(0, "13", 0, ["red_first"]))  # red first, then pins
    assert s["scores"] == [0, 8] and s["ball_in_hand"] is True
    s = g.apply(shot(1, "12C", 0, ["pin"]))  # cue ball and opponent's ball both on pins
    assert s["scores"] == [8, 8] and s["ball_in_hand"] is False


def test_fp26_ball_in_hand_for_one_shot():
    g = game()
    assert g.apply(shot(0, "", 0, ["miss"]))["ball_in_hand"] is True
    assert g.apply(shot(1))["ball_in_hand"] is False
    assert g.apply(shot(0, "1", 0, ["pin"]))["ball_in_hand"] is False
    assert g.apply(shot(1, "2", 0, ["pin", "touch"]))["ball_in_hand"] is True
    assert g.apply(shot(0, "1"))["ball_in_hand"] is False


def test_fp26_new_set_clears_ball_in_hand():
    g = game({"target": 2}, 0, shot(0, "", 0, ["foot"]))
    s = g.state()
    assert s["sets"] == [0, 1] and s["ball_in_hand"] is False and s["next"] == 1


def test_worked_examples():
    assert game(None, 0, shot(0, "12")).state()["scores"] == [4, 0]  # 1
    assert game(None, 0, shot(0, "C")).state()["scores"] == [8, 0]  # 2
    assert game(None, 0, shot(0, "3", 4)).state()["scores"] == [6, 0]  # 3
    s = game(None, 0, shot(0, "", 0, ["miss"])).state()  # 4
    assert s["scores"] == [0, 2] and s["ball_in_hand"]
    assert game(None, 0, shot(0, "1", 0, ["red_first"])).state()["scores"] == [0, 6]  # 5
    s = game(None, 0, shot(0, "2C", 0, ["pin"])).state()  # 6
    assert s["scores"] == [0, 6] and not s["ball_in_hand"]


def test_example_7_from_56_to_60():
    g = game({"target": 60})
    for pins in ("1234C", "1234C", "1234C", "1234C", "C"):
        g.apply(shot(0, pins))
        g.apply(shot(1))
    assert g.state()["scores"] == [56, 0]
    s = g.apply(shot(0, "1234C"))
    assert s["sets"] == [1, 0] and s["scores"] == [0, 0] and s["set"] == 2
    assert g.view()["set_won"] == {"player": 0, "scores": [60, 0]}


# -- errors, encoding, config, undo ------------------------------------------------------------


def test_rule_error_names_rule_action_and_state():
    g = game(None, 0, shot(0, "1"))
    action = shot(0, "2")
    e = refused(g, action, "FP-6")
    text = str(e)
    assert text.startswith("FP-6: ")
    assert json.dumps(action) in text and json.dumps(g.state()) in text
    assert e.action == action and e.state == g.state()
    # vocabulary errors carry the state too
    e = refused(g, shot(1, "X"), "FP-2")
    assert json.dumps(g.state()) in str(e) and e.state == g.state()


@pytest.mark.parametrize("action", [
    shot(0), shot(1, "9"), shot(1, "", 5), shot(1, "", 0, ["nope"]), brk(1), {"a": "pot"},
    {"a": "shot"}, shot(1, "", 0, ["pin"]), shot(2), [1, 2],
])
def test_refused_action_leaves_state_and_len(action):
    g = game(None, 0, shot(0, "12"), shot(1, "C"))
    g.apply(shot(0, "", 0, ["miss"]))
    before, n, acts = g.state(), len(g), g.actions()
    with pytest.raises(RuleError):
        g.apply(action)
    assert g.state() == before and len(g) == n and g.actions() == acts


def test_unknown_keys_ignored():
    g = game()
    s = g.apply({"seq": 3, "t": 1200, "a": "shot", "player": 0, "pins": "1", "by": "tilt"})
    assert s["scores"] == [2, 0]
    assert g.actions()[-1] == shot(0, "1")


def test_decode_is_canonical():
    g = Rules()
    code = g.encode(shot(1, "C31", 3, ["jump", "miss", "pin"]))
    assert g.decode(code) == {"a": "shot", "player": 1, "pins": "13C", "carom": 3,
                              "fouls": ["pin", "miss", "jump"]}
    assert g.decode(g.encode(brk(1))) == {"a": "break", "player": 1}
    assert g.decode(g.encode({"a": "shot", "player": 0, "pins": ""})) == shot(0)


@settings(max_examples=200, deadline=None)
@given(p=st.integers(0, 1), pins=st.sets(st.sampled_from("1234C")), data=st.data(),
       carom=st.sampled_from([0, 3, 4]), fouls=st.sets(st.sampled_from(FOULS)))
def test_encode_decode_round_trip(p, pins, data, carom, fouls):
    if not pins:
        fouls -= {"pin", "pins_first"}
    order = "".join(data.draw(st.permutations(sorted(pins))))
    forder = data.draw(st.permutations(sorted(fouls)))
    g = Rules()
    code = g.encode(shot(p, order, carom, forder))
    assert type(code) is int and 0 <= code < 2 ** 24  # a small int even on a 32-bit board
    canon = shot(p, "".join(c for c in "1234C" if c in pins), carom,
                 [f for f in FOULS if f in fouls])
    assert g.decode(code) == canon
    assert g.encode(canon) == code


def test_config_defaults():
    assert Rules().config == {"target": 60, "sets": 3, "pin_foul_penalty": 0}
    assert Rules({"sets": 1, "target": 1}).config["sets"] == 1


@pytest.mark.parametrize("config", [
    {"sets": 2}, {"sets": 0}, {"sets": 4}, {"sets": "3"}, {"target": 0}, {"target": 1.5},
    {"target": None}, {"pin_foul_penalty": -1}, {"pin_foul_penalty": True}, {"targte": 60},
    {"players": 2},
])
def test_config_errors(config):
    with pytest.raises(ConfigError):
        Rules(config)


def test_undo_nothing():
    refused(Rules(), {"a": "undo"}, "LOG")


def test_undo_across_a_set_boundary():
    g = game({"target": 10}, 1, shot(1, "12"), shot(0, "C"))
    mid = g.state()
    s = g.apply(shot(1, "", 0, ["miss"]))  # 8 + 2: set 1 to player 0
    assert s["set"] == 2 and s["sets"] == [1, 0] and s["breaker"] == 0 and s["next"] == 0
    g.apply(shot(0, "1"))
    g.apply({"a": "undo"})
    assert g.state() == s
    assert g.apply({"a": "undo"}) == mid
    assert g.view()["set_won"] is None
    assert len(g) == 3


def test_undo_across_the_match_win():
    g = game({"target": 4, "sets": 1}, 0, shot(0, "1"), shot(1))
    before = g.state()
    s = g.apply(shot(0, "1"))
    assert s["winner"] == 0 and s["scores"] == [4, 0] and s["next"] is None
    assert g.apply({"a": "undo"}) == before
    assert g.outcome() is None
    assert g.apply(shot(0))["next"] == 1


def test_view():
    g = Rules({"target": 40, "sets": 5, "pin_foul_penalty": 2})
    assert g.view() == {"target": 40, "sets_to_win": 3, "last": None, "set_won": None}
    g.apply(brk(0))
    assert g.view()["last"] is None
    g.apply(shot(0, "1C", 3, ["pin", "push"]))
    assert g.view()["last"] == {"player": 0, "points": 9, "penalty": 4, "to": 1,
                                "fouls": ["pin", "push"]}


# -- (c) properties of random legal matches ----------------------------------------------------

PIN_POINTS = {"1": 2, "2": 2, "3": 2, "4": 2}


def model_points(pins, carom):
    sides = sum(PIN_POINTS[c] for c in pins if c != "C")
    centre = 0 if "C" not in pins else (4 if sides else 8)
    return sides + centre + carom


def model_penalty(fouls, pin_penalty):
    return sum(pin_penalty if f == "pin" else 4 if f == "red_first" else 2 for f in fouls)


# One step of a random match: (what, pins mask, pins order seed, carom, foul indices).
# what: 0 undo, 1 a shot out of turn, else a shot by the player on move.
STEP = st.tuples(st.integers(0, 15), st.integers(0, 31), st.integers(0, 119),
                 st.sampled_from([0, 0, 3, 4]),
                 st.one_of(st.just(()), st.lists(st.integers(0, 14), min_size=1, max_size=3)))


def random_shot(player, mask, seed, carom, foul_ids):
    pins = [c for i, c in enumerate("1234C") if mask >> i & 1]
    random.Random(seed).shuffle(pins)
    fouls = []
    for i in foul_ids:
        f = FOULS[i]
        if f not in fouls and (pins or f not in ("pin", "pins_first")):
            fouls.append(f)
    return shot(player, "".join(pins), carom, fouls)


@settings(max_examples=200, deadline=None)
@given(target=st.integers(1, 30), sets=st.sampled_from([1, 3, 5, 7]),
       pin_penalty=st.sampled_from([0, 2]), first=st.integers(0, 1),
       steps=st.lists(STEP, min_size=10, max_size=100))
def test_random_legal_matches(target, sets, pin_penalty, first, steps):
    config = {"target": target, "sets": sets, "pin_foul_penalty": pin_penalty}
    to_win = sets // 2 + 1
    g = Rules(config)
    g.apply(brk(first))
    history = [g.state()]
    for what, mask, seed, carom, foul_ids in steps:
        prev = g.state()
        if prev["winner"] is not None or (len(g) > 1 and what == 0):
            if len(g) == 1:
                break
            s = g.apply({"a": "undo"})
            history.pop()
            assert s == history[-1]
            continue
        p = prev["next"]
        if what == 1:
            refused(g, random_shot(1 - p, mask, seed, carom, foul_ids), "FP-6")
            continue
        action = random_shot(p, mask, seed, carom, foul_ids)
        s = g.apply(action)
        history.append(s)
        to = 1 - p if action["fouls"] else p
        got = model_points(action["pins"], action["carom"])
        if action["fouls"]:
            got += model_penalty(action["fouls"], pin_penalty)
        won = prev["scores"][to] + got >= target
        if not won:
            want = list(prev["scores"])
            want[to] += got
            assert s["scores"] == want and s["sets"] == prev["sets"] and s["set"] == prev["set"]
            assert s["next"] == 1 - p  # FP-6
            assert s["ball_in_hand"] == any(f != "pin" for f in action["fouls"])  # FP-26
        else:
            assert s["sets"][to] == prev["sets"][to] + 1 and not s["ball_in_hand"]
            if s["winner"] is None:
                assert s["scores"] == [0, 0] and s["set"] == prev["set"] + 1
                assert s["next"] == s["breaker"] == 1 - prev["breaker"]  # FP-5
            else:
                assert s["winner"] == to and s["scores"][to] == target  # FP-4 cap
        # invariants
        assert all(0 <= x <= target for x in s["scores"])
        assert s["breaker"] == (first if s["set"] % 2 else 1 - first)
        if s["winner"] is None:
            assert sum(s["sets"]) == s["set"] - 1 and max(s["sets"]) < to_win
            assert s["next"] in (0, 1)
        else:
            w = s["winner"]
            assert s["sets"][w] == to_win and s["sets"][1 - w] < to_win
            assert sum(s["sets"]) == s["set"] and s["next"] is None
            assert g.outcome() == {"game": "five-pins", "winner": w}
    # the state is a fold of the actions
    again = Rules(config)
    for a in g.actions():
        again.apply(a)
    assert again.state() == g.state() and len(again) == len(g)
    assert again.view() == g.view()


def test_codes_grow_in_blocks_and_shrink_on_undo():
    """A long match keeps its actions in fixed blocks (a board's fragmented heap has room for
    small blocks, not for one ever larger list); undo across block edges keeps the fold exact."""
    from scoreboard.rules.base import Codes

    c = Codes()
    K = Codes._BLOCK
    n = 4 * K + 44
    for i in range(n):
        c.append(i * 7)
    assert len(c) == n and c[0] == 0 and c[-1] == (n - 1) * 7 and list(c)[K] == K * 7
    assert list(c) == [i * 7 for i in range(n)]
    assert len(c._blocks) == 5
    for _ in range(n - (K - 1)):
        c.pop()
    assert len(c) == K - 1 and c[-1] == (K - 2) * 7 and len(c._blocks) == 1
    c.append(5)
    c.append(6)
    assert c[K - 1] == 5 and c[K] == 6 and len(c._blocks) == 2
    with pytest.raises(IndexError):
        c[K + 1]
