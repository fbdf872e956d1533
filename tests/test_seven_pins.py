"""Seven pins (rules/seven-pins.md, SP-1..SP-16, and the match-log contract): scenarios,
rule-by-rule tests, properties of random games."""

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoreboard import scenario
from scoreboard.games.seven_pins.rules import FOULS, PINS, Rules
from scoreboard.rules import ConfigError, RuleError, new_game

SCENARIOS = sorted((Path(__file__).parent / "scenarios" / "seven-pins").glob("*.json"))
ALL7 = ["K", "S1", "S2", "S3", "S4", "M1", "M3"]


def brk(p):
    return {"a": "break", "player": p}


def shot(p, pins=(), pocketed=0, carom=0, called=0, fouls=()):
    return {"a": "shot", "player": p, "pins": list(pins), "pocketed": pocketed, "carom": carom,
            "called": called, "fouls": list(fouls)}


def game(config=None, breaker=0, *actions):
    g = Rules(config)
    g.apply(brk(breaker))
    for a in actions:
        g.apply(a)
    return g


def refused(g, action, rule):
    before, n = g.state(), len(g)
    with pytest.raises(RuleError) as e:
        g.apply(action)
    assert e.value.rule == rule
    assert g.state() == before and len(g) == n
    return e.value


# -- (a) the scenario files --------------------------------------------------------------------


def test_scenarios_exist():
    names = {p.stem for p in SCENARIOS}
    for i in range(1, 5):
        assert "example-%d" % i in names
    for rule in ("SP-2", "SP-3", "SP-5", "SP-6", "SP-7", "SP-8", "SP-9", "SP-10", "SP-11",
                 "SP-12", "SP-13", "SP-15"):
        assert any(n.startswith(rule.lower() + "-") for n in names), rule


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario(path):
    sc = json.loads(path.read_text())
    assert sc["game"] == "seven-pins" and sc["rules"] and sc["steps"]
    g = new_game(sc["game"], sc.get("config"))
    results = scenario.run(sc, g.apply, g.state, RuleError)
    problems = ["step %d %s: %s" % (i, json.dumps(sc["steps"][i]["do"]), "; ".join(p))
                for i, _, _, p in results if p]
    assert not problems, "\n".join(problems)


# -- (b) rule by rule --------------------------------------------------------------------------


def test_initial_state_and_exact_keys():
    g = Rules()
    assert g.state() == {"totals": [300, 300], "next": None, "winner": None}
    assert g.config == {"start": 300}
    g.apply(brk(1))
    assert g.state() == {"totals": [300, 300], "next": 1, "winner": None}
    assert g.outcome() is None


@pytest.mark.parametrize("config", [
    {"start": 0}, {"start": -5}, {"start": 3}, {"start": 301}, {"start": 300.0}, {"start": "300"},
    {"start": True}, {"start": None}, {"strat": 300}, {"players": 2},
])
def test_sp3_config_errors(config):
    with pytest.raises(ConfigError):
        Rules(config)


def test_sp3_config_accepts_multiples_of_5():
    assert Rules({"start": 5}).state()["totals"] == [5, 5]
    assert Rules({"start": 500}).config == {"start": 500}


@pytest.mark.parametrize("pins, points", [
    ([], 0), (["S1"], 5), (["S4", "S2"], 10), (["M1"], 30), (["M3", "M1"], 60), (["K"], 50),
    (["K", "S3"], 30), (["K", "S1", "S2", "S3"], 40), (["K", "S1", "S2", "S3", "S4"], 100),
    (["K", "M1"], 80), (["K", "S2", "M3"], 60), (["S1", "S2", "S3", "S4"], 20),
    (["K", "S1", "S2", "S3", "S4", "M1"], 130), (["S1", "S2", "S3", "S4", "M1", "M3"], 80),
])
def test_sp5_pin_values(pins, points):
    g = game({"start": 1000})
    assert g.apply(shot(0, pins))["totals"][0] == 1000 - points


def test_sp5_pocketed_and_carom_add_to_the_sum():
    g = game({"start": 300})
    assert g.apply(shot(0, ["K"], pocketed=2, carom=1))["totals"] == [235, 300]
    assert g.view()["last"] == {"player": 0, "sum": 65, "change": -65, "fouls": []}


def test_sp6_all_seven_legal_wins_from_any_total():
    g = game({"start": 500})
    s = g.apply(shot(0, reversed(ALL7)))
    assert s == {"totals": [0, 500], "next": None, "winner": 0}
    assert g.outcome() == {"game": "seven-pins", "winner": 0}
    assert g.view()["last"]["change"] == -500


