"""A league's rules: its config refused with one line naming the key; standings with their
tie-breaks (sets difference, head to head, shared places), team leagues scored by matches of
legs, draws, rounds and pub nights past midnight, and CSV a spreadsheet will not run."""

import csv
import io
import json
import subprocess
import sys
from datetime import datetime, timezone

import pytest

from chalk import leagueconf, leaguerank
from chalk.errors import ChalkError
from tests.mqttbroker import ROOT

BASE = {"chalk_league": 1, "id": "north", "name": "North", "game": "five-pins",
        "config": {"target": 8}, "players": ["Ann", "Bob", "Cy", "Di"],
        "venues": {"crown": {"name": "The Crown"}}}


def load(tmp_path, **changes):
    data = dict(BASE)
    for k, v in changes.items():
        if v is None:
            data.pop(k, None)
        else:
            data[k] = v
    p = tmp_path / "league.json"
    p.write_text(json.dumps(data))
    return leagueconf.load(p)


@pytest.mark.parametrize("changes, words", [
    ({"chalk_league": None}, '"chalk_league": 1 is missing'),
    ({"id": "north league"}, "is not an id"),
    ({"game": "darts"}, 'must be one of domino-bingo, five-pins'),
    ({"config": {"target": -3}}, "is not a five-pins config"),
    ({"players": ["Ann"]}, "two or more"),
    ({"players": ["Ann", "ann "]}, "without spaces around it"),
    ({"players": ["Ann", "ANN"]}, "named twice"),
    ({"players": ["Ann", "P2"]}, "default name"),
    ({"tie_breaks": ["coin_toss"]}, "must be a list from"),
    ({"game": "texas-42", "config": {}, "tie_breaks": ["sets_difference"]},
     "needs a game played in sets"),
    ({"rounds": {"start": "2026-13-01", "days": 7, "count": 3}}, "must be a date"),
    ({"rounds": [{"from": "2026-09-01", "to": "2026-09-07"},
                 {"from": "2026-09-05", "to": "2026-09-09"}]}, "overlaps"),
    ({"timezone": "Mars/Olympus"}, "is not a time zone"),
    ({"venues": {"crown": {"token": "short"}}}, "at least 16 characters"),
    ({"boards": {"dev": {"venue": "nowhere"}}}, "must be {\"venue\": one of the venues"),
    ({"legacy_keys": "maybe"}, "pending, count or refuse"),
    ({"colour": "red"}, 'unknown key "colour"'),
])
def test_a_bad_config_is_one_line_naming_the_key(tmp_path, changes, words):
    with pytest.raises(ChalkError) as e:
        load(tmp_path, **changes)
    assert words in e.value.message and str(tmp_path) in e.value.message


def test_a_bad_config_from_the_command_line_is_one_line_and_exit_1(tmp_path):
    p = tmp_path / "league.json"
    p.write_text("[" * 100000)
    r = subprocess.run([sys.executable, "-m", "chalk.cli", "league", "check", "--config", p],
                       capture_output=True, text=True, cwd=str(ROOT))
    assert r.returncode == 1 and "not valid JSON" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, "-m", "chalk.cli", "league", "standings", "--config",
                        tmp_path / "none.json"], capture_output=True, text=True, cwd=str(ROOT))
    assert r.returncode == 1 and "no league config" in r.stderr


def game(i, sides, winner, sets=None, scores=(0, 0), rnd="Season", venue="crown"):
    a = leaguerank.Assessed(i, {"verdict": {"grade": "ok-finished"}, "device": "d",
                                "game_no": i}, leaguerank.COUNTED, "counted", venue=venue,
                            round=leagueconf.Round(rnd, None, None),
                            when=datetime(2026, 9, 8, 20, tzinfo=timezone.utc))
    a.sides = [list(s) for s in sides]
    a.entrants = [" & ".join(s) for s in sides]
    a.winner, a.sets, a.scores = winner, list(sets) if sets else None, list(scores)
    return a


def test_standings_by_points_then_sets_difference_then_head_to_head(tmp_path):
    L = load(tmp_path, tie_breaks=["sets_difference", "head_to_head"])
    games = [
        game(1, [["Ann"], ["Bob"]], 0, sets=(2, 0)),
        game(2, [["Cy"], ["Di"]], 0, sets=(2, 1)),
        game(3, [["Bob"], ["Cy"]], 0, sets=(2, 1)),
        game(4, [["Di"], ["Ann"]], 0, sets=(2, 1)),
    ]
    rows = leaguerank.standings(L, games)
    # Each has 2 points (one win) except... Ann 2 (+2-1 = +1... ), computed by hand:
    # Ann: won 2-0, lost 1-2: sets +1; Bob: lost 0-2, won 2-1: -1; Cy: won 2-1, lost 1-2: 0;
    # Di: lost 1-2, won 2-1: 0. Cy and Di level on sets: Cy beat Di.
    assert [(r["name"], r["points"], r["sets_difference"], r["pos"]) for r in rows] == [
        ("Ann", 2, 1, 1), ("Cy", 2, 0, 2), ("Di", 2, 0, 3), ("Bob", 2, -1, 4)]
    # Without head to head, Cy and Di share third... second place, named in order.
    L.tie_breaks = ["sets_difference"]
    rows = leaguerank.standings(L, games)
    assert [(r["name"], r["pos"], r["shared"]) for r in rows] == [
        ("Ann", 1, False), ("Cy", 2, True), ("Di", 2, True), ("Bob", 4, False)]
    assert "2=" in leaguerank.standings_csv(rows)


