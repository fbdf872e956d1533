# The setup every heap-lock script shares (tests/mp/*_heaplock.py): drive a scan step for many
# 5 ms ticks between micropython.heap_lock() and heap_unlock() (any allocation there raises
# MemoryError), check the lock is real, and run the same work unlocked with the GC off to see
# that no garbage is left. A script says only what its step does and what it counts.

import gc
import sys

import micropython

T0 = (1 << 30) - 30000  # the ms counter wraps during the locked run


def drive(step, k0, n):
    """step(k) for k in k0 .. k0 + n - 1 (a while loop: nothing allocated per tick)."""
    k = k0
    end = k0 + n
    while k < end:
        step(k)
        k += 1


def locked(step, k0, n):
    """drive() with the heap locked; the MemoryError it raised, or None. (In a function:
    binding the exception to a local allocates nothing; a new global would.)"""
    micropython.heap_lock()
    try:
        drive(step, k0, n)
    except MemoryError as e:
        micropython.heap_unlock()
        return e
    micropython.heap_unlock()
    return None


def locked_or_exit(step, k0, n, at):
    """locked(); on a MemoryError print where (at(): the step it was in) and exit 1."""
    err = locked(step, k0, n)
    if err is not None:
        print("MEMORY_ERROR at step", at())
        sys.print_exception(err)
        sys.exit(1)


def lock_is_real():
    """1 if the same lock makes an ordinary allocation fail (the check cannot pass vacuously)."""
    caught = 0
    micropython.heap_lock()
    try:
        junk = [caught, caught]  # noqa: F841
    except MemoryError:
        caught = 1
    micropython.heap_unlock()
    return caught


def garbage(step, k0, n):
    """Bytes left behind by n more steps, unlocked, with the GC off: frames MicroPython briefly
    takes from the heap are given back, so the heap must end where it started."""
    gc.collect()
    gc.disable()
    before = gc.mem_alloc()
    drive(step, k0, n)
    after = gc.mem_alloc()
    gc.enable()
    return after - before
