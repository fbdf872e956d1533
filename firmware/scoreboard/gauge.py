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
    size = free if free < BLOCK_MAX else BLOCK_MAX
    was = gc.isenabled()
    gc.disable()
    try:
        while size >= 64:
            try:
                bytearray(size)
                return size
            except MemoryError:
                size -= size >> 4 if size >= 1024 else 64
        return 0
    finally:
        if was:
            gc.enable()


# True: the heap was collected a moment ago, in a step of its own (the link collects before a
# state reply): measure() does not collect again, once.
fresh = [False]


def measure():
    """(free, largest block) in bytes, after a collection; (None, None) where the port does
    not tell (CPython)."""
    if not hasattr(gc, "mem_free"):
        return None, None
    if fresh[0]:
        fresh[0] = False
    else:
        gc.collect()
    free = gc.mem_free()
    return free, largest_block(free)
