# The rules' entry point: rules_for(game id) -> that game's Rules class, found through the one
# registry (scoreboard/games/__init__.py: games/<game>/rules.py); base.py holds what every
# game's rules share (Game, RuleError, ConfigError, the race to a target).

from .. import games
from .base import ConfigError, Game, RuleError  # noqa: F401


def game_part(game, name, missing):
    """The part `name` of a game's package (games/<game>/<name>.py), or ConfigError naming the
    id; `missing` leads that message, with %r for the game id."""
    if type(game) is not str or not game:
        raise ConfigError("game must be a game id string (one of %s), not %r"
                          % (", ".join(games.IDS), game))
    mod = games.part(game, name)
    if mod is None:
        raise ConfigError((missing + ": known games: %s") % (game, ", ".join(games.IDS)))
    return mod


def rules_for(game):
    """The Rules class of a game id, or ConfigError naming the id."""
    return game_part(game, "rules", "unknown game %r").Rules


def new_game(game, config=None):
    return rules_for(game)(config)
