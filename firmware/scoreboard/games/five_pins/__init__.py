# Five pins (rules/five-pins.md, FP-1..FP-26).
# This folder is the whole game on the board: rules.py, referee.py, screen.py and board.py
# (games/__init__.py, the registry, says what each holds).
