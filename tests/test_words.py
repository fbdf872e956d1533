"""Every action in words, with the players' names (chalk/games/): one description per game, the
same on the pages (views.view), in `chalk watch` and on the scoresheet; fouls in words, the race,
sides named as on the board, what staff should do about a warning. Worked out from the rules'
states before and after each action, never from the board's own short text."""

import json
import random

import pytest

from chalk import games, sheet, views, watch
from chalk.games import common
from scoreboard.rules import new_game


def play(game, config, players, actions):
    """The board's status after each action, as its state reply carries it (rec, before,
    undid, config): [(status, view)]."""
    g = new_game(game, config)
    st = g.state()
    standing = []
    out = []
    for a in actions:
        before = st
        status = {"game": game, "game_no": 1, "players": players, "config": g.config}
        if a["a"] == "undo":
            status["undid"] = standing.pop()
        else:
            standing.append(a)
        st = g.apply(a)
        status.update(state=st, rec=dict(a, seq=len(out) + 2, t=1000 * len(out)),
                      before=before, last_seq=len(out) + 2)
        out.append((status, views.view(status, "snug")))
    return out


def said(game, config, players, actions):
    return [(v["last"], v["last_fouls"]) for _s, v in play(game, config, players, actions)]


def turn(side, *coins, **kw):
    beds = [0] * 9
    for b in coins:
        beds[b - 1] += 1
    return dict({"a": "turn", "side": side, "beds": beds}, **kw)


# -- shove ha'penny ----------------------------------------------------------------------------

def test_shove_turns_in_words_sh11_sh14_sh15_sh17_sh18():
    got = said("shove-hapenny", {"overflow": "auto"}, ["Ann", "Bob"], [
        {"a": "start", "side": 0},
        turn(0, 2, 2, 5),  # worked example 1 (SH-11, SH-12)
        turn(1),
        turn(0, 2, 2, 3, 3, 3),  # bed 2 needs one, bed 3 fills: one over to Bob (SH-15)
        turn(1, 9, void="touched"),  # SH-17
        turn(1, 2, 2, 2),  # out of turn (SH-18): Ann is on move
        turn(0),  # Bob misses this turn: Ann again
        {"a": "undo"},
    ])
    assert got == [
        ("Ann starts", []),
        ("Ann: 2 in bed 2, 1 in bed 5", []),
        ("Bob: no coin in a bed", []),
        ("Ann: 2 in bed 2, 3 in bed 3 (bed 3 full; bed 2 full, 1 over to Bob)", []),
        ("Bob: void turn, a played coin was touched before all five were played (SH-17): "
         "nothing scores",
         ["void: a played coin was touched before all five were played (SH-17)"]),
        ("Bob played out of turn (SH-18): nothing scores, and Bob misses the next turn",
         ["played out of turn (SH-18)"]),
        ("Ann: no coin in a bed; Bob misses this turn (SH-18): Ann again", []),
        ("Undone: Ann: no coin in a bed; Bob misses this turn (SH-18): Ann again", []),
    ]


def test_shove_overflow_that_would_win_is_lost_sh15_example_3():
    # A has 26 (needs one in bed 9); B has bed 9 full; B's coin in bed 9 would give A the win.
    acts = [{"a": "start", "side": 0}, turn(0, 1, 1, 1, 2, 2), turn(1, 9, 9, 9),
            turn(0, 2, 3, 3, 3, 4), turn(1), turn(0, 4, 4, 5, 5, 5), turn(1),
            turn(0, 6, 6, 6, 7, 7), turn(1), turn(0, 7, 8, 8, 8, 9), turn(1), turn(0, 9),
            turn(1, 9), turn(0, 9)]
    got = said("shove-hapenny", {}, ["Ann", "Bob"], acts)
    assert got[-2][0] == ("Bob: 1 in bed 9 (bed 9: 1 over, lost: an overflow may not give Ann "
                          "the winning score, SH-15)")
    assert got[-1][0] == "Ann: 1 in bed 9 (bed 9 full) — Ann wins"  # SH-7, by her own coin


