# Novuss (rules/novuss.md, NV-1..NV-7).
# This folder is the whole game on the board: rules.py, referee.py, screen.py and board.py
# (games/__init__.py, the registry, says what each holds).