def test_sp6_all_seven_in_a_penalty_shot_adds_start():
    for fouls in (["cue_pins"], ["off_table"], ["cue_pins", "off_table"]):
        g = game({"start": 300}, 0)
        assert g.apply(shot(0, ALL7, pocketed=2, carom=1, fouls=fouls))["totals"] == [600, 300]
    g = game({"start": 300}, 0)
    s = g.apply(shot(0, ALL7, called=1, fouls=["cue_pins", "miss", "cue_pocketed"]))
    assert s["totals"] == [615, 300] and s["next"] == 1


def test_sp7_only_non_penalty_fouls_write_nothing_off():
    g = game()
    assert g.apply(shot(0, ["M1", "M3"], 2, 1, 0, ["no_cushion"])) == {
        "totals": [300, 300], "next": 1, "winner": None}


def test_sp8_sp13_penalty_adds_the_sum_once():
    g = game()
    assert g.apply(shot(0, ["K", "S1"], 1, 0, 0, ["cue_pins", "off_table"]))["totals"] == [
        335, 300]


def test_sp9_series_continues_only_on_a_clean_scoring_shot():
    g = game({}, 0, shot(0, ["S1"]))
    assert g.state()["next"] == 0
    assert g.apply(shot(0, pocketed=1))["next"] == 0
    assert g.apply(shot(0, carom=1, called=1))["next"] == 0
    assert g.apply(shot(0, ["M1"], called=1))["next"] == 1  # a missed call passes the turn
    assert g.apply(shot(1))["next"] == 0  # nothing scored
    refused(g, shot(1, ["K"]), "SP-9")


def test_sp11_sp12_five_each_in_any_shot():
    g = game()
    s = g.apply(shot(0, ["M1"], called=1, fouls=["miss", "cue_pocketed"]))
    assert s["totals"] == [315, 300] and s["next"] == 1
    s = g.apply(shot(1, ["M1"], called=1, fouls=["cue_pins", "cue_pocketed"]))
    assert s["totals"] == [315, 340]


def test_sp3_total_at_or_below_zero_wins_shown_zero():
    g = game({"start": 10})
    s = g.apply(shot(0, ["M1"]))
    assert s == {"totals": [0, 10], "next": None, "winner": 0}
    for a in (shot(0, ["S1"]), shot(1, ["S1"]), brk(0)):
        refused(g, a, "SP-3")
    assert g.apply({"a": "undo"}) == {"totals": [10, 10], "next": 0, "winner": None}


def test_sp15_break_first_once_and_undoable():
    g = Rules()
    refused(g, shot(0, ["K"]), "SP-15")
    refused(g, {"a": "undo"}, "LOG")
    g.apply(brk(0))
    refused(g, brk(1), "SP-15")
    assert g.apply({"a": "undo"})["next"] is None and len(g) == 0


@pytest.mark.parametrize("action, rule", [
    (shot(2), "SP-3"), (shot(-1), "SP-3"), (shot(True), "SP-3"), (shot(0.0), "SP-3"),
    ({"a": "shot"}, "SP-3"),
    (shot(0, ["K", "K"]), "SP-2"), (shot(0, ["S5"]), "SP-2"), (shot(0, ["k"]), "SP-2"),
    ({"a": "shot", "player": 0, "pins": "K"}, "SP-2"), (shot(0, [1]), "SP-2"),
    (shot(0, pocketed=3), "SP-10"), (shot(0, pocketed=-1), "SP-10"),
    (shot(0, pocketed=1.0), "SP-10"), (shot(0, carom=2), "SP-11"), (shot(0, carom=True), "SP-11"),
    (shot(0, called=-1), "SP-11"), (shot(0, fouls=["pin"]), "SP-4"),
    (shot(0, fouls=["miss", "miss"]), "SP-4"),
    ({"a": "shot", "player": 0, "fouls": "miss"}, "SP-4"),
])
def test_malformed_shots_refused_with_their_rule(action, rule):
    e = refused(game(), action, rule)
    assert str(e).startswith(rule + ": ") and "state" in str(e)


def test_omitted_keys_default_to_nothing():
    g = game()
    assert g.apply({"a": "shot", "player": 0, "seq": 3, "t": 5, "note": "x"})["next"] == 1
    assert g.actions()[-1] == shot(0)


