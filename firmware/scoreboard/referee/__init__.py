# Referees: per game, turn input events (buttons, the pin-fall latch, the peg grid) into the
# rules' actions. A referee never changes the score itself: it proposes actions to the app,
# which journals them and applies them through the rules (design: the flow of data).
#
# A game's referee is games/<game>/referee.py (its `Referee`), found through the one registry
# like its rules; what referees share is here (BaseReferee), in foulist.py (the foul list of the
# pin and puck tables), pintable.py (the tilt-switch tables' shot) and keyentry.py (a
# scorepad's keys).

from ..rules import game_part


def referee_for(game):
    return game_part(game, "referee", "no referee for game %r").Referee


class BaseReferee:
    """What every referee offers the app. `app` gives: game (the rules), submit(action) ->
    (state, error text or None), button(ident) -> button name or None, now."""

    def __init__(self, app):
        self.app = app
        self.note = None  # a pending choice to show (e.g. "void: touched")

    def on_event(self, kind, ident, value, t):
        """One input event from the sense ring."""

    def warnings(self):
        """Warnings to show until put right (e.g. a peg mismatch)."""
        return []

    def changed(self):
        """The game changed (action, undo, new game, boot): recompute what depends on it."""

    def status(self):
        return self.note

    def screen(self):
        """Rows that take the whole screen for now (e.g. a list to choose from), or None."""
        return None
