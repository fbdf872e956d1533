# Game registry. A game id maps to the module of the same name ("five-pins" -> five_pins.py),
# which defines `Rules`, a subclass of base.Game. Adding a game is adding that one module.

from .base import ConfigError, Game, RuleError  # noqa: F401


def _game_id(game):
    """ASCII letters, digits and "-" ("texas-42"), starting with a letter: a module name once
    each "-" is "_"."""
    if type(game) is not str or not game:
        return False
    # Over the bytes: a str's characters taken out one by one are interned on MicroPython, and
    # a host may send any text as a game id.
    try:
        b = game.encode()
    except UnicodeError:  # a lone surrogate (CPython)
        return False
    if not (65 <= b[0] <= 90 or 97 <= b[0] <= 122):
        return False
    for c in b:
        if not (65 <= c <= 90 or 97 <= c <= 122 or 48 <= c <= 57 or c == 45):
            return False
    return True


def game_module(package, game, missing):
    """The module scoreboard/<package>/<game id with _>.py, or ConfigError naming the id;
    `missing` leads that message, with %r for the game id."""
    if not _game_id(game):
        raise ConfigError("game must be a game id such as \"five-pins\", not %r" % (game,))
    name = game.replace("-", "_")
    if not _present(package, name):
        raise ConfigError((missing + ": no module scoreboard/%s/%s.py")
                          % (game, package, name))
    try:
        return __import__("scoreboard.%s.%s" % (package, name), None, None, (name,))
    except ImportError:
        raise ConfigError((missing + ": no module scoreboard/%s/%s.py")
                          % (game, package, name))


def _present(package, name):
    """False when the package's folder holds no module `name`, looked for without importing:
    on MicroPython an import, even one that fails, interns its names for good, and a host may
    send any game id. A package with no folder to look in (CPython's, frozen code) is asked by
    importing."""
    import sys

    path = getattr(sys.modules.get("scoreboard." + package), "__path__", None)
    if type(path) is not str or path.startswith(".frozen"):
        return True
    import os

    for ext in (".mpy", ".py"):
        try:
            os.stat(path + "/" + name + ext)
            return True
        except OSError:
            pass
    return False


def rules_for(game):
    """The Rules class of a game id, or ConfigError naming the id."""
    return game_module("rules", game, "unknown game %r").Rules


def new_game(game, config=None):
    return rules_for(game)(config)