def test_decode_is_canonical():
    g = Rules()
    code = g.encode(shot(1, ["M3", "K", "S2"], 2, 1, 1, ["no_cushion", "cue_pins"]))
    assert g.decode(code) == shot(1, ["K", "S2", "M3"], 2, 1, 1, ["cue_pins", "no_cushion"])
    assert g.decode(g.encode(brk(1))) == brk(1)


@settings(max_examples=200, deadline=None)
@given(p=st.integers(0, 1), pins=st.sets(st.sampled_from(PINS)), pocketed=st.integers(0, 2),
       carom=st.integers(0, 1), called=st.integers(0, 1), fouls=st.sets(st.sampled_from(FOULS)),
       data=st.data())
def test_encode_decode_round_trip(p, pins, pocketed, carom, called, fouls, data):
    g = Rules()
    order = data.draw(st.permutations(sorted(pins)))
    forder = data.draw(st.permutations(sorted(fouls)))
    code = g.encode(shot(p, order, pocketed, carom, called, forder))
    assert type(code) is int and 0 <= code < 2 ** 18
    canon = shot(p, [q for q in PINS if q in pins], pocketed, carom, called,
                 [f for f in FOULS if f in fouls])
    assert g.decode(code) == canon and g.encode(canon) == code


# -- (c) properties of random games --------------------------------------------------------------

VALUE = {"M1": 30, "M3": 30, "S1": 5, "S2": 5, "S3": 5, "S4": 5}


def model(start, total, pins, pocketed, carom, called, fouls):
    """The contract's arithmetic, written out again: (new total, series goes on, won)."""
    small = sum(1 for q in pins if q[0] == "S")
    if "K" in pins and small == 4:
        pts = 100 + sum(VALUE[q] for q in pins if q[0] == "M")
    else:
        pts = sum(VALUE[q] for q in pins if q != "K") + (("K" in pins) and (25 if small else 50))
    total_sum = pts + 5 * pocketed + 5 * carom
    if not fouls and len(pins) == 7:
        return 0, False, True
    if not fouls:
        change = -total_sum
    elif "cue_pins" in fouls or "off_table" in fouls:
        change = start if len(pins) == 7 else total_sum
    else:
        change = 0
    missed = called and not carom
    change += 5 * (("miss" in fouls) + ("cue_pocketed" in fouls) + bool(missed))
    if total + change <= 0:
        return 0, False, True
    return total + change, not fouls and not missed and total_sum > 0, False


SHOT = st.tuples(st.integers(0, 12), st.sets(st.sampled_from(PINS)), st.integers(0, 2),
                 st.integers(0, 1), st.integers(0, 1),
                 st.one_of(st.just(set()), st.sets(st.sampled_from(FOULS), max_size=2)))


@settings(max_examples=200, deadline=None)
@given(start=st.sampled_from([5, 50, 300, 500]), first=st.integers(0, 1),
       steps=st.lists(SHOT, min_size=5, max_size=80))
def test_random_games(start, first, steps):
    g = game({"start": start}, first)
    history = [g.state()]
    for what, pins, pocketed, carom, called, fouls in steps:
        prev = g.state()
        if prev["winner"] is not None or (what == 0 and len(g) > 1):
            s = g.apply({"a": "undo"})
            history.pop()
            assert s == history[-1]
            continue
        p = prev["next"]
        if what == 1:
            refused(g, shot(1 - p, pins), "SP-9")
            continue
        fouls = sorted(fouls)
        s = g.apply(shot(p, sorted(pins), pocketed, carom, called, fouls))
        history.append(s)
        total, series, won = model(start, prev["totals"][p], pins, pocketed, carom, called, fouls)
        assert s["totals"][p] == total
        assert s["totals"][1 - p] == prev["totals"][1 - p]  # a shot moves only its shooter's
        assert min(s["totals"]) >= 0
        if won:
            assert s["winner"] == p and s["next"] is None and s["totals"][p] == 0
        else:
            assert s["winner"] is None and s["next"] == (p if series else 1 - p)
        # The invariant that holds: a shot with no foul and no missed call never raises the
        # shooter's total. A penalty (SP-8, SP-13), a miss or pocketed cue ball (SP-12), or a
        # called carom not made (SP-11) do raise it, so "a legal shot" must exclude them.
        if not fouls and not (called and not carom):
            assert s["totals"][p] <= prev["totals"][p]
        # Every total stays a multiple of 5 (SP-3, SP-5).
        assert s["totals"][0] % 5 == 0 and s["totals"][1] % 5 == 0
    # Undo all the way back to the break gives the break state.
    while len(g) > 1:
        g.apply({"a": "undo"})
    assert g.state() == {"totals": [start, start], "next": first, "winner": None}
