# Peg holes through chained 74HC165 shift registers, bit-banged (the pegs driver "74hc165"),
# loaded only by a board with peg holes. Never imports `machine`.



class Pegs:
    """Peg holes read through chained 74HC165 parallel-in shift registers.

    `load`, `clock`: callables taking 0/1 (machine.Pin objects are); `data`: a callable returning
    0/1. `chain_map`: boardconfig.chain_map(cfg), one byte per chain bit, side << 5 | peg bit, or
    255 for an unwired input. `invert`: 1 when a present peg reads low.

    The bit-banged fallback (pegs driver "74hc165"): 56 clock/read pairs in Python, milliseconds
    a scan on an ESP32, but any three GPIOs will do. SpiPegs (hal/spipegs.py, driver "spi") is
    the default. scan_into allocates nothing.
    """

    def __init__(self, load, clock, data, chain_map, invert=0):
        self._load = load
        self._clock = clock
        self._data = data
        self._map = chain_map
        self._n = len(chain_map)
        self._inv = 1 if invert else 0
        clock(0)
        load(1)

    def scan_into(self, arr):
        """arr[0], arr[1] = side 0, side 1 bitmaps; bit (bed-1)*3 + (hole-1), 1 = peg present."""
        load = self._load
        clock = self._clock
        data = self._data
        m = self._map
        inv = self._inv
        load(0)  # SH/LD low: every chip latches its eight inputs
        load(1)  # high again: shift mode, QH of the first chip shows chain bit 0
        a = 0
        b = 0
        for i in range(self._n):
            c = m[i]
            if c != 255 and data() ^ inv:
                if c & 32:
                    b |= 1 << (c & 31)
                else:
                    a |= 1 << (c & 31)
            clock(1)  # rising edge shifts the next bit onto QH
            clock(0)
        arr[0] = a
        arr[1] = b
