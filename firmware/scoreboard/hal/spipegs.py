# The peg chain read by an SPI peripheral (pegs driver "spi"): imported only by a board that
# has one, so the others do not load it. Runs on MicroPython and CPython (the sim's modelled
# chain answers the SPI read).


class SpiPegs:
    """The same chain read by an SPI peripheral (the board config's pegs driver "spi").

    `spi`: has readinto(buf) (machine.SPI: mode 0, MSB first, so each byte's bit 7 is the chain
    bit that was on QH first); `latch`: callable taking 0/1, the chips' SH/LD. One latch pulse,
    then one readinto of chips bytes: the whole chain in one call instead of 56 clock/read pairs
    in Python. `chain_map` and `invert` as for Pegs. scan_into allocates nothing.
    """

    def __init__(self, spi, latch, chain_map, invert=0):
        self._spi = spi
        self._latch = latch
        self._map = chain_map
        self._n = len(chain_map)
        self._buf = bytearray((self._n + 7) // 8)
        self._inv = 0xFF if invert else 0
        latch(1)

    def scan_into(self, arr):
        """arr[0], arr[1] = side 0, side 1 bitmaps, as Pegs.scan_into."""
        self._latch(0)  # SH/LD low: every chip latches its eight inputs
        self._latch(1)  # high again: shift mode, chain bit 0 on QH
        buf = self._buf
        self._spi.readinto(buf)
        m = self._map
        inv = self._inv
        a = 0
        b = 0
        i = 0
        for k in range(len(buf)):
            byte = buf[k] ^ inv
            if byte:
                for j in range(8):
                    if byte & (0x80 >> j):
                        c = m[i + j]
                        if c != 255:
                            if c & 32:
                                b |= 1 << (c & 31)
                            else:
                                a |= 1 << (c & 31)
            i += 8
        arr[0] = a
        arr[1] = b
