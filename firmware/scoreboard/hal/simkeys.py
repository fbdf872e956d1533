# The simulated scorepad's key matrix (hal.sim builds it for a board with a keypad): the wires a
# hal.keypad.Keypad scans, with the ghosting of a real matrix without diodes.


class KeyMatrix:
    """A keypad matrix without diodes, as the ESP32's row and column wires see it.

    `down` is the bitmap of keys physically held (key i: row i // cols, column i % cols). A
    driven-low row pulls low every column joined to it through held keys, and through them
    every other row and column they join: three held keys on the corners of a rectangle make
    the fourth corner read as held (ghosting), as on the real pad. Pure ints: no allocation.
    """

    def __init__(self, rows=4, cols=4):
        self.nr = rows
        self.nc = cols
        self._cmask = (1 << cols) - 1
        self.down = 0
        self._low = 0  # rows driven low
        self.rows = tuple(_MatrixRow(self, r) for r in range(rows))
        self.cols = tuple(_MatrixCol(self, c) for c in range(cols))

    def drive(self, r, v):
        if v:
            self._low &= ~(1 << r)
        else:
            self._low |= 1 << r

    def col(self, c):
        if not self.down:
            return 1
        rows_low = self._low
        cols_low = 0
        nc = self.nc
        while True:
            new_cols = cols_low
            new_rows = rows_low
            for r in range(self.nr):
                keys = (self.down >> (r * nc)) & self._cmask
                if rows_low >> r & 1:
                    new_cols |= keys
                if keys & cols_low:
                    new_rows |= 1 << r
            if new_cols == cols_low and new_rows == rows_low:
                break
            cols_low = new_cols
            rows_low = new_rows
        return 0 if cols_low >> c & 1 else 1


class _MatrixRow:
    def __init__(self, m, r):
        self._m = m
        self._r = r

    def value(self, v):
        self._m.drive(self._r, v)


class _MatrixCol:
    def __init__(self, m, c):
        self._m = m
        self._c = c

    def value(self):
        return self._m.col(self._c)
