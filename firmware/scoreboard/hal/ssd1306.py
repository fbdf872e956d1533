# SSD1306 OLED controller over I2C, written from the controller's datasheet command table.
#
# The frame buffer is MONO_VLSB: byte (page * width + x) holds pixels x, page*8 .. page*8+7,
# which is exactly the controller's GDDRAM layout in horizontal addressing mode, so show() sends
# the buffer as it is. show() goes out one page (128 bytes) per I2C transaction over preallocated
# views: it allocates nothing, and pin-edge callbacks scheduled meanwhile run between pages
# instead of waiting for the whole ~25 ms frame at 400 kHz.
#
# Any object with writeto(addr, buf) and writevto(addr, vector) works as `i2c` (machine.I2C, or
# a recording fake in tests).

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

from . import framebuffer

# I2C control byte: Co=0, D/C#=0 -> the rest is a command stream; D/C#=1 -> display data.
_CTRL_CMD = const(0x00)
_CTRL_DATA = const(0x40)

# Fundamental commands
_SET_CONTRAST = const(0x81)  # + 1 byte, 0..255
_DISPLAY_RAM = const(0xA4)  # output follows RAM (0xA5 would light every pixel)
_NORMAL = const(0xA6)  # 0xA7 inverts
_DISPLAY_OFF = const(0xAE)
_DISPLAY_ON = const(0xAF)
# Addressing
_MEMORY_MODE = const(0x20)  # + 0x00 horizontal
_COLUMN_ADDR = const(0x21)  # + start, end
_PAGE_ADDR = const(0x22)  # + start, end
# Hardware configuration
_START_LINE = const(0x40)  # | line 0..63
_SEG_REMAP = const(0xA0)  # | 1: column 127 drives SEG0
_MUX_RATIO = const(0xA8)  # + rows - 1
_COM_SCAN_DEC = const(0xC8)  # scan COM[N-1] -> COM0 (0xC0 increments)
_DISPLAY_OFFSET = const(0xD3)  # + 0..63
_COM_PINS = const(0xDA)  # + 0x12 alternative config (64 rows) / 0x02 sequential (32 rows)
# Timing and driving
_CLOCK_DIV = const(0xD5)  # + divide ratio / oscillator frequency; 0x80 is the reset value
_PRECHARGE = const(0xD9)  # + phase 1 / phase 2 periods
_VCOM_DESELECT = const(0xDB)  # + 0x30 = 0.83 x Vcc
_CHARGE_PUMP = const(0x8D)  # + 0x14 on (internal Vcc) / 0x10 off


class SSD1306:
    """128x64 (or 128x32) SSD1306 on I2C, with the hal's Display API."""

    def __init__(self, i2c, addr=0x3C, width=128, height=64, external_vcc=False, flip=False,
                 contrast=0xCF):
        self.i2c = i2c
        self.addr = addr
        self.width = width
        self.height = height
        self.external_vcc = external_vcc
        self.flip = flip
        pages = height // 8
        self.buf = bytearray(pages * width)
        self.fb = framebuffer(self.buf, width, height)
        self._cmd = bytearray(3)
        self._cmd2 = memoryview(self._cmd)[:2]
        self._window = bytes((_CTRL_CMD, _COLUMN_ADDR, 0, width - 1, _PAGE_ADDR, 0, pages - 1))
        view = memoryview(self.buf)
        ctrl = bytes((_CTRL_DATA,))
        self._pages = [(ctrl, view[p * width:(p + 1) * width]) for p in range(pages)]
        self._page_window = bytearray(self._window)  # show_page sets its page range
        self.pages = pages
        self.init_display(contrast)

    def _command(self, c, arg=None):
        cmd = self._cmd
        cmd[0] = _CTRL_CMD
        cmd[1] = c
        if arg is None:
            self.i2c.writeto(self.addr, self._cmd2)
        else:
            cmd[2] = arg
            self.i2c.writeto(self.addr, cmd)

    def init_display(self, contrast=0xCF):
        ext = self.external_vcc
        seq = (
            _DISPLAY_OFF,
            _CLOCK_DIV, 0x80,
            _MUX_RATIO, self.height - 1,
            _DISPLAY_OFFSET, 0x00,
            _START_LINE | 0,
            _CHARGE_PUMP, 0x10 if ext else 0x14,
            _MEMORY_MODE, 0x00,
            # Modules are mounted with column 127 on SEG0 and COM scanning downwards; `flip`
            # turns the picture by 180 degrees for a display mounted upside down.
            _SEG_REMAP | (0 if self.flip else 1),
            0xC0 if self.flip else _COM_SCAN_DEC,
            _COM_PINS, 0x12 if self.height == 64 else 0x02,
            _SET_CONTRAST, contrast,
            _PRECHARGE, 0x22 if ext else 0xF1,
            _VCOM_DESELECT, 0x30,
            _DISPLAY_RAM,
            _NORMAL,
            _DISPLAY_ON,
        )
        self.i2c.writeto(self.addr, bytes((_CTRL_CMD,) + seq))
        self.fb.fill(0)
        self.show()

    def show(self):
        i2c = self.i2c
        addr = self.addr
        i2c.writeto(addr, self._window)
        for vec in self._pages:
            i2c.writevto(addr, vec)

    def show_page(self, p):
        """Send one 8-pixel band (page) of the buffer: a redraw a page per loop pass keeps each
        I2C transfer to about 3 ms at 400 kHz (a whole screen takes about 25). Allocates
        nothing."""
        w = self._page_window
        w[5] = p
        w[6] = p
        self.i2c.writeto(self.addr, w)
        self.i2c.writevto(self.addr, self._pages[p])

    def fill(self, c):
        self.fb.fill(c)

    def text(self, s, x, y, c=1):
        self.fb.text(s, x, y, c)

    def contrast(self, level):
        self._command(_SET_CONTRAST, level & 0xFF)

    def power(self, on):
        self._command(_DISPLAY_ON if on else _DISPLAY_OFF)

    def invert(self, on):
        self._command(_NORMAL | (1 if on else 0))
