# What wakes the main loop's sleep besides the host: an input that changed. The edge handler
# (or the sampling timer) sets `flag`; the port's poll (select.poll, which the loop sleeps in)
# asks every object it watches whether it is ready, and a MicroPython port runs scheduled
# callbacks (a pin's interrupt handler, a soft timer's) while it waits, so the sleep ends within
# a millisecond of the change. A table at rest then costs the loop one pass a heartbeat.

import io


class Woken(io.IOBase):
    """A pollable flag: ready to read while set (MicroPython's stream protocol, MP_STREAM_POLL).
    Setting it allocates nothing, so an interrupt's handler may."""

    def __init__(self):
        self.flag = 0

    def ioctl(self, req, arg):
        if req == 3:  # MP_STREAM_POLL: ready for what was asked, while set
            return arg & 1 if self.flag else 0
        return -1

    def clear(self):
        self.flag = 0

    def register(self, poll):
        """Watch this flag in `poll`; False where the port's poll cannot (CPython's needs a
        file descriptor): the loop then looks now and then instead."""
        try:
            poll.register(self, 1)  # select.POLLIN
        except (TypeError, ValueError, OSError, AttributeError):
            return False
        return True
