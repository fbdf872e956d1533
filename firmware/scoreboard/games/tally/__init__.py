# Tally games on a scorepad (rules/other-seed-games.md, TL-1..TL-5).
# This folder is the whole game on the board: rules.py, referee.py, screen.py and board.py
# (games/__init__.py, the registry, says what each holds).