def test_shove_claims_and_overflow_off_and_pairs():
    got = said("shove-hapenny", {"overflow": "claim"}, [["Ann", "Cy"], "Bob"], [
        {"a": "start", "side": 1}, turn(1, 1, 1, 1, 2, 2), turn(0), turn(1, 1, 1),
        {"a": "claim", "side": 0, "bed": 1}])
    assert [t for t, _f in got] == [
        "Bob starts", "Bob: 3 in bed 1, 2 in bed 2 (bed 1 full)", "Ann & Cy: no coin in a bed",
        "Bob: 2 in bed 1 (bed 1: 2 over, for Ann & Cy to claim, SH-15)",
        "Ann & Cy claim the overflow in bed 1 (SH-15)"]
    got = said("shove-hapenny", {"overflow": "off"}, [], [{"a": "start", "side": 0},
                                                          turn(0, 1, 1, 1, 1)])
    assert got[-1][0] == "A: 4 in bed 1 (bed 1 full, 1 over, lost: overflow is off)"


def test_shove_peg_mismatch_says_what_to_do_and_why_done_is_ignored():
    st = {"beds": [[0, 2, 0, 0, 0, 0, 0, 0, 0], [0] * 9], "next": 1, "turns": 1,
          "skip": [0, 0], "winner": None}
    v = views.view({"game": "shove-hapenny", "players": ["Ann", "Bob"], "state": st,
                    "warnings": ["PEG A2 -1", "PEG B1 +1", "PEG B3 +2"]}, "snug")
    assert v["notices"] == [
        "A (Ann): put a peg in bed 2 (the score there is 2)",
        "B (Bob): take the peg out of bed 1",
        "B (Bob): take 2 pegs out of bed 3",
        "Pressing done scores nothing until the pegs match the score (SH-2): put them right "
        "first"]
    assert v["warnings"] == []  # said as notices, not as codes
    v = views.view({"game": "shove-hapenny", "players": [], "state": st,
                    "warnings": ["PEG A1 +1"]}, "snug")
    assert v["notices"][0] == "A: take the peg out of bed 1"  # the issue's own example
    # A new game with the last game's pegs still in: every square has new pegs (the board's
    # note "+A1 A2 ... B9"), more than a turn's five coins.
    note = "+" + " ".join("%s%d" % (s, b) for s in "AB" for b in range(1, 10))
    v = views.view({"game": "shove-hapenny", "players": ["Ann", "Bob"], "state": st,
                    "note": note, "warnings": []}, "snug")
    assert v["notices"][0].startswith("New pegs in 18 squares, but a turn has 5 coins (SH-3)")
    assert v["notices"][-1].startswith("Pressing done scores nothing")
    assert v["note"].startswith("turn being scored: new pegs in Ann's beds 1, 2")
    assert "+A1" not in json.dumps(v)
    v = views.view({"game": "shove-hapenny", "players": [], "state": st,
                    "warnings": ["7 pegs: a turn has 5 coins (SH-3)"]}, "snug")
    assert v["notices"][0] == ("7 new pegs, but a turn has 5 coins (SH-3): take out the pegs "
                               "that are not this turn's")
    assert v["notices"][1].startswith("Pressing done")


# -- five pins ---------------------------------------------------------------------------------

def shot(p, pins="", carom=0, fouls=()):
    return {"a": "shot", "player": p, "pins": pins, "carom": carom, "fouls": list(fouls)}


def test_five_pins_shots_fouls_sets_in_words_fp9_fp15_fp26():
    got = said("five-pins", {"target": 30, "sets": 3}, ["Ann", "Bob"], [
        {"a": "break", "player": 0}, shot(0, "12"),
        shot(1, "2C", 4, ["ball_off"]),  # all its points and 2 more to Ann, ball in hand
        shot(0, "", 0, ["red_first"]),  # 4 in all (FP-15)
        shot(1, "2C", 0, ["pin"]),  # a pin foul: the pins only, no ball in hand (FP-14)
        shot(0, "1234C"), shot(1), {"a": "undo"}])
    assert got == [
        ("Ann breaks", []),
        ("Ann: pins 1 and 2 — 4 points", []),
        ("Bob: pins 2 and C, carom 4 — foul: ball off the table, 12 to Ann; Ann has ball in "
         "hand (FP-26)", ["ball off the table (FP-15)"]),
        ("Ann — foul: hit the red first, 4 to Bob; Bob has ball in hand (FP-26)",
         ["hit the red first (FP-15)"]),
        ("Bob: pins 2 and C — foul: own ball knocked pins, 6 to Ann",
         ["own ball knocked pins (FP-14)"]),
        ("Ann: all five pins — 12 points; Ann wins set 1, 30 to 4", []),  # FP-4: capped
        ("Bob: no score", []),
        ("Undone: Bob: no score", []),
    ]
    match = said("five-pins", {"target": 12, "sets": 1}, [], [{"a": "break", "player": 1},
                                                               shot(1, "1234C")])
    assert match[-1][0] == "P2: all five pins — 12 points; P2 wins the match, 1 sets to 0"
    undone = said("five-pins", {}, ["Ann", "Bob"], [{"a": "break", "player": 1},
                                                     {"a": "undo"}])
    assert undone[-1][0] == "Undone: Bob breaks"


