"""The scorepad games' rules: texas-42 (rules/texas-42.md, T42-1..T42-7), domino-bingo
(rules/domino-bingo.md, DB-1..DB-8) and tally (rules/other-seed-games.md, TL-1..TL-5): the
scenario files, the configs, and properties checked against small independent models."""

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoreboard import matchlog, scenario
from scoreboard.rules import ConfigError, RuleError, new_game

GAMES = ("texas-42", "domino-bingo", "tally")
HERE = Path(__file__).parent
SCENARIOS = sorted(p for g in GAMES for p in (HERE / "scenarios" / g).glob("*.json"))
UNDO = {"a": "undo"}


def refused(g, action, rule):
    before, n = g.state(), len(g)
    with pytest.raises(RuleError) as e:
        g.apply(action)
    assert e.value.rule == rule, str(e.value)
    assert g.state() == before and len(g) == n
    return e.value


# -- the scenario files --------------------------------------------------------------------------

def test_scenarios_cover_every_rule_with_a_check():
    names = {p.parent.name + "/" + p.stem for p in SCENARIOS}
    for prefix in ("texas-42/t42-1", "texas-42/t42-2", "texas-42/t42-6", "texas-42/t42-7",
                   "domino-bingo/db-6", "domino-bingo/db-8", "domino-bingo/db-70",
                   "domino-bingo/db-win", "tally/tl-2", "tally/tl-3", "tally/tl-4", "tally/tl-5"):
        assert any(n.startswith(prefix) for n in names), prefix


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.parent.name + "/" + p.stem for p in SCENARIOS])
def test_scenario(path):
    sc = json.loads(path.read_text())
    assert sc["game"] == path.parent.name and sc["rules"] and sc["steps"]
    g = new_game(sc["game"], sc.get("config"))
    results = scenario.run(sc, g.apply, g.state, RuleError)
    problems = ["step %d %s: %s" % (i, json.dumps(sc["steps"][i]["do"]), "; ".join(p))
                for i, _, _, p in results if p]
    assert not problems, "\n".join(problems)


# -- configs ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("game, config, full", [
    ("texas-42", {}, {"target": 250}),
    ("texas-42", {"target": 7}, {"target": 7}),
    ("domino-bingo", {}, {"big_points_to_win": 7}),
    ("domino-bingo", {"big_points_to_win": 1}, {"big_points_to_win": 1}),
    ("tally", {}, {"players": 2, "target": None, "kind": "custom"}),
    ("tally", {"players": 9, "target": 21, "kind": "caps"},
     {"players": 9, "target": 21, "kind": "caps"}),
    ("tally", {"players": 4, "target": None, "kind": "parcheesi"},
     {"players": 4, "target": None, "kind": "parcheesi"}),
    ("tally", {"kind": "backgammon", "target": 5}, {"players": 2, "target": 5,
                                                    "kind": "backgammon"}),
])
def test_configs_and_their_defaults(game, config, full):
    assert new_game(game, config).config == full


@pytest.mark.parametrize("game, config, words", [
    ("texas-42", {"target": 0}, "target=0"),
    ("texas-42", {"target": -250}, "target=-250"),
    ("texas-42", {"target": "250"}, "target="),
    ("texas-42", {"target": 250.0}, "target="),
    ("texas-42", {"target": True}, "target="),
    ("texas-42", {"sides": 2}, "unknown config key"),
    ("domino-bingo", {"big_points_to_win": 0}, "big_points_to_win=0"),
    ("domino-bingo", {"big_points_to_win": None}, "big_points_to_win="),
    ("domino-bingo", {"target": 7}, "unknown config key"),
    ("tally", {"players": 1}, "players=1"),
    ("tally", {"players": 10}, "players=10"),
    ("tally", {"players": "3"}, "players="),
    ("tally", {"target": 0}, "target=0"),
    ("tally", {"target": -3}, "target=-3"),
    ("tally", {"target": 2.5}, "target=2.5"),
    ("tally", {"kind": "darts"}, "kind="),
    ("tally", {"kind": None}, "kind="),
    ("tally", {"colour": "red"}, "unknown config key"),
])
def test_a_config_out_of_range_is_refused_before_any_action(game, config, words):
    with pytest.raises(ConfigError) as e:
        new_game(game, config)
    assert words in str(e.value)


def test_a_log_with_a_bad_config_is_refused_at_its_header():
    lines = ['{"chalk":1,"game":"tally","config":{"players":12}}',
             '{"seq":1,"t":0,"a":"add","player":0,"n":1}']
    with pytest.raises(matchlog.LineError) as e:
        matchlog.replay(matchlog.read(lines))
    assert e.value.line == 1 and "players=12" in str(e.value)


# -- texas-42 --------------------------------------------------------------------------------------

def hand(bidder, bid, took):
    return {"a": "hand", "bidder": bidder, "bid": bid, "took": took}


