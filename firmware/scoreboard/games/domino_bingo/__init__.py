# Domino bingo on a scorepad (rules/domino-bingo.md, DB-1..DB-8).
# This folder is the whole game on the board: rules.py, referee.py, screen.py and board.py
# (games/__init__.py, the registry, says what each holds).