def test_a_configured_pin_foul_penalty_is_counted_fp14():
    got = said("five-pins", {"pin_foul_penalty": 2}, ["Ann", "Bob"], [
        {"a": "break", "player": 0}, shot(0, "C", 0, ["pin", "touch"])])
    assert got[-1] == ("Ann: pin C — foul: own ball knocked pins and touched a ball or pin, "
                       "12 to Bob; Bob has ball in hand (FP-26)",
                       ["own ball knocked pins (FP-14)", "touched a ball or pin (FP-15)"])


# -- seven pins, novuss ------------------------------------------------------------------------

def test_seven_pins_write_offs_penalties_and_series_sp5_sp12():
    got = said("seven-pins", {"start": 300}, ["Misha", "Oleg"], [
        {"a": "break", "player": 0},
        {"a": "shot", "player": 0, "pins": ["M1"]},
        {"a": "shot", "player": 0, "pins": ["K"]},  # the king alone: 50
        {"a": "shot", "player": 0, "pins": ["K", "S2"], "called": 1},  # call missed: +5
        {"a": "shot", "player": 1, "pins": ["M3"], "fouls": ["cue_pins"]},  # penalty: added
        {"a": "shot", "player": 0, "fouls": ["miss"]},
        {"a": "shot", "player": 1, "pins": ["K", "S1", "S2", "S3", "S4", "M1", "M3"]}])
    assert [t for t, _f in got] == [
        "Misha breaks",
        "Misha: M1, 30 off (270 to go); Misha plays on (SP-9)",
        "Misha: the king, 50 off (220 to go); Misha plays on (SP-9)",
        "Misha: the king and S2, the called carom missed (SP-11), 25 off (195 to go)",
        "Oleg: M3 — foul: the cue ball knocked a pin, 30 added (330 to go)",
        "Misha: nothing down — foul: the cue ball missed every ball, 5 added (200 to go)",
        "Oleg: all seven pins — Oleg wins at once (SP-6)"]
    assert got[4][1] == ["the cue ball knocked a pin (SP-8)"]


def test_novuss_pucks_penalties_and_turns_nv6_nv7():
    got = said("novuss", {"pucks": 3}, ["Liga", "Janis"], [
        {"a": "start", "side": 0}, {"a": "shot", "side": 0, "own": 2},
        {"a": "shot", "side": 0, "opp": 1, "fouls": ["striker_pocketed"]},
        {"a": "shot", "side": 1, "own": 1, "fouls": ["direct_in_zone"]},
        {"a": "shot", "side": 0, "own": 2}])
    assert [t for t, _f in got] == [
        "Liga starts",
        "Liga: 2 in (Liga 1 left, Janis 3); Liga shoots again",
        "Liga: 1 of Janis's in — foul: the striker was pocketed, 1 penalty puck (Liga 2 left, "
        "Janis 2)",
        "Janis: 1 in — foul: a direct shot in the zone: own pucks put back, 1 penalty puck "
        "(Janis 3 left, Liga 2)",
        "Liga: 2 in — Liga wins"]


# -- the scorepad games ------------------------------------------------------------------------

def test_texas_42_hands_made_set_and_marks_t42_6_named_as_on_the_board():
    got = said("texas-42", {"target": 250}, ["Ann", "Bob", "Cy", "Di"], [
        {"a": "hand", "bidder": 0, "bid": 32, "took": 35},
        {"a": "hand", "bidder": 1, "bid": 84, "took": 40}])
    assert [t for t, _f in got] == [
        "Ann & Cy bid 32, made it: 35, Bob & Di 7",
        "Bob & Di bid 84 (2 marks) and were set, taking 40: Ann & Cy score 86 (T42-6)"]
    # No names: the partnerships are S1 and S2, as the board's screen calls them (display.py).
    (status, v), = play("texas-42", {"target": 30}, [],
                        [{"a": "hand", "bidder": 1, "bid": 30, "took": 20}])
    assert [r["name"] for r in v["rows"]] == ["S1", "S2"]
    assert v["last"] == "S2 bid 30 and were set, taking 20: S1 score 52 (T42-6) — S1 win, 52 to 0"
    assert v["game_name"] == "Texas 42" and v["race"] == "to 30"


