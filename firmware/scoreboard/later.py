# The modules a board loads only in play, and their names interned at boot (main.py; the checks
# and the bench that boot as main.py does import it too). Runs on MicroPython and CPython.
#
# The compact frames, the heap gauge, checkpoints, the line recorder, injected input, the signer,
# the link's stepwise work (a journal stream), coded frames (a noisy line), the service view and
# the link's answer when its heap has no block for its work (linkshort: then of all times its
# import must not need a bigger table of names). MicroPython keeps every name a loaded module
# brings (.mpy files: not those of a frozen image) in a table that grows by doubling, one block
# at a time: on the unix port 14 KB in one piece when it passes some 1,250 names, which these
# modules take it past. Loaded at boot and let go at once, they make the table grow now, while
# the heap is in one piece, and not mid-game, when a fragmented heap may have no block that big
# and the import (a reply, a signature) would fail.

LATER = ("pack", "gauge", "spill", "record", "inject", "sign", "p256", "signwork", "linkwork",
         "fec", "rules.refill", "service", "linkshort")


def intern_later():
    """Import each module of LATER and let it go again: only its names stay (this module goes
    too: the caller collects the heap after)."""
    import sys

    from .games import forget

    for name in LATER:
        had = list(sys.modules)
        try:
            __import__("scoreboard." + name)
        except MemoryError:
            pass  # not even at boot: it is loaded (or refused) when it is needed
        # It goes, and so does every module it brought in (inject brings the link, signwork
        # p256): none of them stays in RAM before it is needed.
        for m in list(sys.modules):
            if m not in had:
                forget(m)
    forget("scoreboard.later")