def t42_model(target, hands):
    """T42-6/T42-7 as plainly as they are written: the state after `hands`, or the index of the
    first hand refused because the game was already won."""
    scores = [0, 0]
    winner = None
    for i, (b, bid, took) in enumerate(hands):
        if winner is not None:
            return i
        made = took == 42 if bid >= 84 else took >= bid
        if made:
            scores[b] += took
            scores[1 - b] += 42 - took
        else:
            scores[1 - b] += 42 - took + bid
        if max(scores) >= target and scores[0] != scores[1]:
            winner = scores.index(max(scores))
    return {"scores": scores, "hands": len(hands), "winner": winner}


BIDS = st.sampled_from(list(range(30, 43)) + [84, 168])
T42_HAND = st.tuples(st.integers(0, 1), BIDS, st.integers(0, 42))


@settings(max_examples=200, deadline=None)
@given(target=st.integers(1, 400), plan=st.lists(st.one_of(T42_HAND, st.just(None)),
                                                 max_size=40))
def test_t42_matches_fold_like_the_digest_says(target, plan):
    g = new_game("texas-42", {"target": target})
    kept = []
    for item in plan:
        if item is None:  # an undo
            if not kept:
                refused(g, UNDO, "LOG")
                continue
            kept.pop()
            assert g.apply(UNDO) == t42_model(target, kept)
            continue
        want = t42_model(target, kept + [item])
        if isinstance(want, int):
            refused(g, hand(*item), "T42-7")
            continue
        before = g.state()
        s = g.apply(hand(*item))
        kept.append(item)
        assert s == want
        b, bid, took = item
        gained = sum(s["scores"]) - sum(before["scores"])
        made = took == 42 if bid >= 84 else took >= bid
        assert gained == (42 if made else 42 - took + bid)  # T42-3/T42-6
        assert (s["winner"] is None) == (max(s["scores"]) < target
                                         or s["scores"][0] == s["scores"][1])
    assert [(a["bidder"], a["bid"], a["took"]) for a in g.actions()] == kept
    assert g.outcome() == (None if g.state()["winner"] is None
                           else {"game": "texas-42", "winner": g.state()["winner"]})


def test_t42_every_points_total_is_accepted_and_out_of_range_ones_refused():
    # T42-3: 0..42 can all be made of tricks (0..7) and count (multiples of 5 up to 35).
    for took in range(43):
        g = new_game("texas-42", {})
        g.apply(hand(0, 30, took))
    g = new_game("texas-42", {})
    for took in (43, -1, None, "30", 30.0, [30]):
        refused(g, hand(0, 30, took), "T42-3")
    for bid in (0, 29, 43, 83, 85, 167, 169, 336, None, 30.0, True):
        refused(g, hand(0, bid, 30), "T42-2")
    for bidder in (2, -1, None, "0", True, 0.0):
        refused(g, hand(bidder, 30, 30), "T42-1")
    e = refused(g, hand(0, 30, 50), "T42-3")
    assert '"took": 50' in str(e) and '"scores": [0, 0]' in str(e)


# -- domino-bingo ----------------------------------------------------------------------------

TOTALS = {0: 143, 1: 135, 2: 138, 3: 131, 4: 134, 5: 147, 6: 140}  # DB-6


def db(trump, points, declared=(0, 0), big=(0, 0)):
    return {"a": "hand", "trump": trump, "points": list(points), "declared": list(declared),
            "big": list(big)}


def db_model(to_win, hands):
    big = [0, 0]
    winner = None
    for i, h in enumerate(hands):
        if winner is not None:
            return i
        for p in (0, 1):
            big[p] += h["big"][p] + (1 if h["points"][p] + h["declared"][p] >= 70 else 0)
        if max(big) >= to_win and big[0] != big[1]:
            winner = 0 if big[0] > big[1] else 1
    return {"big": big, "hands": len(hands), "winner": winner}


@st.composite
def db_hand(draw):
    trump = draw(st.integers(0, 6))
    a = draw(st.integers(0, TOTALS[trump]))
    b = draw(st.integers(0, TOTALS[trump] - a))
    decl = st.sampled_from([0, 0, 0, 20, 40, 50, 60, 70, 80, 110, 170])
    return db(trump, (a, b), (draw(decl), draw(decl)),
              (draw(st.integers(0, 3)), draw(st.integers(0, 3))))


@settings(max_examples=200, deadline=None)
@given(to_win=st.integers(1, 12), plan=st.lists(st.one_of(db_hand(), st.just(None)),
                                                max_size=40))
def test_db_matches_fold_like_the_contract_says(to_win, plan):
    """Also proves the hand table: undone hands' slots are reused, the fold stays exact."""
    g = new_game("domino-bingo", {"big_points_to_win": to_win})
    kept = []
    for item in plan:
        if item is None:
            if not kept:
                refused(g, UNDO, "LOG")
                continue
            kept.pop()
            assert g.apply(UNDO) == db_model(to_win, kept)
            continue
        want = db_model(to_win, kept + [item])
        if isinstance(want, int):
            refused(g, item, "DB-3")
            continue
        kept.append(item)
        assert g.apply(item) == want
    assert g.actions() == kept
    for a in kept:  # a hand's code stands alone: a fresh game decodes it
        assert new_game("domino-bingo", {}).decode(g.encode(a)) == a
    again = new_game("domino-bingo", {"big_points_to_win": to_win})
    for a in g.actions():
        again.apply(a)
    assert again.state() == g.state() and again.view() == g.view()