def test_domino_bingo_and_tally_in_words():
    got = said("domino-bingo", {"big_points_to_win": 3}, ["Lena", "Oleg"], [
        {"a": "hand", "trump": 0, "points": [60, 20], "declared": [20, 0], "big": [1, 0]},
        {"a": "hand", "trump": 3, "points": [100, 10], "declared": [0, 0], "big": [0, 0]}])
    assert [t for t, _f in got] == [
        "Trump blanks: Lena 60 + 20 declared, Oleg 20; big points Lena +2 (1 in the hand, 1 for "
        "70 or more)",
        "Trump threes: Lena 100, Oleg 10; big points Lena +1 (1 for 70 or more) — Lena wins, 3 "
        "big points to 0"]
    got = said("tally", {"players": 3, "target": 5, "kind": "caps"}, ["Ann", "Bob", "Cy"], [
        {"a": "add", "player": 0, "n": 3}, {"a": "add", "player": 1, "n": -2},
        {"a": "add", "player": 0, "n": 2}])
    assert [t for t, _f in got] == ["Ann +3, now 3",
                                    "Bob \u22122, now 0 (a count never goes below 0, TL-2)",
                                    "Ann +2, now 5 — Ann reaches 5 and wins (TL-3)"]
    got = said("tally", {"players": 2}, [], [{"a": "add", "player": 0, "n": 3},
                                              {"a": "add", "player": 1, "n": 3},
                                              {"a": "finish"}])
    assert got[-1][0] == "Finished: a draw at 3 (P1 and P2)"
    (_s, v), = play("tally", {"players": 3, "kind": "caps"}, [], [{"a": "finish"}])
    assert v["game_name"] == "Caps" and v["race"] == "" and len(v["rows"]) == 3


# -- the view contract -------------------------------------------------------------------------

@pytest.mark.parametrize("game, config, race, defaults", [
    ("shove-hapenny", {"overflow": "auto"}, "3 in each of the 9 beds", ["A", "B"]),
    ("five-pins", {"target": 60, "sets": 3}, "to 60, best of 3 sets", ["P1", "P2"]),
    ("five-pins", {"target": 40, "sets": 1}, "to 40, one set", ["P1", "P2"]),
    ("seven-pins", {"start": 500}, "from 500 down to 0", ["P1", "P2"]),
    ("novuss", {"pucks": 8}, "8 pucks a side", ["A", "B"]),
    ("texas-42", {"target": 250}, "to 250", ["S1", "S2"]),
    ("domino-bingo", {"big_points_to_win": 7}, "to 7 big points", ["P1", "P2"]),
    ("tally", {"players": 3, "target": 15}, "first to 15", ["P1", "P2", "P3"]),
])
def test_the_view_has_the_game_race_and_sides_as_the_board_names_them(game, config, race,
                                                                       defaults):
    g = new_game(game, config)
    v = views.view({"game": game, "players": [], "config": g.config, "state": g.state(),
                    "rec": None}, "snug")
    assert v["game_name"] == games.get(game).name or game == "tally"
    assert v["race"] == race
    assert [r["name"] for r in v["rows"]] == defaults
    assert v["last"] == "" and v["last_fouls"] == [] and v["notices"] == []


