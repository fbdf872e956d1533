# A stand-in for MicroPython's `machine` module, for tests only: hal/esp32.py runs against it on
# the MicroPython unix port and on CPython, as it would on an ESP32. Put this directory first on
# the import path (MICROPYPATH, or sys.path) and `import machine` finds it.
#
# What it models: Pin (mode, pull, level by GPIO, IRQ handlers that edges call), SPI (its
# settings; reads clock an attached device, e.g. hal.simchain.ShiftChain), I2C (every transaction
# recorded, optionally failing), WDT (feeds counted), Timer (its settings; fire_timers() runs
# the callbacks, as the port's scheduler would), unique_id. Helpers for tests: set_level()
# (which fires a matching IRQ), attach() (route a GPIO to callables), reset().

levels = {}  # GPIO -> 0/1 on the wire
modes = {}  # GPIO -> (mode, pull) as last configured
irqs = {}  # GPIO -> (handler, trigger)
routes = {}  # GPIO -> (write(v), read()) of a modelled device
spi_buses = []  # (id, baudrate, polarity, phase, bits, firstbit, sck, mosi, miso) per SPI made
spi_device = [None]  # what an SPI read clocks: an object with readinto(buf)
i2c_log = []  # ("init", bus, scl, sda, freq) / ("writeto", addr, bytes) / ("writevto", ...)
i2c_fail = [False]
wdt = {"timeout": None, "feeds": 0}
adc_values = {}  # GPIO -> 16-bit reading of an ADC on it
timers = []  # every Timer made, in order
_ID = b"\x24\x0a\xc4\x01\x02\x03"


def reset():
    levels.clear()
    modes.clear()
    irqs.clear()
    routes.clear()
    del spi_buses[:]
    spi_device[0] = None
    del i2c_log[:]
    i2c_fail[0] = False
    wdt["timeout"] = None
    wdt["feeds"] = 0
    adc_values.clear()
    del timers[:]


def unique_id():
    return _ID


def attach(gpio, write=None, read=None):
    routes[gpio] = (write, read)


class Pin:
    IN = 1
    OUT = 3
    OPEN_DRAIN = 7
    PULL_UP = 2
    PULL_DOWN = 1
    IRQ_RISING = 1
    IRQ_FALLING = 2

    def __init__(self, gpio, mode=-1, pull=-1, *, value=None):
        self.gpio = gpio
        if mode != -1:
            modes[gpio] = (mode, pull)
        if value is not None:
            self(value)

    def __call__(self, v=None):
        route = routes.get(self.gpio)
        if v is None:
            if route is not None and route[1] is not None:
                return route[1]()
            return levels.get(self.gpio, 0)
        if route is not None and route[0] is not None:
            route[0](v)
        levels[self.gpio] = v

    def value(self, v=None):
        return self(v)

    def irq(self, handler=None, trigger=3):
        irqs[self.gpio] = (handler, trigger)


def set_level(gpio, v):
    """Drive an input from outside; an IRQ set for that edge runs, as the port's ISR would."""
    old = levels.get(gpio, 0)
    levels[gpio] = v
    h = irqs.get(gpio)
    if h is not None and h[0] is not None and old != v:
        if (v and h[1] & Pin.IRQ_RISING) or (not v and h[1] & Pin.IRQ_FALLING):
            h[0](Pin(gpio))


class SPI:
    MSB = 0
    LSB = 1

    def __init__(self, bus, baudrate=1000000, polarity=0, phase=0, bits=8, firstbit=0,
                 sck=None, mosi=None, miso=None):
        spi_buses.append((bus, baudrate, polarity, phase, bits, firstbit,
                          sck.gpio if sck else None, mosi.gpio if mosi else None,
                          miso.gpio if miso else None))

    def readinto(self, buf, write=0):
        spi_device[0].readinto(buf)


class I2C:
    def __init__(self, bus, scl=None, sda=None, freq=400000):
        i2c_log.append(("init", bus, scl.gpio, sda.gpio, freq))

    def _fail(self):
        if i2c_fail[0]:
            raise OSError(19)  # ENODEV: nothing answers at that address

    def writeto(self, addr, buf):
        self._fail()
        i2c_log.append(("writeto", addr, bytes(buf)))

    def writevto(self, addr, vector):
        self._fail()
        i2c_log.append(("writevto", addr, b"".join([bytes(b) for b in vector])))


class ADC:
    ATTN_11DB = 3

    def __init__(self, pin, atten=None):
        self.gpio = pin.gpio
        modes[pin.gpio] = ("adc", atten)

    def read_u16(self):
        return adc_values.get(self.gpio, 0)


class WDT:
    def __init__(self, id=0, timeout=5000):
        wdt["timeout"] = timeout

    def feed(self):
        wdt["feeds"] += 1


class Timer:
    ONE_SHOT = 0
    PERIODIC = 1

    def __init__(self, id=-1):
        self.id = id
        self.mode = None
        self.period = None
        self.callback = None
        timers.append(self)

    def init(self, mode=1, period=-1, callback=None, freq=-1):
        self.mode = mode
        self.period = period
        self.callback = callback

    def deinit(self):
        self.callback = None


def fire_timers():
    """Run every started timer's callback once (a period has passed)."""
    for t in timers:
        if t.callback is not None:
            t.callback(t)
