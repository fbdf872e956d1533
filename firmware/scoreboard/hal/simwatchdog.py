# The simulated board's watchdog (hal.sim SimBoard.watchdog), apart so a board that never runs
# the main loop (tests, tools) does not keep its code in RAM.


class SimWatchdog:
    """The simulated board's machine.WDT: fed by the main loop as on the board. It resets
    nothing itself: a simulated board whose process hangs or dies is restarted by the
    simulator (chalk.sim), into its journal, as the watchdog reboots a board."""

    def __init__(self, timeout_ms):
        self.timeout_ms = timeout_ms
        self.feeds = 0
        self.released = False

    def feed(self):
        self.feeds += 1

    def release(self):
        self.released = True
