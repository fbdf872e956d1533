# The simulated board's peg chain: chained 74HC165s as the ESP32's wires see them (hal.sim loads
# it only for a board with peg holes).


class ShiftChain:
    """Chained 74HC165s as the ESP32's three wires see them, fed from virtual peg bitmaps.

    `state` is the board's [side 0, side 1] list of logical peg bitmaps. load/clock/data are
    meant to be passed as bound methods, which calling does not allocate.
    """

    def __init__(self, chain_map, active, state):
        self._map = chain_map
        self._n = len(chain_map)
        self._reg = bytearray(self._n)
        self._inv = 0 if active else 1
        self._state = state
        self._pos = 0
        self._clk = 0
        self._ld = 1

    def load(self, v):
        if not v:
            m = self._map
            st = self._state
            inv = self._inv
            reg = self._reg
            for i in range(self._n):
                c = m[i]
                if c == 255:
                    reg[i] = 0  # unwired input tied to GND
                else:
                    reg[i] = ((st[c >> 5] >> (c & 31)) & 1) ^ inv
            self._pos = 0
        self._ld = v

    def clock(self, v):
        if v and not self._clk and self._ld:
            self._pos += 1
        self._clk = v

    def data(self):
        if self._pos < self._n:
            return self._reg[self._pos]
        return 0  # SER of the last chip tied to GND

    def readinto(self, buf):
        """An SPI read in mode 0, MSB first, as machine.SPI does it: each bit is sampled from QH
        at a rising clock edge, which then shifts the chain on."""
        for k in range(len(buf)):
            byte = 0
            for _ in range(8):
                byte = byte << 1 | self.data()
                self.clock(1)
                self.clock(0)
            buf[k] = byte
