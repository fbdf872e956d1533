# A matrix keypad, loaded only by a scorepad. Never imports `machine`.



class Keypad:
    """A matrix keypad: `rows` pulled low, `cols` read (1 = idle, pulled up).

    rows: objects with value(v) (machine.Pin in open-drain mode: released high, so two keys
    down in one column never short two outputs); cols: objects with value() -> 0/1. Key i is row
    i // len(cols), column i % len(cols). Between scans every row is held low, so an idle pad
    costs one read of each column; only when a column reads low are the rows driven one at a
    time to find the key. scan() allocates nothing; a method call on a stored object does not
    (no bound method is made).
    """

    def __init__(self, rows, cols):
        self._rows = tuple(rows)
        self._cols = tuple(cols)
        self._nr = len(self._rows)
        self._nc = len(self._cols)
        for r in self._rows:
            r.value(0)

    def scan(self):
        """Bitmap of the keys seen down (ghosts included: sense.Keypad sorts them out)."""
        rows = self._rows
        cols = self._cols
        nr = self._nr
        nc = self._nc
        idle = True
        for j in range(nc):
            if not cols[j].value():
                idle = False
        if idle:
            return 0
        for i in range(nr):
            rows[i].value(1)
        v = 0
        for i in range(nr):
            row = rows[i]
            row.value(0)
            for j in range(nc):
                if not cols[j].value():
                    v |= 1 << (i * nc + j)
            row.value(1)
        for i in range(nr):
            rows[i].value(0)
        return v