def test_pending_games_are_counted_apart(tmp_path):
    L = load(tmp_path)
    g = game(1, [["Ann"], ["Bob"]], 0)
    g.status = leaguerank.PENDING
    rows = {r["name"]: r for r in leaguerank.standings(L, [g])}
    assert rows["Ann"]["pending"] == 1 and rows["Ann"]["points"] == 0


def test_a_team_league_scores_matches_of_legs(tmp_path):
    L = load(tmp_path, players=None, teams={"Crown": ["Ann", "Cy"], "Swan": ["Bob", "Di"],
                                            "Oak": ["Eve", "Fay"]},
             points={"win": 3, "draw": 1, "loss": 0}, tie_breaks=["legs_difference"])
    games = [  # round 1: Crown 2 legs, Swan 1: a Crown win. round 2: Crown 1, Oak 1: a draw.
        game(1, [["Crown"], ["Swan"]], 0, rnd="Round 1"),
        game(2, [["Crown"], ["Swan"]], 1, rnd="Round 1"),
        game(3, [["Swan"], ["Crown"]], 1, rnd="Round 1"),
        game(4, [["Oak"], ["Crown"]], 0, rnd="Round 2"),
        game(5, [["Crown"], ["Oak"]], 0, rnd="Round 2"),
    ]
    rows = {r["name"]: r for r in leaguerank.standings(L, games)}
    assert (rows["Crown"]["played"], rows["Crown"]["won"], rows["Crown"]["drawn"],
            rows["Crown"]["points"], rows["Crown"]["legs_difference"]) == (2, 1, 1, 4, 1)
    assert (rows["Swan"]["lost"], rows["Swan"]["points"], rows["Swan"]["legs_difference"]) == \
        (1, 0, -1)
    assert (rows["Oak"]["drawn"], rows["Oak"]["points"]) == (1, 1)


def test_a_draw_and_partnership_sides(tmp_path):
    L = load(tmp_path, game="texas-42", config={}, tie_breaks=["score_difference"])
    g = game(1, [["Ann", "Cy"], ["Bob", "Di"]], "draw", scores=(250, 250))
    h = game(2, [["Ann", "Cy"], ["Bob", "Di"]], 1, scores=(190, 251))
    rows = {r["name"]: r for r in leaguerank.standings(L, [g, h])}
    assert rows["Cy"]["drawn"] == 1 and rows["Cy"]["points"] == 1
    assert rows["Di"]["points"] == 3 and rows["Di"]["score_difference"] == 61


def test_rounds_and_a_night_past_midnight(tmp_path):
    L = load(tmp_path, rounds={"start": "2026-09-07", "days": 7, "count": 2},
             timezone="Europe/London", night_ends="06:00")
    late = leagueconf.parse_time("2026-09-14T00:30:00Z")  # 01:30 Monday in London
    assert L.round_of(late).name == "Round 1"  # still Sunday night: week 1
    assert L.round_of(leagueconf.parse_time("2026-09-14T19:00:00Z")).name == "Round 2"
    assert L.round_of(leagueconf.parse_time("2026-09-30T19:00:00Z")) is None


def test_csv_neutralises_formulas_and_control_characters(tmp_path):
    L = load(tmp_path, players=["=HYPERLINK(\"http://x\")", "Bob\x1b[2J"])
    rows = leaguerank.standings(L, [game(1, [["=HYPERLINK(\"http://x\")"], ["Bob\x1b[2J"]],
                                         0)])
    text = leaguerank.standings_csv(rows)
    names = [r[1] for r in csv.reader(io.StringIO(text))][1:]
    assert names[0].startswith("'=") and "\\x1b" in names[1] and "\x1b" not in text
    m = list(csv.reader(io.StringIO(leaguerank.matches_csv(L, [game(
        1, [["Ann"], ["Bob"]], 1, sets=(1, 2))]))))
    assert m[0] == leaguerank.MATCHES_COLUMNS and m[1][4:] == ["Ann", "Bob", "1-2", "Bob"]
