# Seven pins (rules/seven-pins.md, SP-1..SP-16).
# This folder is the whole game on the board: rules.py, referee.py, screen.py and board.py
# (games/__init__.py, the registry, says what each holds).
