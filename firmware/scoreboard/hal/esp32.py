# The real board: an ESP32-DevKitC on the official MicroPython ESP32_GENERIC firmware.
#
# Same API as hal.sim (see hal/__init__.py); make_board(cfg) builds it. MicroPython on the ESP32
# only: this and nothing else in the firmware imports `machine`.
#
# Pin interrupts and micropython.schedule: on the ESP32 port, Pin.irq has no `hard` option. The
# GPIO ISR queues the handler with mp_sched_schedule (the micropython.schedule queue, a few
# entries deep) and the handler runs on the main task between two bytecodes: usually well within
# a millisecond, but after any blocking call in progress (a flash write, an I2C transfer; show()
# sends the OLED page by page to keep that short). If the queue is full the edge is dropped.
# So a handler here only passes a preallocated int to the callback, and the callback must only
# record (line, ticks_ms()) into a preallocated ring and return: no allocation, no I/O, no
# micropython.schedule of its own. Lines.level(i) read in the callback is the level when the
# handler runs: the app passes it to the tilt latch (sense/tilt.py explains why that beats
# counting toggles, which a dropped edge would invert), and the latch still compares with
# Lines.read() on each scan, so a dropped edge costs precision, not a missed pin.

import esp32
import machine
from machine import Pin

from . import Board, NullDisplay, RealClock, Storage
from .ssd1306 import SSD1306

JOURNAL_DIR = "/journal"  # on the LittleFS filesystem of the ESP32_GENERIC image
NVS_NAMESPACE = "chalk"  # the board's signing key and chain of games (scoreboard/sign.py)
UART_BAUD = 115200  # the REPL's UART0, which carries the link: the app paces its writes to it
REPL_WATCHDOG_MS = 30 * 60 * 1000  # the watchdog's timeout once the app hands over to the REPL

# None means no pull resistor (documented for machine.Pin; the stubs type `pull` as int only,
# hence the type: ignore[arg-type] where it is passed).
_PULLS = {"up": Pin.PULL_UP, "down": Pin.PULL_DOWN, "none": None}


def _edge_handler(callback, index):
    # One closure per pin, made once: calling it allocates nothing.
    def handler(_pin):
        callback(index)
    return handler


class Lines:
    """Buttons then tilt pins (boardconfig.switch_names order) as one logical int bitmap."""

    def __init__(self, cfg):
        from .. import boardconfig

        self.names = tuple(boardconfig.switch_names(cfg))
        self.count = len(self.names)
        self.edge_mask = boardconfig.edge_mask(cfg)
        self._inv = boardconfig.active_low_mask(cfg)
        pins = []
        for name in self.names:
            kind, _, key = name.partition(".")
            entry = cfg[boardconfig.SECTIONS[kind]][key]
            pins.append(Pin(entry["pin"], Pin.IN, _PULLS[entry["pull"]]))  # type: ignore[arg-type]
        self._pins = pins
        self._handlers = [None] * self.count

    def read(self):
        """Logical bitmap, bit i = line i (1 = pressed / tilted). Allocates nothing."""
        v = 0
        pins = self._pins
        for i in range(self.count):
            v |= pins[i]() << i
        return v ^ self._inv

    def level(self, index):
        """The logical level of one line now (for an edge callback). Allocates nothing."""
        return self._pins[index]() ^ ((self._inv >> index) & 1)

    def on_edge(self, callback):
        """callback(line_index) on each rising and falling edge of a tilt line or a pocket
        beam; None stops it."""
        trigger = Pin.IRQ_RISING | Pin.IRQ_FALLING
        for i in range(self.count):
            if (self.edge_mask >> i) & 1:
                if callback is None:
                    self._handlers[i] = None
                    self._pins[i].irq(handler=None)
                else:
                    handler = _edge_handler(callback, i)
                    self._handlers[i] = handler
                    self._pins[i].irq(handler=handler, trigger=trigger)

    def index(self, name):
        return self.names.index(name)


class Display(SSD1306):
    """The OLED; a failed refresh (loose wire, bus noise) is counted, never stops the game."""

    def __init__(self, i2c, addr, flip=False, contrast=0xCF):
        self.errors = 0
        super().__init__(i2c, addr, flip=flip, contrast=contrast)

    def show(self):
        try:
            super().show()
        except OSError:
            self.errors += 1

    def show_page(self, p):
        try:
            super().show_page(p)
        except OSError:
            self.errors += 1


class Watchdog:
    """machine.WDT, fed by the main loop once a scan: a loop that hangs longer than `timeout_ms`
    (timings.watchdog_ms) reboots the board, which resumes its game from the journal.

    The ESP32's watchdog cannot be stopped once started. When the app hands the port to the REPL
    (mpremote, `chalk deploy`) release() stretches it to REPL_WATCHDOG_MS (creating machine.WDT
    again sets a new timeout), time enough to deploy; a board left at the REPL then reboots
    into the scoreboard by itself."""

    def __init__(self, timeout_ms):
        self._wdt = machine.WDT(timeout=timeout_ms)

    def feed(self):
        self._wdt.feed()

    def release(self):
        self._wdt = machine.WDT(timeout=REPL_WATCHDOG_MS)
        self._wdt.feed()


class Sampler:
    """machine.Timer(0), periodic, with a soft callback: the port schedules it (as it schedules
    a pin's IRQ handler) and it runs between two bytecodes of the main loop, however long the
    loop's step in Python; only a long call into C (a flash write) delays it."""

    def __init__(self, period_ms, callback):
        self._cb = callback
        self._timer = machine.Timer(0)
        self._timer.init(period=period_ms, mode=machine.Timer.PERIODIC, callback=self._run)

    def _run(self, _timer):
        self._cb()

    def deinit(self):
        self._timer.deinit()


