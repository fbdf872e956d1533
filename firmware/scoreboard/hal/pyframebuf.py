# A MONO_VLSB frame buffer in Python where MicroPython's framebuf is missing (CPython): the hal's
# framebuffer() and the simulated board's display draw on it there. MicroPython never loads it.


class PyFrameBuffer:
    """A MONO_VLSB stand-in for framebuf.FrameBuffer where there is none (CPython).

    Pixel-exact for fill, pixel, lines, rectangles and scroll. CPython has no MicroPython
    font, so text() draws a hollow 7x7 box per non-space character; Display keeps the text.
    """

    def __init__(self, buf, width, height, fmt=None, stride=None):
        self.buf = buf
        self.width = width
        self.height = height

    def pixel(self, x, y, c=None):
        if not (0 <= x < self.width and 0 <= y < self.height):
            return None
        i = (y >> 3) * self.width + x
        bit = 1 << (y & 7)
        if c is None:
            return 1 if self.buf[i] & bit else 0
        if c:
            self.buf[i] |= bit
        else:
            self.buf[i] &= 0xFF ^ bit

    def fill(self, c):
        v = 0xFF if c else 0
        for i in range(len(self.buf)):
            self.buf[i] = v

    def fill_rect(self, x, y, w, h, c):
        for yy in range(max(y, 0), min(y + h, self.height)):
            for xx in range(max(x, 0), min(x + w, self.width)):
                self.pixel(xx, yy, c)

    def hline(self, x, y, w, c):
        self.fill_rect(x, y, w, 1, c)

    def vline(self, x, y, h, c):
        self.fill_rect(x, y, 1, h, c)

    def rect(self, x, y, w, h, c, f=False):
        if f:
            self.fill_rect(x, y, w, h, c)
            return
        self.hline(x, y, w, c)
        self.hline(x, y + h - 1, w, c)
        self.vline(x, y, h, c)
        self.vline(x + w - 1, y, h, c)

    def line(self, x1, y1, x2, y2, c):
        dx, dy = abs(x2 - x1), -abs(y2 - y1)
        sx = 1 if x1 < x2 else -1
        sy = 1 if y1 < y2 else -1
        err = dx + dy
        while True:
            self.pixel(x1, y1, c)
            if x1 == x2 and y1 == y2:
                return
            e2 = 2 * err
            if e2 >= dy:
                err += dy
                x1 += sx
            if e2 <= dx:
                err += dx
                y1 += sy

    def scroll(self, dx, dy):
        w, h = self.width, self.height
        old = [[self.pixel(x, y) for x in range(w)] for y in range(h)]
        for y in range(h):
            for x in range(w):
                sx, sy = x - dx, y - dy
                if 0 <= sx < w and 0 <= sy < h:
                    self.pixel(x, y, old[sy][sx])

    def text(self, s, x, y, c=1):
        for k in range(len(s)):
            if s[k] != " ":
                self.rect(x + 8 * k, y, 7, 7, c)