def test_the_boards_own_short_text_is_never_shown_raw():
    """A board whose reply carries only its own text of the last action ("B 100001111",
    "P1 - red_first", a cut JSON record) and the keypad's prompts: said in words or not at
    all."""
    shove = {"beds": [[0] * 9, [1, 0, 0, 0, 0, 1, 1, 1, 1]], "next": 0, "turns": 2,
             "skip": [0, 0], "winner": None}
    v = views.view({"game": "shove-hapenny", "players": ["Ann", "Bob"], "state": shove,
                    "last": "B 100001111"}, "snug")
    assert v["last"] == "Bob: 1 in bed 1, 1 in bed 6, 1 in bed 7, 1 in bed 8, 1 in bed 9"
    five = {"scores": [0, 4], "sets": [0, 0], "set": 1, "next": 1, "breaker": 0,
            "ball_in_hand": True, "winner": None}
    v = views.view({"game": "five-pins", "players": ["Ann", "Bob"], "state": five,
                    "last": "P1 - red_first"}, "snug")
    assert v["last"] == "Ann — foul: hit the red first, 4 to Bob; Bob has ball in hand (FP-26)"
    assert v["last_fouls"] == ["hit the red first (FP-15)"]
    t42 = {"scores": [30, 12], "hands": 1, "winner": None}
    for last, note in (('{"bid": 30, "a":', "trump 0-6? _"), ("x", "# = next game"),
                       ('{"a": "hand", "b', "side 1/2?")):
        v = views.view({"game": "texas-42", "players": [], "state": t42, "last": last,
                        "note": note}, "snug")
        assert v["last"] == "" and v["note"] == ""
        lines = watch.render({"game": "texas-42", "game_no": 1, "players": [], "state": t42,
                              "last": last, "note": note})
        assert not any(ln.startswith(("last:", "now:")) or note in ln for ln in lines)


def test_sensor_faults_and_refusals_in_words():
    st = {"scores": [0, 0], "sets": [0, 0], "set": 1, "next": 0, "breaker": 0,
          "ball_in_hand": False, "winner": None}
    v = views.view({"game": "five-pins", "players": ["Ann", "Bob"], "state": st,
                    "warnings": ["pin.C chatter", "btn.foul stuck", "FP-6 player 1 is not on "
                                 "move, player 0 is (one shot each)", "LOG nothing to undo",
                                 "journal: flash full"]}, "snug")
    assert v["notices"] == [
        "Pin C's switch chatters (flickers on and off): it is ignored until it works again; "
        "check it and its wiring",
        "The foul button is stuck: it is ignored until it works again; check it and its wiring"]
    assert v["warnings"] == ["refused (FP-6): player 1 is not on move, player 0 is (one shot "
                             "each)", "refused: nothing to undo", "the board's journal: flash full"]


def test_names_that_reorder_text_are_isolated_on_the_page_and_escaped_in_the_terminal():
    evil = "\u202eEve"  # a right-to-left override: the rest of a sentence would read backwards
    (status, v), = play("five-pins", {}, [evil, "Bob"], [{"a": "break", "player": 0}])
    assert v["last"] == "\u2068\u202eEve\u2069 breaks"  # FSI ... PDI: the override ends there
    assert v["rows"][0]["name"] == evil  # the page draws names as text, in elements of their own
    (status, v), = play("five-pins", {}, ["\u0639\u0644\u064a", "Bob"],
                        [{"a": "break", "player": 0}])
    assert v["last"] == "\u2068\u0639\u0644\u064a\u2069 breaks"
    (status, v), = play("five-pins", {}, ["Ann", "Bob"], [{"a": "break", "player": 0}])
    assert v["last"] == "Ann breaks"  # nothing added where nothing can reorder
    lines = watch.render(play("five-pins", {}, [evil + "\x1b[2J", "Bob"],
                              [{"a": "break", "player": 0}])[0][0])
    assert "last: \\u202eEve\\x1b[2J breaks" in lines
    assert not any("\x1b" in ln or "\u202e" in ln for ln in lines)


def test_anything_a_board_sends_gives_words_or_nothing_never_an_error():
    """A state reply from a board speaking another firmware, or a damaged one: random records
    and states for every game; the view and watch never fail, and never show the record's
    JSON."""
    rng = random.Random(16)
    values = [None, 0, -1, 7, 10 ** 12, "", "x", "\x1b", [], [1, 2], {"a": 1}, True, 1.5]
    for g in games.IDS:
        rules = new_game(g, games.get(g).random_config or {})
        keys = sorted(set(rules.state()) | {"a", "side", "player", "beds", "pins", "fouls",
                                            "own", "opp", "bid", "took", "bidder", "trump",
                                            "points", "declared", "big", "n", "bed", "void"})
        for _ in range(300):
            rec = {k: rng.choice(values) for k in rng.sample(keys, rng.randint(0, 6))}
            if rng.random() < 0.7:
                rec["a"] = rng.choice(list(rules.ACTIONS) + ["undo", "boom", 3])
            state = dict(rules.state())
            for k in rng.sample(sorted(state), rng.randint(0, len(state))):
                state[k] = rng.choice(values)
            status = {"game": g, "players": rng.choice([[], ["Ann", "Bob"], "x", [None, 3]]),
                      "config": rng.choice([{}, None, "x", rules.config]), "state": state,
                      "rec": rec, "before": rng.choice([None, state, "x"]),
                      "undid": rng.choice([None, rec, 5]),
                      "last": rng.choice(["A 1", "P1 12C c9", "", None, 5]),
                      "note": rng.choice([None, "+A1 A9", "pins 1Z", 7]),
                      "warnings": rng.choice([[], ["PEG A0 -x"], ["PEG A1 -1", None]])}
            v = views.view(status, "t")
            assert type(v["last"]) is str and "{" not in v["last"]
            watch.render(status)
            watch.one_line(status)


