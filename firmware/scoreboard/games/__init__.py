# The board's one registry of games: a game id maps to its package, scoreboard/games/<id with
# "_" for "-">/ ("texas-42" -> games/texas_42/), which holds everything of that game the board
# needs, one part a module (docs/adding-a-game.md):
#
#   rules.py    `Rules`, a rules.base.Game: the pure rules (the host replays with them too)
#   referee.py  `Referee`, a referee.BaseReferee: input events -> the rules' actions
#   screen.py   `rows(state, view, players)`: the score on the 16x8 screen; `short(rec)`: the
#               latest action in at most 16 characters (the screen's foot, `last` in status)
#   board.py    what a board for it takes: SENSOR, BUTTONS, REQUIRED, PINS, POCKETS, COLOUR
#
# Generic code (app, display, board config, hal, sense, the host) asks this registry and never
# tests which game it is. Parts are imported when first asked for, one at a time, so a board
# loads the parts of the one game it plays, never another game's code (heap). Nothing here
# imports a part at load time, and nothing here imports the rules: they import this.

IDS = ("shove-hapenny", "five-pins", "seven-pins", "novuss", "texas-42", "domino-bingo", "tally")


def module_name(game):
    """The package name of a game id of the registry ("texas-42" -> "texas_42"), else None."""
    if type(game) is not str or game not in IDS:
        return None
    return game.replace("-", "_")


def part(game, name):
    """The module scoreboard/games/<game>/<name>.py, imported now; None for a game id the
    registry does not list. A part the game's package lacks raises ImportError."""
    mod = module_name(game)
    if mod is None:
        return None
    return __import__("scoreboard.games.%s.%s" % (mod, name), None, None, (name,))


def with_sensor(sensor):
    """The game ids whose boards read `sensor` ("pins", "pegs", "keypad", "none"), in IDS
    order: the games a scorepad may switch between, say. Each board.py this loads is let go
    again (unless it was loaded before): a board keeps no other game's spec in its RAM."""
    import sys

    out = []
    for g in IDS:
        pkg = "scoreboard.games." + module_name(g)
        had = (pkg in sys.modules, pkg + ".board" in sys.modules)
        if part(g, "board").SENSOR == sensor:
            out.append(g)
        if not had[1]:
            forget(pkg + ".board")
        if not had[0]:
            forget(pkg)
    return out


def forget(name):
    """Let a module go (sys.modules and its package's attribute), so its code frees RAM."""
    import sys

    sys.modules.pop(name, None)
    pkg, _, attr = name.rpartition(".")
    parent = sys.modules.get(pkg)
    if parent is not None and hasattr(parent, attr):
        delattr(parent, attr)
