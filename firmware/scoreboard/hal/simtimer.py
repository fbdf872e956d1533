# The simulated board's timers: what machine.Timer with a soft callback is on the ESP32
# (hal/esp32.py) for a keypad or a peg chain (SimBoard.sampler), and the table's own time
# (start_world: its trace, changes injected by the host). A thread sleeps until the next period
# or change and schedules the callback with micropython.schedule, so it runs on the main thread
# between two bytecodes of whatever the main loop is doing, as the ESP32 runs an interrupt's
# handler or a timer's callback: a long step in Python (a resync, a reply, a stretched step)
# does not keep the board from seeing its lines; only a long call into C does. MicroPython unix
# port only (CPython has no scheduler: the loop does it there). Loaded by the live loop only.

import _thread
import select

import micropython


class SimTimer:
    """Every period_ms, or sooner: `due` (an array whose [0] the callback sets) is the ms until
    the callback wants to run next (the simulated world's next change)."""

    def __init__(self, period_ms, callback, due=None):
        self._cb = callback
        self._period = period_ms
        self._due = due
        self._run = True
        self.missed = 0  # periods whose callback could not be scheduled (the queue was full)
        _thread.start_new_thread(self._loop, ())

    def _loop(self):
        schedule = micropython.schedule
        cb = self._cb
        period = self._period
        sleep = select.poll().poll  # a real sleep (time.sleep_ms polls every 0.5 ms here)
        due = self._due
        while self._run:
            ms = period
            if due is not None and 0 < due[0] < period:
                ms = due[0]
            sleep(ms)
            try:
                schedule(cb, None)
            except RuntimeError:
                self.missed += 1

    def deinit(self):
        self._run = False


def start_world(board):
    """Move the board's world (board.world: callables that apply what is due and return the ms
    until their next change, or None) and run its timer (sampler below) from one thread of its
    own, each on the main thread at its time whatever the loop is doing; None on CPython or
    with nothing to move. Either way the loop calls move_world() at each pass, before it looks
    at the lines."""
    import sys

    if sys.implementation.name != "micropython" or not (board.world or _timer(board)):
        return None
    from array import array

    board.due = array("i", [1])
    board.move = lambda _arg: move_world(board)  # made once
    return SimTimer(50, board.move, board.due)


def _timer(board):
    return getattr(board, "timer", None)


def move_world(board):
    """Apply what is due in the board's world: from the world's thread (a scheduled callback)
    and from the main loop before each look at the lines (serve.py). A callback that comes
    while the loop's own call runs (between two of its bytecodes) leaves the work to it."""
    if board.moving:
        return
    board.moving = True
    try:
        _move(board)
    finally:
        board.moving = False


def _move(board):
    due = 50
    for move in board.world:
        d = move()
        if d is not None and d < due:
            due = d
    timer = _timer(board)
    if timer is not None and timer.cb is not None:
        import time

        now = time.ticks_ms()
        wait = time.ticks_diff(timer.next, now)
        if wait <= 0:
            timer.cb(None)
            timer.next = time.ticks_add(now if wait < -timer.period else timer.next,
                                        timer.period)
            wait = timer.period
        if wait < due:
            due = wait
    if getattr(board, "due", None) is not None:
        board.due[0] = due if due > 1 else 1


def trace_world(player):
    """A TracePlayer as part of the world: poll() it, then the ms until its next record (None:
    the trace is over)."""
    player.poll()
    t = player.next_t()
    if t is None:
        return None
    wait = t - player.elapsed()
    return wait if wait > 0 else 0


class _Timer:
    """SimBoard.sampler's timer: run by the world's thread (one thread for both: two threads
    scheduling on one heap fragment the 64-bit port's heap)."""

    def __init__(self, period_ms, callback):
        import time

        self.period = period_ms
        self.cb = callback
        self.next = time.ticks_ms()

    def deinit(self):
        self.cb = None


def sampler(board, period_ms, callback):
    """SimBoard.sampler: a timer the world's thread runs (start_world)."""
    board.timer = _Timer(period_ms, callback)
    return board.timer
