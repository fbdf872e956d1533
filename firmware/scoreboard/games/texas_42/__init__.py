# Texas 42 on a scorepad (rules/texas-42.md, T42-1..T42-7).
# This folder is the whole game on the board: rules.py, referee.py, screen.py and board.py
# (games/__init__.py, the registry, says what each holds).
