"""Random legal games, for benchmarks and sample logs: a seeded player at the table.

Each action is checked by the rules as it is made, so every log this writes replays cleanly.
What a player of each game does is that game's (chalk/games/: random_config, random_opening,
random_action).
"""

import random

from chalk import games
from scoreboard import matchlog
from scoreboard.rules import RuleError, new_game


def random_match(game_id, seed=1, max_actions=10**6, config=None, accuracy=0.5, undo_rate=0.02,
                 players=None, started="2026-11-28T20:00:00Z"):
    """A match log (header, [(seq, t, action)]) of a random legal game, played to its end or
    until max_actions actions."""
    g = games.get(game_id)
    if g.random_config is None:
        raise ValueError("no random player for %s" % game_id)
    opening = g.random_opening
    cfg = dict(g.random_config, **(config or {}))
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
        opening = dict(opening)
        game.apply(opening)
        push(opening)
    while len(actions) < max_actions and game.outcome() is None:
        if len(game) > 1 and rng.random() < undo_rate:
            game.apply({"a": "undo"})
            push({"a": "undo"})
            continue
        action = g.random_action(rng, game.state(), accuracy)
        try:
            game.apply(action)
        except RuleError:
            continue  # not a legal action here: the player tries again
        push(action)
    head = matchlog.header(game_id, cfg, players or [], started, table="demo")
    return head, actions


def __getattr__(name):
    # GAMES: {game id: (config, opening action or None, random_action(rng, state, accuracy))}
    # of every game with a random player, read from the registry when first asked for.
    if name == "GAMES":
        return {g.id: (g.random_config, g.random_opening, g.random_action)
                for g in games.every() if g.random_config is not None}
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
