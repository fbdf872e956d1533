"""Novuss (rules/novuss.md, NV-1..NV-7, and the match-log contract): scenarios, rule-by-rule
tests, properties of random games."""

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoreboard import scenario
from scoreboard.games.novuss.rules import FOULS, Rules
from scoreboard.rules import ConfigError, RuleError, new_game

SCENARIOS = sorted((Path(__file__).parent / "scenarios" / "novuss").glob("*.json"))
PENALTY = FOULS[:7]


def start(s):
    return {"a": "start", "side": s}


def shot(s, own=0, opp=0, fouls=()):
    return {"a": "shot", "side": s, "own": own, "opp": opp, "fouls": list(fouls)}


def game(config=None, first=0, *actions):
    g = Rules(config)
    g.apply(start(first))
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


def test_scenarios_exist():
    names = {p.stem for p in SCENARIOS}
    for rule in ("NV-3", "NV-5", "NV-6", "NV-7"):
        assert any(n.startswith(rule.lower() + "-") for n in names), rule


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario(path):
    sc = json.loads(path.read_text())
    assert sc["game"] == "novuss" and sc["rules"] and sc["steps"]
    g = new_game(sc["game"], sc.get("config"))
    results = scenario.run(sc, g.apply, g.state, RuleError)
    problems = ["step %d %s: %s" % (i, json.dumps(sc["steps"][i]["do"]), "; ".join(p))
                for i, _, _, p in results if p]
    assert not problems, "\n".join(problems)


def test_initial_state_and_config():
    g = Rules()
    assert g.config == {"per_side": 1, "pucks": 8}
    assert g.state() == {"left": [8, 8], "debt": [0, 0], "next": None, "winner": None}
    assert Rules({"per_side": 2, "pucks": 3}).state()["left"] == [3, 3]


@pytest.mark.parametrize("config", [
    {"per_side": 0}, {"per_side": 3}, {"per_side": "1"}, {"per_side": True}, {"pucks": 0},
    {"pucks": 9}, {"pucks": 8.0}, {"pucks": None}, {"sides": 2}, {"colour": "red"},
])
def test_config_errors(config):
    with pytest.raises(ConfigError):
        Rules(config)


def test_nv6_clean_pocketing_keeps_the_turn():
    g = game()
    assert g.apply(shot(0, 3))["next"] == 0
    assert g.apply(shot(0, 1, 1))["next"] == 1  # an opponent's with an own
    assert g.apply(shot(1, 0, 2))["next"] == 0  # no own puck
    assert g.apply(shot(0, 1, 0, ["own_off"]))["next"] == 1  # own_off: no penalty, turn passes
    assert g.state() == {"left": [1, 7], "debt": [0, 0], "next": 1, "winner": None}


@pytest.mark.parametrize("foul", PENALTY)
def test_nv7_each_foul_costs_one_penalty_puck(foul):
    g = game()
    assert g.apply(shot(0, 0, 0, [foul]))["debt"] == [1, 0]  # all pucks on the table: a debt
    g = game({}, 0, shot(0, 2))
    s = g.apply(shot(0, 1, 0, [foul]))
    if foul == "direct_in_zone":
        assert s["left"] == [7, 8]  # the puck is put back, the penalty comes from the two off
    else:
        assert s["left"] == [6, 8]
    assert s["debt"] == [0, 0] and s["next"] == 1


def test_nv7_debt_is_paid_whoever_pockets():
    g = game({}, 0, shot(0, 0, 0, PENALTY[:3]))
    assert g.state()["debt"] == [3, 0]
    s = g.apply(shot(1, 1, 2))
    assert s == {"left": [8, 7], "debt": [1, 0], "next": 0, "winner": None}


def test_nv3_win_and_undo():
    g = game({"pucks": 2}, 1, shot(1, 1))
    s = g.apply(shot(1, 1))
    assert s == {"left": [2, 0], "debt": [0, 0], "next": None, "winner": 1}
    assert g.outcome() == {"game": "novuss", "winner": 1}
    for a in (shot(1), shot(0), start(0)):
        refused(g, a, "NV-3")
    assert g.apply({"a": "undo"})["winner"] is None


def test_nv3_opponent_pocketing_the_last_puck_loses():
    g = game({"pucks": 1}, 0)
    assert g.apply(shot(0, 0, 1))["winner"] == 1


