# The simulated board's sampling timer (hal.sim SimBoard.sampler): what machine.Timer with a soft
# callback is on the ESP32 (hal/esp32.py). A thread wakes every period and schedules the
# callback with micropython.schedule, so it runs on the main thread between two bytecodes of
# whatever the main loop is doing, as the ESP32 runs a timer's callback: a long step in Python
# (a resync, a reply, a stretched step) does not keep the board from sampling its lines; only a
# long call into C does. MicroPython unix port only (CPython has no scheduler: no sampler there).
# Loaded by the live main loop only.

import _thread
import time

import micropython


class SimTimer:
    def __init__(self, period_ms, callback):
        self._cb = callback
        self._period = period_ms
        self._run = True
        self.missed = 0  # periods whose callback could not be scheduled (the queue was full)
        _thread.start_new_thread(self._loop, ())

    def _loop(self):
        schedule = micropython.schedule
        cb = self._cb
        period = self._period
        while self._run:
            time.sleep_ms(period)
            try:
                schedule(cb, None)
            except RuntimeError:
                self.missed += 1

    def deinit(self):
        self._run = False
