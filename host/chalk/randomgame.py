"""Random legal games, for benchmarks and sample logs: a seeded player at the table.

Each action is checked by the rules as it is made, so every log this writes replays cleanly.
"""

import random

from scoreboard import matchlog
from scoreboard.rules import RuleError, new_game

PINS = "1234C"
FOULS_COMMON = ["miss", "red_first", "ball_off", "touch", "pins_first", "moving"]


def _shove_action(rng, state, accuracy):
    side = state["next"]
    if rng.random() < 0.02:
        side = 1 - side  # the wrong side plays (SH-18)
    beds = [0] * 9
    for _ in range(5):
        if rng.random() < accuracy:
            # Skilled players aim where they still need scores, but coins stray.
            need = [b for b in range(9) if state["beds"][side][b] < 3] or list(range(9))
            b = rng.choice(need) if rng.random() < 0.7 else rng.randrange(9)
            beds[min(8, max(0, b + rng.choice((-1, 0, 0, 0, 1))))] += 1
    action = {"a": "turn", "side": side, "beds": beds}
    if rng.random() < 0.03:
        action["void"] = rng.choice(("touched", "removed"))
    return action


def _five_pins_action(rng, state, accuracy):
    player = state["next"]
    roll = rng.random()
    if roll < 0.12:
        return {"a": "shot", "player": player, "pins": "", "carom": 0,
                "fouls": [rng.choice(FOULS_COMMON)]}
    down = "".join(p for p in PINS if rng.random() < accuracy * (0.6 if p == "C" else 0.35))
    carom = rng.choice((0, 0, 0, 3, 4)) if rng.random() < accuracy else 0
    fouls = ["pin"] if down and rng.random() < 0.1 else []
    return {"a": "shot", "player": player, "pins": down, "carom": carom, "fouls": fouls}


SEVEN_PINS = ("K", "S1", "S2", "S3", "S4", "M1", "M3")
SEVEN_PINS_FOULS = ["miss", "cue_pocketed", "no_cushion", "cue_pins", "off_table"]


def _seven_pins_action(rng, state, accuracy):
    player = state["next"]
    if rng.random() < 0.12:
        return {"a": "shot", "player": player, "pins": [], "pocketed": 0, "carom": 0,
                "called": 0, "fouls": [rng.choice(SEVEN_PINS_FOULS)]}
    down = [p for p in SEVEN_PINS if rng.random() < accuracy * (0.2 if p[0] == "S" else 0.3)]
    pocketed = rng.choice((0, 0, 0, 1, 2)) if rng.random() < accuracy else 0
    carom = 1 if rng.random() < accuracy * 0.3 else 0
    called = 1 if rng.random() < 0.05 else 0
    fouls = ["cue_pins"] if down and rng.random() < 0.08 else []
    return {"a": "shot", "player": player, "pins": down, "pocketed": pocketed, "carom": carom,
            "called": called, "fouls": fouls}


NOVUSS_FOULS = ["no_own_touch", "striker_pocketed", "opp_first", "own_off", "direct_in_zone"]


def _novuss_action(rng, state, accuracy):
    side = state["next"]
    own = 0
    for _ in range(min(2, state["left"][side])):
        own += rng.random() < accuracy * 0.6
    opp = 1 if state["left"][1 - side] and rng.random() < 0.08 else 0
    fouls = [rng.choice(NOVUSS_FOULS)] if rng.random() < 0.1 else []
    return {"a": "shot", "side": side, "own": own, "opp": opp, "fouls": fouls}


def _texas_42_action(rng, state, accuracy):
    bid = rng.choice((30, 30, 31, 32, 33, 34, 35, 36, 38, 40, 42, 84)) if rng.random() < 0.97 \
        else 168
    if rng.random() < 0.6 + 0.3 * accuracy:  # made (T42-6)
        took = 42 if bid >= 42 else rng.randint(bid, 42)
    else:
        took = rng.randint(max(0, min(bid, 42) - 12), min(bid, 42) - 1)
    return {"a": "hand", "bidder": rng.randrange(2), "bid": bid, "took": took}


_DB_TOTALS = (143, 135, 138, 131, 134, 147, 140)  # DB-6


def _domino_bingo_action(rng, state, accuracy):
    trump = rng.randrange(7)
    a = rng.randint(0, _DB_TOTALS[trump])
    b = rng.randint(0, _DB_TOTALS[trump] - a)
    declared = [rng.choice((0, 0, 0, 0, 0, 20, 20, 40, 50, 60)) for _ in (0, 1)]
    big = [1 if rng.random() < 0.08 else 0 for _ in (0, 1)]  # bingo beat a trump double (DB-3)
    return {"a": "hand", "trump": trump, "points": [a, b], "declared": declared, "big": big}


def _tally_action(rng, state, accuracy):
    player = rng.randrange(len(state["counts"]))
    if rng.random() < 0.05:
        return {"a": "add", "player": player, "n": -1}  # a mistaken count put right (TL-2)
    return {"a": "add", "player": player, "n": rng.choice((1, 1, 1, 2, 3))}


GAMES = {
    "shove-hapenny": ({"sides": 2, "per_side": 1, "overflow": "auto"},
                      {"a": "start", "side": 0}, _shove_action),
    "five-pins": ({"target": 60, "sets": 3, "pin_foul_penalty": 0},
                  {"a": "break", "player": 0}, _five_pins_action),
    "seven-pins": ({"start": 300}, {"a": "break", "player": 0}, _seven_pins_action),
    "novuss": ({"per_side": 1, "pucks": 8}, {"a": "start", "side": 0}, _novuss_action),
    # No opening action: the first hand or count is the game's first action.
    "texas-42": ({"target": 250}, None, _texas_42_action),
    "domino-bingo": ({"big_points_to_win": 7}, None, _domino_bingo_action),
    "tally": ({"players": 3, "target": 15, "kind": "caps"}, None, _tally_action),
}


def random_match(game_id, seed=1, max_actions=10**6, config=None, accuracy=0.5, undo_rate=0.02,
                 players=None, started="2026-11-28T20:00:00Z"):
    """A match log (header, [(seq, t, action)]) of a random legal game, played to its end or
    until max_actions actions."""
    default_config, opening, make = GAMES[game_id]
    cfg = dict(default_config, **(config or {}))
    rng = random.Random(seed)
    game = new_game(game_id, cfg)
    actions = []
    t = 0

    def push(action):
        nonlocal t
        if actions:
            t += rng.randint(4000, 40000)
        actions.append((len(actions) + 1, t, action))

    if opening is not None:
        game.apply(opening)
        push(opening)
    while len(actions) < max_actions and game.outcome() is None:
        if len(game) > 1 and rng.random() < undo_rate:
            game.apply({"a": "undo"})
            push({"a": "undo"})
            continue
        action = make(rng, game.state(), accuracy)
        try:
            game.apply(action)
        except RuleError:
            continue  # not a legal action here: the player tries again
        push(action)
    head = matchlog.header(game_id, cfg, players or [], started, table="demo")
    return head, actions