# -- the same words everywhere ----------------------------------------------------------------

def test_watch_and_the_scoresheet_say_what_the_page_says():
    acts = [{"a": "start", "side": 0}, turn(0, 2, 2, 5), turn(1, 9, void="removed"),
            {"a": "undo"}]
    runs = play("shove-hapenny", {}, ["Ann", "Bob"], acts)
    head = {"game": "shove-hapenny", "config": runs[0][0]["config"], "players": ["Ann", "Bob"]}
    steps = [(i + 2, dict(s["rec"]), s["before"], s["state"]) for i, (s, _v) in enumerate(runs)]
    words = sheet.said(head, steps)
    assert words == [v["last"] for _s, v in runs]
    lines = sheet.scoresheet(head, steps, runs[-1][0]["state"])
    for w, line in zip(words, lines[2:]):
        assert line.endswith(w)
    for status, v in runs:
        assert "last: " + v["last"] in watch.render(status)
        assert "last: " + v["last"] in watch.one_line(status)


def test_every_game_has_one_description_for_every_action_of_a_random_game():
    from chalk.randomgame import random_match

    for g in games.IDS:
        n = 4 if g == "texas-42" else len(games.get(g).default_names(games.get(g).random_config))
        head, actions = random_match(g, seed=5, max_actions=80,
                                     players=["Ann", "Bob", "Cy", "Di"][:n])
        runs = play(g, head["config"], head["players"], [a for _s, _t, a in actions])
        for status, v in runs:
            assert v["last"], (g, status["rec"])
            assert "{" not in v["last"] and "P1" not in v["last"], v["last"]
            assert any(n in v["last"] for n in ("Ann", "Bob", "Cy", "Di", "Finished")), v["last"]


def test_a_game_without_a_module_is_shown_from_its_shape():
    v = views.view({"game": "crokinole", "players": ["Ann", "Bob"],
                    "state": {"scores": [3, 5], "next": 1, "winner": None},
                    "rec": {"a": "flick", "player": 1, "points": 20}}, "t")
    assert v["game_name"] == "crokinole" and [r["score"] for r in v["rows"]] == ["3", "5"]
    assert v["last"] == "flick: player Bob, points 20" and v["on_move"] == "on move: Bob"
    assert isinstance(games.get("crokinole"), common.Generic)


# -- from a real (simulated) board ---------------------------------------------------------------

def _status_after(board, pred, timeout=60.0):  # an upper bound only: each try waits for a reply
    import time

    deadline = time.monotonic() + timeout
    while True:
        st = board.request("state", timeout=20.0)
        if pred(st) or time.monotonic() > deadline:
            return st
        board.poll(0.1)  # the board's next frame, or a tenth of a second


