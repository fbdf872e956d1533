# The simulated board's analog lines: the pockets' colour sensors, set by name
# ("colour.1", sensor-trace values 0..4095) from tests and traces. Loaded only by boards with
# pocket sensors. Runs on MicroPython and CPython.

ANALOG_MAX = 4095  # a 12-bit ADC reading, as hal.esp32 gives it


class Analog:
    """The pockets' colour sensors as numbers set by tests and traces: read(i) is pocket i's
    reading (0 for a pocket without a sensor). Allocates nothing."""

    def __init__(self, cfg):
        from array import array

        from .. import boardconfig

        ids = boardconfig.pocket_ids(cfg)  # the order of the pocket lines
        self.count = len(ids)
        self.values = array("i", [0] * self.count)
        self._ids = ids

    def index(self, name):
        return self._ids.index(name[len("colour."):])

    def read(self, i):
        return self.values[i]

    def get(self, name):
        return self.values[self.index(name)]

    def set(self, name, v):
        if type(v) is not int or not 0 <= v <= ANALOG_MAX:
            raise ValueError("line %s: v must be an ADC reading 0..%d, not %r"
                             % (name, ANALOG_MAX, v))
        self.values[self.index(name)] = v
