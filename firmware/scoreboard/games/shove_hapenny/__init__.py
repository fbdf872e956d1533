# Shove ha'penny (rules/shove-hapenny.md, SH-1..SH-18).
# This folder is the whole game on the board: rules.py, referee.py, screen.py and board.py
# (games/__init__.py, the registry, says what each holds).
