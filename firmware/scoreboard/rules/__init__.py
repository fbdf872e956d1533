# Game registry. A game id maps to the module of the same name ("five-pins" -> five_pins.py),
# which defines `Rules`, a subclass of base.Game. Adding a game is adding that one module.

from .base import ConfigError, Game, RuleError  # noqa: F401


def rules_for(game):
    """The Rules class of a game id, or ConfigError naming the id."""
    if type(game) is not str or not game or not game.replace("-", "").isalpha():
        raise ConfigError("game must be a game id such as \"five-pins\", not %r" % (game,))
    try:
        mod = __import__("scoreboard.rules." + game.replace("-", "_"), None, None, ("Rules",))
    except ImportError:
        raise ConfigError("unknown game %r: no module scoreboard/rules/%s.py"
                          % (game, game.replace("-", "_")))
    return mod.Rules


def new_game(game, config=None):
    return rules_for(game)(config)
