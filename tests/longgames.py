"""Long games of every game, for the memory tests and `make bench`: n actions of a game that
never ends (a random legal game whose winning actions are played again differently), with undos
among them, journaled as a board journals them.

A random game of most games ends long before 10,000 actions whatever its config (novuss runs out
of pucks); a board must still hold one that does not, so these are built to."""

import json
import random

from chalk.randomgame import GAMES
from scoreboard.rules import ConfigError, new_game

# The configs that let a game run longest (each within its rules' bounds).
LONG = {"target": 1000000, "big_points_to_win": 1000000, "start": 10000000}
BOARDS = {"shove-hapenny": "shove-hapenny", "five-pins": "five-pins",
          "seven-pins": "seven-pins", "novuss": "novuss", "texas-42": "scorepad",
          "domino-bingo": "scorepad", "tally": "scorepad"}
ALL = tuple(BOARDS)


def long_config(game_id):
    cfg = dict(GAMES[game_id][0])
    for key in LONG:
        if key in cfg:
            for v in (LONG[key], LONG[key] // 10, LONG[key] // 100, LONG[key] // 1000):
                try:
                    new_game(game_id, dict(cfg, **{key: v}))
                except ConfigError:
                    continue
                cfg[key] = v
                break
    if game_id == "tally":
        cfg["target"] = None  # TL-4: counts until `finish`
    return cfg


def endless(game_id, n, seed=1, undo_rate=0.02):
    """(header, [(seq, t, action)]) of exactly n actions; the game is still on after the last."""
    from scoreboard import matchlog

    cfg = long_config(game_id)
    _, opening, make = GAMES[game_id]
    rng = random.Random(seed)
    game = new_game(game_id, cfg)
    out = []
    t = 0

    def push(action):
        nonlocal t
        game.apply(action)
        t += rng.randint(4000, 40000) if out else 0
        out.append((len(out) + 1, t, action))

    if opening is not None:
        push(opening)
    tries = 0
    while len(out) < n:
        if len(game) > 1 and (rng.random() < undo_rate or tries > 40):
            push({"a": "undo"})
            tries = 0
            continue
        action = make(rng, game.state(), 0.3)
        if action.get("a") == "finish":
            continue
        try:
            game.apply(action)
        except Exception:
            tries += 1
            continue
        ended = game.outcome() is not None
        game.apply({"a": "undo"})
        if ended:
            tries += 1
            continue  # that one would end the game: the player plays it again differently
        push(action)
        tries = 0
    head = matchlog.header(game_id, cfg, [], "2026-11-28T20:00:00Z", table="long")
    return head, out


def journal(flash, head, actions):
    """Write the game into a board's journal at `flash` (the top of a simulated board's flash)."""
    from scoreboard.journal import Journal

    j = Journal(str(flash))
    j.boot()
    h = dict(head)
    h.pop("started", None)
    j.new_game(h)
    for _seq, t, action in actions:
        j.append(dict(action, t=t))
    j.close()


def board_config(root, game_id, head, path):
    """A board config for `game_id` (its own board, the scorepad for the keypad games) playing
    the game's config; written to `path`."""
    cfg = json.loads((root / "firmware" / "boards" / (BOARDS[game_id] + ".json")).read_text())
    cfg["game"] = game_id
    cfg["game_config"] = head["config"]
    path.write_text(json.dumps(cfg))
    return path