def test_db_a_hand_checked_but_not_applied_leaves_the_game_alone():
    """A board prepares a hand (to journal it) before committing it, and previews entries; a
    prepared hand that is never committed must not leak into the game."""
    g = new_game("domino-bingo", {})
    g.apply(db(0, (80, 10)))
    g.prepare(db(1, (0, 100), (0, 60), (2, 2)))  # checked, never committed
    assert g.state() == {"big": [1, 0], "hands": 1, "winner": None}
    assert g.actions() == [db(0, (80, 10))]
    assert g.apply(db(2, (10, 10))) == {"big": [1, 0], "hands": 2, "winner": None}
    assert g.actions() == [db(0, (80, 10)), db(2, (10, 10))]


def test_db_declarations_are_sums_of_20_40_50_60():
    sums = {0}
    for _ in range(6):
        sums |= {s + v for s in sums for v in (20, 40, 50, 60) if s + v <= 300}
    g = new_game("domino-bingo", {"big_points_to_win": 10 ** 6})
    for d in range(-20, 301):
        action = db(0, (0, 0), (d, 0))
        if d in sums:
            g.apply(action)
        else:
            refused(g, action, "DB-8")
    for d in (20.0, "20", None, True):
        refused(g, db(0, (0, 0), (0, d)), "DB-8")


# -- tally -----------------------------------------------------------------------------------------

def add(p, n):
    return {"a": "add", "player": p, "n": n}


def tally_model(players, target, actions):
    counts = [0] * players
    winner = None
    for i, a in enumerate(actions):
        if winner is not None:
            return i
        if a == "finish":
            best = max(counts)
            winner = counts.index(best) if counts.count(best) == 1 else "draw"
            continue
        counts[a[0]] = max(0, counts[a[0]] + a[1])
        if target is not None and counts[a[0]] >= target:
            winner = a[0]
    return {"counts": counts, "winner": winner}


@settings(max_examples=200, deadline=None)
@given(players=st.integers(2, 9), target=st.one_of(st.none(), st.integers(1, 30)),
       plan=st.lists(st.one_of(st.tuples(st.integers(0, 8), st.integers(-6, 9)),
                               st.just("finish"), st.just(None)), max_size=60))
def test_tally_folds_like_tl_2_to_tl_5(players, target, plan):
    g = new_game("tally", {"players": players, "target": target})
    kept = []
    for item in plan:
        if item is None:
            if not kept:
                refused(g, UNDO, "LOG")
                continue
            kept.pop()
            assert g.apply(UNDO) == tally_model(players, target, kept)
            continue
        action = {"a": "finish"} if item == "finish" else add(*item)
        if item != "finish" and item[0] >= players:
            refused(g, action, "TL-5")
            continue
        want = tally_model(players, target, kept + [item])
        if isinstance(want, int):
            refused(g, action, "TL-5")
            continue
        kept.append(item)
        s = g.apply(action)
        assert s == want and min(s["counts"]) >= 0  # TL-2
    again = new_game("tally", {"players": players, "target": target})
    for a in g.actions():
        again.apply(a)
    assert again.state() == g.state()


def test_tally_n_large_and_small():
    g = new_game("tally", {"players": 2})
    assert g.apply(add(0, 8388607)) == {"counts": [8388607, 0], "winner": None}
    assert g.apply(add(0, -8388607)) == {"counts": [0, 0], "winner": None}
    refused(g, add(0, 8388608), "TL-2")
    refused(g, add(1, -8388608), "TL-2")
    assert all(0 <= c < 1 << 30 for c in g._codes)  # small ints on a 32-bit board


def test_tally_draw_is_the_outcome():
    g = new_game("tally", {"players": 3})
    g.apply({"a": "finish"})
    assert g.outcome() == {"game": "tally", "winner": "draw"}


def test_one_race_to_a_target_judges_both_scorepad_games():
    # T42-7 and domino bingo's big points: reached the goal, higher wins, equal plays on.
    from scoreboard.rules.base import race_winner

    assert race_winner(249, 0, 250) == -1
    assert race_winner(250, 0, 250) == 0 and race_winner(0, 250, 250) == 1
    assert race_winner(260, 255, 250) == 0 and race_winner(251, 270, 250) == 1
    assert race_winner(250, 250, 250) == -1 and race_winner(300, 300, 250) == -1
    for game in ("texas-42", "domino-bingo"):
        rules = __import__("scoreboard.games.%s.rules" % game.replace("-", "_"), None, None,
                           ("rules",))
        assert rules.race_winner is race_winner, game
