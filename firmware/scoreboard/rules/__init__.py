# Game registry. A game id maps to the module of the same name ("five-pins" -> five_pins.py),
# which defines `Rules`, a subclass of base.Game. Adding a game is adding that one module.

from .base import ConfigError, Game, RuleError  # noqa: F401


def _game_id(game):
    """Letters, digits and "-" ("texas-42"), starting with a letter: a module name once each
    "-" is "_"."""
    if type(game) is not str or not game or not game[0].isalpha():
        return False
    for ch in game:
        if not (ch.isalpha() or ch.isdigit() or ch == "-"):
            return False
    return True


def game_module(package, game, missing):
    """The module scoreboard/<package>/<game id with _>.py, or ConfigError naming the id;
    `missing` leads that message, with %r for the game id."""
    if not _game_id(game):
        raise ConfigError("game must be a game id such as \"five-pins\", not %r" % (game,))
    name = game.replace("-", "_")
    try:
        return __import__("scoreboard.%s.%s" % (package, name), None, None, (name,))
    except ImportError:
        raise ConfigError((missing + ": no module scoreboard/%s/%s.py")
                          % (game, package, name))


def rules_for(game):
    """The Rules class of a game id, or ConfigError naming the id."""
    return game_module("rules", game, "unknown game %r").Rules


def new_game(game, config=None):
    return rules_for(game)(config)