def test_a_boards_state_reply_is_said_in_words_through_undo_and_a_power_cut(tmp_path):
    """The board's `state` reply carries its latest action, the state before it and what an
    undo took back (app.status()); the page says it with the players' names. After a power cut
    the board resumes from its journal and still says what was done last."""
    from chalk import remote
    from chalk.sim import Sim

    with Sim("shove-hapenny", flash=tmp_path / "flash", test_mode=True) as sim:
        with remote.connect(sim.port, timeout=20) as board:
            board.request("new", {"game": "shove-hapenny", "players": ["Ann", ["Bob", "Cy"]]})
            st = board.request("state")
            assert st["rec"] is None and views.view(st, "snug")["last"] == ""
            board.request("act", {"action": {"a": "start", "side": 0}})
            board.request("act", {"action": turn(0, 2, 2, 5)})
            st = board.request("state")
            v = views.view(st, "snug")
            assert v["last"] == "Ann: 2 in bed 2, 1 in bed 5" and st["last"] == "A 020010000"
            assert v["game_name"] == "Shove ha'penny" and v["race"] == "3 in each of the 9 beds"
            assert [r["name"] for r in v["rows"]] == ["Ann", "Bob & Cy"]
            # No peg was put in for that turn (it came from the host): the board says so, and
            # the page says what to do.
            assert v["notices"][:2] == ["A (Ann): put 2 pegs in bed 2 (the score there is 2)",
                                        "A (Ann): put a peg in bed 5 (the score there is 1)"]
            board.request("act", {"action": turn(1, 9, 9, 9, 9)})
            v = views.view(board.request("state"), "snug")
            assert v["last"] == "Bob & Cy: 4 in bed 9 (bed 9 full, 1 over to Ann)"
            board.request("undo")
            st = board.request("state")
            assert st["rec"]["a"] == "undo" and st["undid"]["beds"][8] == 4
            assert views.view(st, "snug")["last"] == ("Undone: Bob & Cy: 4 in bed 9 (bed 9 "
                                                      "full, 1 over to Ann)")
        sim.power_cut()
        with remote.connect(sim.port, timeout=60) as board:
            st = _status_after(board, lambda s: s.get("rec") is not None)
            assert st["rec"]["a"] == "undo"
            assert views.view(st, "snug")["last"].startswith("Undone: Bob & Cy: 4 in bed 9")
            assert "last: Undone: Bob & Cy: 4 in bed 9 (bed 9 full, 1 over to Ann)" in \
                watch.render(st)


def test_a_scorepad_shows_no_prompt_and_no_record_text(tmp_path):
    from chalk import remote
    from chalk.sim import Sim

    with Sim("scorepad", flash=tmp_path / "flash", test_mode=True, game="texas-42") as sim:
        with remote.connect(sim.port, timeout=20) as board:
            board.request("new", {"game": "texas-42", "players": ["Ann", "Bob", "Cy", "Di"]})
            board.request("act", {"action": {"a": "hand", "bidder": 1, "bid": 32,
                                             "took": 20}})
            st = board.request("state")
            assert st["last"].startswith("{")  # the board's screen text: a cut record
            v = views.view(st, "snug")
            assert v["last"] == ("Bob & Di bid 32 and were set, taking 20: Ann & Cy score 54 "
                                 "(T42-6)")
            assert [r["name"] for r in v["rows"]] == ["Ann & Cy", "Bob & Di"]
            assert v["note"] == "" and "?" not in json.dumps(v)  # the pad's prompt stays there
            assert v["race"] == "to 250" and v["game_name"] == "Texas 42"


def test_the_referees_rulings_in_words():
    # FP-17 void, FP-22 struck pins, FP-24 balls in contact: said, with the rule.
    from chalk import games

    fp = games.get("five-pins")
    st = {"scores": [0, 0], "sets": [0, 0], "set": 1, "ball_in_hand": False, "next": 0}
    names = ["Dasha", "Ivan"]
    text, _ = fp.describe({"a": "shot", "player": 0, "pins": "", "carom": 0, "fouls": [],
                           "void": 1, "struck": "1C"}, st, st, names, {})
    assert "void" in text and "FP-17" in text and "pins 1 and C" in text
    text, _ = fp.describe({"a": "shot", "player": 0, "pins": "2", "carom": 0, "fouls": [],
                           "struck": "C"}, st, st, names, {})
    assert "2 points" in text and "pin C struck" in text and "FP-22" in text
    text, _ = fp.describe({"a": "shot", "player": 1, "pins": "12C", "carom": 4, "fouls": [],
                           "in_contact": 1}, st, st, names, {})
    assert "nothing for the shooter" in text and "FP-24" in text and "points" not in text
    assert fp.parse_last("P2 void", st)["void"] == 1
    sp = games.get("seven-pins")
    st7 = {"totals": [300, 300], "next": 0, "winner": None}
    text, _ = sp.describe({"a": "shot", "player": 0, "pins": [], "pocketed": 0, "carom": 0,
                           "called": 0, "fouls": [], "void": 1}, st7, st7, names, {})
    assert "void" in text and "nothing counts" in text
    nv = games.get("novuss")
    stn = {"left": [8, 8], "debt": [0, 0], "next": 1, "winner": None}
    text, _ = nv.describe({"a": "shot", "side": 0, "own": 0, "opp": 0, "fouls": [], "void": 1},
                          stn, stn, names, {})
    assert "void" in text and "Ivan to play" in text