class Esp32Board(Board):
    def watchdog(self, timeout_ms):
        # Started by the main loop (serve), not when the board is built.
        return Watchdog(timeout_ms)

    def random(self, n):
        # os.urandom is esp_random(): true random numbers while the radio is on, only
        # pseudo-random once the bootloader's entropy source is off and Wi-Fi and Bluetooth are
        # too (ESP-IDF, "Random Number Generation"). The signing key is drawn with the Wi-Fi
        # radio on (not connected), then the radio goes back as it was.
        import os

        wlan = None
        was = True
        try:
            import network

            wlan = network.WLAN(network.STA_IF)
            was = wlan.active()
            wlan.active(True)
        except Exception:
            wlan = None  # a firmware without network: the bootloader-seeded RNG it is
        try:
            return os.urandom(n)
        finally:
            if wlan is not None and not was:
                wlan.active(False)

    def sampler(self, period_ms, callback):
        return Sampler(period_ms, callback)


class Analog:
    """The pockets' colour sensors: read(i) is pocket i's ADC reading, 0..4095, or 0
    for a pocket without one. ADC1 pins only (boardconfig refuses others), 11 dB attenuation
    for the full 0-3.3 V range. read() allocates nothing (a small int)."""

    def __init__(self, cfg):
        from .. import boardconfig

        self._adcs = []
        for pid in boardconfig.pocket_ids(cfg):  # the order of the pocket lines
            e = cfg["pockets"][pid]
            adc = None
            if "colour" in e:
                adc = machine.ADC(Pin(e["colour"]), atten=machine.ADC.ATTN_11DB)
            self._adcs.append(adc)
        self.count = len(self._adcs)

    def read(self, i):
        adc = self._adcs[i]
        return 0 if adc is None else adc.read_u16() >> 4


def _make_pegs(cfg):
    from .. import boardconfig

    p = cfg["pegs"]
    if p["driver"] == "spi":
        # Mode 0, MSB first: the bit on QH after the latch is read before the first rising
        # edge shifts the chain (the 74HC165 changes QH ~20 ns after the edge, well after the
        # ESP32 samples). MISO needs no pull: QH drives it push-pull.
        spi = machine.SPI(p["spi"], baudrate=p["baud"], polarity=0, phase=0, bits=8,
                          firstbit=machine.SPI.MSB, sck=Pin(p["sck"]), mosi=Pin(p["mosi"]),
                          miso=Pin(p["miso"]))
        latch = Pin(p["latch"], Pin.OUT, value=1)
        from .spipegs import SpiPegs

        return SpiPegs(spi, latch, boardconfig.chain_map(cfg), 1 - p["active"])
    load = Pin(p["load"], Pin.OUT, value=1)
    clock = Pin(p["clock"], Pin.OUT, value=0)
    # No pull: the line is driven push-pull by the first chip's QH.
    data = Pin(p["data"], Pin.IN, None)  # type: ignore[arg-type]
    from .pegs import Pegs

    return Pegs(load, clock, data, boardconfig.chain_map(cfg), 1 - p["active"])


def _make_keypad(cfg):
    k = cfg["keypad"]
    # Rows open drain: held low between scans (an idle pad is one read of the columns), released
    # in turn while a key is being found; two keys down in one column join two rows without
    # shorting two driven outputs.
    rows = [Pin(g, Pin.OPEN_DRAIN, value=0) for g in k["rows"]]
    cols = [Pin(g, Pin.IN, _PULLS[k["pull"]]) for g in k["cols"]]  # type: ignore[arg-type]
    from .keypad import Keypad

    return Keypad(rows, cols)


def _make_display(cfg, problems):
    d = cfg["display"]
    if d["driver"] != "ssd1306":
        return NullDisplay()
    i2c = machine.I2C(0, scl=Pin(d["scl"]), sda=Pin(d["sda"]), freq=d["freq"])
    try:
        return Display(i2c, d["addr"], flip=d["flip"], contrast=d["contrast"])
    except OSError as e:
        problems.append("display: no SSD1306 answers at I2C address 0x%02X (SDA GPIO %d, SCL GPIO "
                        "%d): %s; check the wiring and display.addr" % (d["addr"], d["sda"],
                                                                        d["scl"], e))
        return NullDisplay()


def make_board(cfg, journal=JOURNAL_DIR):
    """The Board for a config (path or dict, validated here). A display that does not answer is
    replaced by a NullDisplay and reported in board.problems, so play can go on."""
    from .. import boardconfig

    cfg = boardconfig.load(cfg)
    problems = []
    lines = Lines(cfg)
    pegs = _make_pegs(cfg) if "pegs" in cfg else None
    display = _make_display(cfg, problems)
    board = Esp32Board(cfg, lines, pegs, display, RealClock(), Storage(journal))
    if "keypad" in cfg:
        board.keypad = _make_keypad(cfg)
    board.problems.extend(problems)
    if boardconfig.analog_names(cfg):
        board.analog = Analog(cfg)
    board.device_id = "esp32-" + "".join("%02x" % b for b in machine.unique_id())
    board.nvs = esp32.NVS(NVS_NAMESPACE)  # a partition of its own: never sent over the link
    board.baud = UART_BAUD
    return board
