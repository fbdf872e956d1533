# The board's heap gauge: free heap and the largest block it can give, for the status reply,
# `chalk watch`, the service view and the warning a board near the end of its heap shows
# (docs/serial-protocol.md, `state`). Loaded when first asked. Runs on MicroPython and CPython.
#
# MicroPython tells the free heap (gc.mem_free) but not its largest free block, which is what
# runs out first on a heap left in pieces: a frame of 1-2 KB needs one block. The block is found
# by asking for blocks from the free heap (16 KB at most) downwards, 1/16 smaller each time,
# with the collector off so that a refused block costs no collection; the first block given is
# the answer (within 1/16), and is garbage at once. On an ESP32 a block the heap does not have
# may make MicroPython take more RAM from the system heap (as any allocation that big would):
# the answer is then what the board can still allocate, which is what matters.

import gc

BLOCK_MAX = 16384  # blocks are looked for up to this size: a board needs 2 KB in one piece


def largest_block(free):
    """The largest block (bytes, to 1/16) the heap gives now, at most `free` and BLOCK_MAX
    (asking for more would hold a big block a while: a stale reference on the stack keeps the
    probe alive until the next collection that no longer finds it)."""
    out = [0]
    for _ in probes(free, out):
        pass
    return out[0]


def probes(free, out):
    """largest_block() a probe at a time (a generator: each `yield` ends a step, one block asked
    for), its answer put in out[0]: on a board, the probes are steps between scans, each a look
    at the whole heap for a run of free blocks (a call into C, longer the bigger the heap). The
    collector is off only during a probe: the rest of the board allocates between two, as it
    would at any time."""
    size = free if free < BLOCK_MAX else BLOCK_MAX
    while size >= 64:
        was = gc.isenabled()
        gc.disable()
        try:
            bytearray(size)
            out[0] = size
            return
        except MemoryError:
            size -= size >> 4 if size >= 1024 else 64
        finally:
            if was:
                gc.enable()
        yield
    out[0] = 0


# True: the heap was collected a moment ago, in a step of its own (the link collects before a
# state reply): measure() does not collect again, once.
fresh = [False]


def measure():
    """(free, largest block) in bytes, after a collection; (None, None) where the port does
    not tell (CPython)."""
    out = [None, None]
    for _ in measuring(out):
        pass
    return out[0], out[1]


def measuring(out):
    """measure() a step at a time (a generator: the probes of largest_block a step each), the
    answer put in out[0] (free) and out[1] (largest block)."""
    if not hasattr(gc, "mem_free"):
        return
    if fresh[0]:
        fresh[0] = False
    else:
        gc.collect()
        yield
    free = gc.mem_free()  # (a look at the whole heap too: a step of its own)
    yield
    block = [0]
    for _ in probes(free, block):
        yield
    out[0] = free
    out[1] = block[0]
