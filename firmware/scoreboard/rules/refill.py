# The state before a game's latest action, refolded a slice at a time between the main loop's
# scans (rules/base.py Game.refill): loaded only when no kept state holds it (more undos in a
# row than are kept), so that a board that never needs it keeps its code out of RAM. Runs on
# MicroPython and CPython.

_SLICE = 8  # actions refolded a call (a step between two scans)


def step(game, target, keep):
    """One slice of refolding the state after the first `target` actions of `game` (the one
    before its latest); kept in its states for undo (at most `keep` of them) once whole. True
    while there is more."""
    codes = game._codes
    f = game._fill
    K = codes._BLOCK
    b = target // K
    if f is None or f[0] != game._gen:
        game._fill = [game._gen, target, codes.checkpoint(b), 0]
        return True  # (the checkpoint's copy: a call of its own)
    s = f[2]
    i = f[3]
    stop = target - b * K
    end = i + _SLICE if i + _SLICE < stop else stop
    blk = codes.block(b)
    run = game.step
    while i < end:
        run(s, blk[i] if codes._words == 1 else codes.code(blk, i))
        i += 1
    f[3] = i
    if i < stop:
        return True
    game._fill = None
    backs = game._backs
    if len(backs) >= keep:
        backs.pop(0)
    backs.append((target, s))
    return False