@pytest.mark.parametrize("action, rule", [
    (shot(2), "NV-2"), (shot(-1), "NV-2"), (shot(True), "NV-2"), ({"a": "shot"}, "NV-2"),
    (shot(0, 9), "NV-1"), (shot(0, -1), "NV-1"), (shot(0, 1.0), "NV-1"), (shot(0, 0, 9), "NV-1"),
    (shot(0, 0, "1"), "NV-1"), (shot(0, fouls=["miss"]), "NV-7"),
    (shot(0, fouls=["opp_off", "opp_off"]), "NV-7"), ({"a": "shot", "side": 0, "fouls": 1}, "NV-7"),
    (shot(1), "NV-6"), (start(0), "NV-6"),
])
def test_malformed_shots_refused_with_their_rule(action, rule):
    e = refused(game(), action, rule)
    assert str(e).startswith(rule + ": ")


def test_counts_beyond_the_pucks_on_the_table():
    g = game({}, 0, shot(0, 6))
    refused(g, shot(0, 3), "NV-1")
    assert g.apply(shot(0, 2))["winner"] == 0


def test_before_start_and_undo_of_start():
    g = Rules()
    refused(g, shot(0), "NV-6")
    refused(g, {"a": "undo"}, "LOG")
    g.apply(start(1))
    assert g.apply({"a": "undo"})["next"] is None and len(g) == 0


def test_omitted_counts_and_fouls():
    g = game()
    assert g.apply({"a": "shot", "side": 0, "own": 2})["next"] == 0
    assert g.actions()[-1] == shot(0, 2)


@settings(max_examples=200, deadline=None)
@given(s=st.integers(0, 1), own=st.integers(0, 8), opp=st.integers(0, 8),
       fouls=st.sets(st.sampled_from(FOULS)), data=st.data())
def test_encode_decode_round_trip(s, own, opp, fouls, data):
    g = Rules()
    code = g.encode(shot(s, own, opp, data.draw(st.permutations(sorted(fouls)))))
    assert type(code) is int and 0 <= code < 2 ** 19
    canon = shot(s, own, opp, [f for f in FOULS if f in fouls])
    assert g.decode(code) == canon and g.encode(canon) == code


SHOT = st.tuples(st.integers(0, 10), st.integers(0, 8), st.integers(0, 8),
                 st.one_of(st.just(set()), st.sets(st.sampled_from(FOULS), max_size=3)))


@settings(max_examples=200, deadline=None)
@given(pucks=st.integers(1, 8), first=st.integers(0, 1),
       steps=st.lists(SHOT, min_size=5, max_size=80))
def test_random_games_keep_pucks_and_debt_consistent(pucks, first, steps):
    g = game({"pucks": pucks}, first)
    pocketed = [[0, 0]]  # per side: its pucks pocketed and counted, all shots so far
    charged = [[0, 0]]  # per side: penalty pucks it was charged, all shots so far
    for what, own, opp, fouls in steps:
        prev = g.state()
        if prev["winner"] is not None or (what == 0 and len(g) > 1):
            g.apply({"a": "undo"})
            pocketed.pop()
            charged.pop()
            continue
        p = prev["next"]
        own = min(own, prev["left"][p])
        opp = min(opp, prev["left"][1 - p])
        s = g.apply(shot(p, own, opp, sorted(fouls)))
        counted = 0 if "direct_in_zone" in fouls else own
        pk = list(pocketed[-1])
        ch = list(charged[-1])
        pk[p] += counted
        pk[1 - p] += opp
        ch[p] += sum(1 for f in fouls if f != "own_off")
        pocketed.append(pk)
        charged.append(ch)
        for t in (0, 1):
            # Every penalty puck is either back on the table or still owed.
            assert s["left"][t] + s["debt"][t] == pucks - pk[t] + ch[t]
            assert 0 <= s["left"][t] <= pucks and s["debt"][t] >= 0
            # A debt stays only while every puck of that side is on the table (NV-7).
            assert s["debt"][t] == 0 or s["left"][t] == pucks
        done = [s["left"][t] == 0 and s["debt"][t] == 0 for t in (0, 1)]
        if any(done):
            assert s["winner"] == (p if done[p] else 1 - p) and s["next"] is None
        else:
            keeps = counted > 0 and opp == 0 and not fouls
            assert s["winner"] is None and s["next"] == (p if keeps else 1 - p)
