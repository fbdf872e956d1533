"""The host's one registry of games: game id -> its module, chalk/games/<id with "_">.py.

Each module defines `Game`, a subclass of common.HostGame carrying everything host-side that is
that game's (names and words, rows for the pages and `chalk watch`, scoresheet, CSV, statistics,
random games, sensor traces). Generic code asks get(game_id) and never tests which game it is;
a game id with no module here gets common.Generic, which shows any game from its state's shape.
Modules are imported when first asked for (docs/adding-a-game.md).
"""

import importlib

from chalk.games.common import Generic

# Every game the host knows, in the order the tools list them.
IDS = ("shove-hapenny", "five-pins", "seven-pins", "novuss", "texas-42", "domino-bingo", "tally")

_loaded = {}


def get(game_id):
    """The HostGame of a game id (common.Generic for one with no module here)."""
    g = _loaded.get(game_id)
    if g is None:
        if game_id in IDS:
            module = importlib.import_module("chalk.games." + game_id.replace("-", "_"))
            g = module.Game()
        else:
            g = Generic(game_id)
        _loaded[game_id] = g
    return g


def every():
    """Every known game's HostGame, in IDS order."""
    return [get(i) for i in IDS]


def default_names():
    """Every name a board fills in when none was given (A, B, P1 ... P9, S1, S2): not people."""
    out = set()
    for g in every():
        out.update(g.default_names(g.random_config or {}))
        out.update(g.default_names({"players": 9}))
    return out
