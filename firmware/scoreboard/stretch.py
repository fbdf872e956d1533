# A simulated board slowed to a chip's pace (main.py --stretch F, chalk.sim.Sim(stretch=F)):
# every step of the main loop, and every sample the sampling timer takes, is made F times as
# long by busy-waiting, so what the board does on the unix port takes as long as it would on an
# ESP32 that runs the same bytecode F times slower (docs/simulator.md). Loaded only then.

class Stretch:
    """A simulated board slowed to a chip's pace: each step of the loop, and each sample the
    timer takes, is made `factor` times as long by busy-waiting (factor - 1) times what it
    took (docs/simulator.md). The wait is Python, so the sampling timer runs during it, as it
    runs during a slow step on the chip; a sample's own wait is not counted in the step's."""

    def __init__(self, factor, sample):
        import time

        self.factor = factor
        self._us = time.ticks_us
        self._diff = time.ticks_diff
        self._sample = sample
        self.sampled = 0  # us spent in samples, their waits included

    def sample(self, arg=None):
        t0 = self._us()
        self._sample(arg)
        self.wait(t0, 0)
        self.sampled += self._diff(self._us(), t0)

    def wait(self, t0, sampled):
        """Busy-wait (factor - 1) times the time since t0, less `sampled` us of samples."""
        us = self._us
        diff = self._diff
        spent = diff(us(), t0) - (self.sampled - sampled)
        if spent <= 0:
            return
        end = spent * self.factor
        while diff(us(), t0) - (self.sampled - sampled) < end:
            pass
