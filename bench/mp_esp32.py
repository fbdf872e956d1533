# The MicroPython side of bench/bench_esp32.py: the firmware's figures on the unix port that
# bench_esp32 converts into an ESP32's.
#
#   micropython mp_esp32.py calib                     the calibration workload, best of 7 (us)
#   micropython mp_esp32.py tick BOARD.json FLASH N   sampling + sensing per scan period, idle
#                                                     and on a busy table (us)
#   micropython mp_esp32.py play BOARD.json FLASH TRACE S   the board's main loop, live, for S
#                                                     seconds of the trace (its CPU is read by
#                                                     the host from the process)
#   micropython mp_esp32.py peer BOARD.json FLASH TRACE S PEER   micropython-async's Switch on
#                                                     the same lines (PEER: its v3 directory)
#   micropython mp_esp32.py acc BOARD.json FLASH TRACE  the latch's falls, on a virtual clock
# Prints one JSON object.

import json
import sys
import time


class _Cell:
    def __init__(self, v):
        self.v = v
        self.n = 0

    def bump(self, d):
        self.n += 1
        self.v = (self.v * 31 + d) & 0x3FFFFFFF
        return self.v


def work(rounds):
    """The calibration workload: calls, attributes, small ints, a list and a dict, as the
    firmware's own code is made of. Its time on an ESP32 is derived in bench_esp32.py."""
    cells = [_Cell(i) for i in range(16)]
    table = {}
    acc = 0
    for r in range(rounds):
        c = cells[r & 15]
        v = c.bump(r)
        k = v & 63
        table[k] = table.get(k, 0) + 1
        if v & 1:
            acc += v >> 3
        else:
            acc ^= k << 2
        acc &= 0xFFFFF
    return acc + len(table)


def calib(runs=7):
    best = None
    for _ in range(runs):
        t0 = time.ticks_us()
        work(100000)
        dt = time.ticks_diff(time.ticks_us(), t0)
        best = dt if best is None or dt < best else best
    return {"us": best}


class _Cal:
    """The calibration in the same process as a measurement, just before and just after it:
    this machine's speed changes from one second to the next (a shared host), so each figure is
    converted with the factor of its own minutes (`cal_us` in its output)."""

    def __init__(self):
        self.us = calib(3)["us"]

    def done(self, out):
        out["cal_us"] = min(self.us, calib(3)["us"])
        return out


def _app(cfg, flash):
    import gc

    import scoreboard
    from scoreboard.hal.sim import SimBoard, VirtualClock

    board = SimBoard(cfg, flash, VirtualClock())
    scoreboard.boardconfig.unload()
    gc.collect()
    from scoreboard.app import App

    app = App(board)
    app.boot()
    return board, app


def _busy(board, app, k):
    # Lines changing on most periods: a press with bounce, a long press, pins falling and
    # standing (each change runs the edge callback), a pocket's beam, pegs going in and out,
    # a scorepad's keys typed (with a bounce) and a chord that ghosts.
    ph = k % 400
    if board.matrix is not None:
        v = (1 << (k // 400) % 16) if 10 <= ph < 40 and ph != 12 else 0
        if 100 <= ph < 140:
            v |= 0b10011
        board.matrix.down = v
        return
    lines = board.lines
    lines.set(0, 1 if 10 <= ph < 40 and ph != 12 else 0)
    lines.set(1, 1 if 100 <= ph < 350 else 0)
    n = app.nbtn
    if app.tilt is not None:
        ph = k % 600
        lines.set(n, 1 if 10 <= ph < 30 else 0)
        lines.set(n + 1, 1 if 100 <= ph < 300 else 0)
        lines.set(n + 2, 1 if 40 <= ph < 42 else 0)
    if app.pockets is not None:
        lines.set(app._pk_shift, 1 if 200 <= k % 300 < 206 else 0)
    if board.pegs is not None:
        h = (k // 40) % 27
        board.peg_state[(k // 1080) % 2] = (1 << h) if k % 40 < 30 else 0


class _Timer:
    def deinit(self):
        pass


def tick(cfg, flash, steps):
    """The sensing work of one scan period as the board does it: the timer's sample(), then
    the loop's run of the sensing layer over it (and the referee's share of the events)."""
    from array import array

    cal = _Cal()
    board, app = _app(cfg, flash)
    board.sampler = lambda period, cb: _Timer()  # this bench calls sample() itself
    app.start_sampling()
    model = _model(board)
    clock = board.clock
    step = board.cfg["timings"]["scan_ms"]
    ev = array("i", [0, 0, 0, 0])
    out = {}
    for mode in ("idle", "busy"):
        spent = 0
        most = 0
        events = 0
        for k in range(steps):
            clock.advance(step)
            if mode == "busy":
                _busy(board, app, k)
            m0 = model[0]
            t0 = time.ticks_us()
            app.sample()
            app._drain()
            dt = time.ticks_diff(time.ticks_us(), t0) - (model[0] - m0)
            spent += dt
            if dt > most:
                most = dt
            while app.ring.pop_into(ev):
                events += 1
        out[mode] = {"us": spent / steps, "max_us": most, "events": events}
    print(json.dumps(cal.done(out)))


_NO = object()  # no argument given


class _Wire:
    """A simulated wire of the board (a pin, the SPI bus) whose model's time is counted: on the
    chip it is one call into C (a GPIO's register, the SPI peripheral), here the simulated
    hardware behind it is Python. The call itself stays the board's (its cost stands for the
    C call's)."""

    def __init__(self, fn, model):
        self._fn = fn
        self._model = model

    def __call__(self, a=_NO):
        # One argument or none, not *a: the call itself allocates nothing (a tuple made for
        # its arguments, before the timing starts, would bring the collections of the model's
        # garbage into the board's time), as a call into C allocates nothing.
        t0 = time.ticks_us()
        r = self._fn() if a is _NO else self._fn(a)
        self._model[0] += time.ticks_diff(time.ticks_us(), t0)
        return r

    value = __call__
    readinto = __call__


def _model(board):
    """The simulated hardware behind the board's peg chain and key matrix, timed apart (see
    _Wire): [us so far]."""
    model = [0]
    pegs = board.pegs
    if pegs is not None:
        if hasattr(pegs, "_spi"):  # hal.spipegs.SpiPegs: a latch pulse, one SPI read
            pegs._latch = _Wire(pegs._latch, model)
            pegs._spi = _Wire(pegs._spi.readinto, model)
        else:  # hal.pegs.Pegs, bit-banged: every clock and read a pin's
            pegs._load = _Wire(pegs._load, model)
            pegs._clock = _Wire(pegs._clock, model)
            pegs._data = _Wire(pegs._data, model)
    if board.matrix is not None:  # hal.keypad.Keypad over the simulated matrix's wires
        pad = board.keypad
        pad._rows = tuple(_Wire(r.value, model) for r in pad._rows)
        pad._cols = tuple(_Wire(c.value, model) for c in pad._cols)
    return model


class _Timed:
    """A trace player whose poll() time is counted (the table's world is not the board's
    work: the host takes it out of the board's CPU)."""

    def __init__(self, player):
        self._p = player
        self.us = 0

    def poll(self):
        t0 = time.ticks_us()
        n = self._p.poll()
        self.us += time.ticks_diff(time.ticks_us(), t0)
        return n

    def next_t(self):
        return self._p.next_t()

    def elapsed(self):
        return self._p.elapsed()

    @property
    def done(self):
        return self._p.done


class _Quiet:
    """The host says nothing; after `seconds` of the loop it asks for the REPL (CR Ctrl-C),
    ending serve. Counts the time the loop spends asleep between its passes."""

    def __init__(self, seconds):
        import select

        self.stop = False
        self._seconds = seconds
        self._end = None
        self.start = None
        self.slept = 0
        self.sleeps = 0
        self._poll = select.poll()
        self._woken = None
        self.waiting = False

    def watch(self, woken):  # as serve.Stdin: the loop's sleep ends when an input changes
        self._woken = woken
        return woken.register(self._poll)

    def read(self, limit=256):
        now = time.ticks_us()
        if self._end is None:
            self.start = now
            self._end = time.ticks_add(now, int(self._seconds * 1000000))
        if time.ticks_diff(now, self._end) >= 0:
            self.stop = True
            self.wall = time.ticks_diff(now, self.start)
            return b"\r\x03"
        return b""

    def wait(self, ms):
        t0 = time.ticks_us()
        self.sleeps += 1
        self.waiting = True
        self._poll.poll(ms)
        self.waiting = False
        self.slept += time.ticks_diff(time.ticks_us(), t0)
        if self._woken is not None and self._woken.flag:
            self._woken.clear()
            return True
        return False


_RTOS_HZ = 100  # the ESP32 port's FreeRTOS tick (ESP-IDF's default; MicroPython keeps it)


def _busy_us(wall, slept, world):
    """The time the board was not asleep, less what the trace's driving took."""
    return wall - slept - world


def play(cfg, flash, trace, seconds):
    from scoreboard.hal import simtimer
    from scoreboard.hal.sim import SimBoard, TracePlayer
    from scoreboard.serve import serve

    cal = _Cal()
    board = SimBoard(cfg, flash)
    board.baud = 115200  # the link paced as on the board's UART
    player = TracePlayer(board, open(trace, "rb"))
    sent = [0]

    def write(s):
        sent[0] += len(s)

    quiet = _Quiet(seconds)
    # The simulated world's callback (the trace applied) runs on the main thread, while the
    # loop is awake or inside its sleep: its time awake is no part of the board's, bar the edge
    # handlers and the sampling timer's callback it calls (the board's own work, awake or
    # asleep: added back), less the simulated hardware behind a key matrix or a peg chain
    # (a call into C on the chip: _model).
    from scoreboard.app import App
    from scoreboard.wake import Woken

    model = _model(board)
    move = simtimer.move_world
    edge = App._edge
    sample = App.sample
    world = [0, 0]
    inside = [False]

    def moved(b):
        t0 = time.ticks_us()
        inside[0] = True
        move(b)
        inside[0] = False
        if not quiet.waiting:
            world[0] += time.ticks_diff(time.ticks_us(), t0)

    def edged(app, line):
        t0 = time.ticks_us()
        edge(app, line)
        world[1] += time.ticks_diff(time.ticks_us(), t0)

    def sampled(app, arg=None):
        if not inside[0]:
            return sample(app, arg)  # the loop's own look: its time is the pass's
        m0 = model[0]
        t0 = time.ticks_us()
        sample(app, arg)  # the timer's: an interrupt's work on the chip
        world[1] += time.ticks_diff(time.ticks_us(), t0) - (model[0] - m0)

    simtimer.move_world = moved
    App._edge = edged
    App.sample = sampled
    try:
        app = serve(board, trace=player, stdin=quiet, write=write)
    except KeyboardInterrupt:
        app = None
    wall = getattr(quiet, "wall", 0)
    # Asleep, the loop's poll asks its flag (a Python object: Woken.ioctl) at every wake of its
    # wait: on this port every millisecond (MICROPY_PY_SELECT_IOCTL_CALL_PERIOD_MS, inside the
    # time asleep here), on the ESP32 at every FreeRTOS tick (100 Hz: MICROPY_EVENT_POLL_HOOK's
    # ulTaskNotifyTake(1)) and at each wake. Counted as the chip's: a look a tick of the time
    # asleep and one a sleep, each at what a look takes here (timed in a loop of them).
    flag = Woken()
    n = 2000
    t0 = time.ticks_us()
    for _ in range(n):
        flag.ioctl(3, 1)
    each = time.ticks_diff(time.ticks_us(), t0) / n
    flag_us = int((quiet.slept * _RTOS_HZ // 1000000 + quiet.sleeps) * each)
    print(json.dumps(cal.done({"world_us": world[0], "edges_us": world[1], "sent": sent[0],
                               "ok": app is None, "wall_us": wall, "flag_us": flag_us,
                               "busy_us": _busy_us(wall, quiet.slept, world[0]) + world[1]
                               + flag_us})))


def peer(cfg, flash, trace, seconds, where):
    """micropython-async's Switch (P. Hinch) on each of the board's switch lines, as it is used:
    one task per switch polling its pin every debounce_ms. Counts the changes it reports.

    The table's trace is applied when a Switch reads its pin (what a polling reader sees: the
    level as of now), timed and taken out: no task of the bench's own runs beside the peer's,
    so its figure is the Switch tasks' and the scheduler's alone, not a difference of two
    runs' (where a driver task's own wakes, every few ms, dwarfed what was measured)."""
    import asyncio

    from scoreboard.hal.sim import SimBoard, TracePlayer

    cal = _Cal()
    board = SimBoard(cfg, flash)
    player = _Timed(TracePlayer(board, open(trace, "rb")))
    lines = board.lines
    closes = [0] * lines.count
    when = []  # (line, ms after the trace's start) of each close

    reads = [0]

    class Pin:
        def __init__(self, i):
            self.i = i

        def value(self):  # as Switch reads a pin: 0 when closed (pressed, tilted, broken)
            reads[0] += 1
            player.poll()  # the table up to now (timed apart)
            return 1 - lines.level(self.i)

    def closed(i):
        closes[i] += 1
        when.append((i, time.ticks_diff(time.ticks_ms(), player._p.start)))

    from asyncio import core

    slept = [0]
    wait = core._io_queue.wait_io_event

    def timed_wait(dt):  # the scheduler asleep until its next task is due
        t0 = time.ticks_us()
        wait(dt)
        slept[0] += time.ticks_diff(time.ticks_us(), t0)

    core._io_queue.wait_io_event = timed_wait
    sys.path.insert(0, where)
    from primitives.switch import Switch

    began = time.ticks_us()

    async def main():
        switches = []
        for i in range(lines.count):
            sw = Switch(Pin(i))
            sw.close_func(closed, (i,))
            switches.append(sw)
        await asyncio.sleep_ms(int(seconds * 1000))

    asyncio.run(main())
    wall = time.ticks_diff(time.ticks_us(), began)
    # This stand-in pin is Python, a board's machine.Pin.value a call into C: the stand-in's
    # own cost per read (less the table's moves, already out) is taken out too.
    pin = Pin(0)
    n = 2000
    world = player.us  # the table's moves during the run
    played = reads[0]
    t0 = time.ticks_us()
    for _ in range(n):
        pin.value()
    shim = (time.ticks_diff(time.ticks_us(), t0) - (player.us - world)) / n
    busy = _busy_us(wall, slept[0], world) - int(shim * played)
    print(json.dumps(cal.done({"world_us": world, "closes": closes, "names": list(lines.names),
                               "when": when, "wall_us": wall, "reads": played,
                               "shim_us": shim, "busy_us": busy})))


def acc(cfg, flash, trace):
    """The board's own count of falls for a trace of falls and wobbles, on a virtual clock as
    the simulated board plays a trace: PIN_DOWN events per pin."""
    from array import array

    from scoreboard.hal.sim import TracePlayer

    board, app = _app(cfg, flash)
    clock = board.clock
    step = board.cfg["timings"]["scan_ms"]
    downs = []  # (pin, when its counted run began, ms after the trace's start)
    ev = array("i", [0, 0, 0, 0])
    with open(trace, "rb") as f:
        player = TracePlayer(board, f)
        k = 0
        while not player.done or k < 2000:
            clock.advance(step)
            player.poll()
            app.scan(clock.ticks_ms())
            while app.ring.pop_into(ev):
                if ev[0] == 4:  # PIN_DOWN: id = pin, value = the start of its run
                    downs.append((ev[1], clock.ticks_diff(ev[2], player.start)))
            if player.done:
                k += 1
    print(json.dumps({"downs": downs}))


class _TimedCalls:
    """An object of the simulated board whose calls are timed into `io` (steps): a call into C
    on the chip (a file of its flash, the frame buffer), added as it takes here."""

    def __init__(self, obj, io):
        self._o = obj
        self._io = io

    def _t(self, fn, *a):
        t0 = time.ticks_us()
        try:
            return fn(*a)
        finally:
            self._io.us += time.ticks_diff(time.ticks_us(), t0)


class _File(_TimedCalls):
    """A file of the board's flash whose reads and writes are timed (_files)."""

    def write(self, b):
        return self._t(self._o.write, b)

    def flush(self):
        return self._t(self._o.flush)

    def read(self, *n):
        return self._t(self._o.read, *n)

    def readinto(self, *a):
        return self._t(self._o.readinto, *a)

    def readline(self, *n):
        return self._t(self._o.readline, *n)

    def seek(self, *a):
        return self._t(self._o.seek, *a)

    def tell(self):
        return self._o.tell()

    def close(self):
        return self._t(self._o.close)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __iter__(self):
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line


class _Screen(_TimedCalls):
    """The simulated display's frame buffer as the firmware draws on it, its calls timed
    (steps): on the chip framebuf's fill and text are calls into C, and the SSD1306 takes the
    frame a page a pass; here a Python recorder keeps the text drawn as well."""

    def fill(self, *a):
        return self._t(self._o.fill, *a)

    def text(self, *a):
        return self._t(self._o.text, *a)

    def fill_rect(self, *a):
        return self._t(self._o.fill_rect, *a)

    def __getattr__(self, name):
        return getattr(self._o, name)


def _screen(display, io):
    """The simulated display (hal/sim.py) with its frame buffer and show() timed into io."""
    display.fb = _Screen(display.fb, io)
    show = display.show

    def timed_show():
        t0 = time.ticks_us()
        try:
            return show()
        finally:
            io.us += time.ticks_diff(time.ticks_us(), t0)

    display.show = timed_show


def _files():
    """The board's files (its journal, checkpoints, key store) opened through _File: an object
    whose `us` is the time spent in their calls so far."""
    import builtins

    from scoreboard import journal, spill
    from scoreboard.hal import simnvs

    class Io:
        us = 0

    io = Io()

    def timed_open(*a):
        t0 = time.ticks_us()
        try:
            return _File(builtins.open(*a), io)
        finally:
            io.us += time.ticks_diff(time.ticks_us(), t0)

    for mod in (journal, spill):
        mod.open = timed_open
    # The simulated NVS's calls whole (its files, a directory made, a rename): on the chip, the
    # ESP32's NVS, calls into C.
    for name in ("get_blob", "set_blob", "commit"):
        setattr(simnvs.SimNVS, name, _timed_method(getattr(simnvs.SimNVS, name), io))
    return io


def _timed_method(fn, io):
    def run(self, *a):
        t0 = time.ticks_us()
        try:
            return fn(self, *a)
        finally:
            io.us += time.ticks_diff(time.ticks_us(), t0)
    return run


class _TimedGC:
    """The gc module as the firmware's modules see it, its collections timed: a collection is
    a call into C whose pause depends on the heap's size, so bench_esp32 scales it to the
    board's heap on its own (GC_64_TO_32) and the rest of a step by the bytecode factor."""

    def __init__(self, real):
        self._real = real
        self.us = 0  # time spent in collections
        self.n = 0  # collections made
        self.walk = 0  # time spent counting the free heap (a walk of the heap's table)

    def collect(self):
        t0 = time.ticks_us()
        self._real.collect()
        self.us += time.ticks_diff(time.ticks_us(), t0)
        self.n += 1

    def mem_free(self):
        t0 = time.ticks_us()
        try:
            return self._real.mem_free()
        finally:
            self.walk += time.ticks_diff(time.ticks_us(), t0)

    def __getattr__(self, name):
        return getattr(self._real, name)


# The commands of a resync as `chalk archive` sends them, plain and then coded (a noisy line:
# the host asks for parity); then commands of play (undo, the service view).
RESYNC = [("hello", {}), ("clock", {"ms": 1767225600000}), ("journal", {"after": 0}),
          ("state", {}), ("ack", {"seq": 0}), ("sign", {})]
CODED = [("parity", {"nsym": 16, "span": 96}), ("hello", {}), ("journal", {"after": 0}),
         ("state", {}), ("sign", {}), ("parity", {"nsym": 0})]
PLAY = [("state", {})] * 3 + [("undo", {})] * 5 + [("service", {"on": k % 2 == 0})
                                                  for k in range(6)]


ROOM = 48 * 1024  # free heap below which the steps' run collects between two steps
RESEND_MS = 5000  # a command unanswered this long is sent again (chalk's own timeout)
# Play's commands come from people (a page's undo, the service view), not back to back as a
# resync's do: this long after the previous reply (a quick hand; the board's work between scans,
# such as the state an undo goes back to, has that long to be done).
PLAY_PACE_MS = 250
NOTE_US = 20  # steps at least this long (here; about 3 ms on the chip) are printed one by one


def steps(cfg, flash, mpy):
    """The longest step of the main loop while the host resyncs the whole journal (a long game
    in `flash`) plainly and then with coded frames, and while it asks for the state, undoes
    and switches the service view; each step's time in Python and in collections apart, what
    the step was, and the longest pause a collection of the heap makes here."""
    import gc

    from scoreboard import frames
    from scoreboard.hal.sim import SimBoard
    from scoreboard.serve import serve

    cal = _Cal()
    board = SimBoard(cfg, flash)
    board.baud = 115200
    # Booted as main.py boots a board: its config let go, the names of the modules it loads
    # only in play interned (an import in play then costs no growth of the table of names).
    sys.modules["scoreboard.boardconfig"].unload()
    from scoreboard.later import intern_later

    intern_later()
    gc.collect()
    cmds = [("resync", c, a) for c, a in RESYNC] + [("coded", c, a) for c, a in CODED] + \
        [("play", c, a) for c, a in PLAY]

    class Host:
        def __init__(self):
            self.stop = False
            self.k = 0
            self.waiting = None
            self.lines = frames.Lines(4096)
            self.ok = 0
            self.us = 0  # the time spent here, reading what the board wrote (not the board's)
            self.sent = 0
            self.resent = 0
            self.answered = 0

        def phase(self):
            return cmds[self.waiting - 1][0] if self.waiting else "idle"

        def cmd(self):
            return cmds[self.waiting - 1][1] if self.waiting else "-"

        def read(self, limit=256):
            if self.waiting is not None:
                if time.ticks_diff(time.ticks_ms(), self.sent) < RESEND_MS:
                    return b""
                self.resent += 1  # unanswered (its reply dropped): sent again, as chalk does
                _, cmd, args = cmds[self.waiting - 1]
            elif self.k >= len(cmds):
                self.stop = True
                return b"\r\x03"
            elif cmds[self.k][0] == "play" and \
                    time.ticks_diff(time.ticks_ms(), self.answered) < PLAY_PACE_MS:
                return b""  # a person's next command (an undo, the service view) comes later
            else:
                _, cmd, args = cmds[self.k]
                self.k += 1
                self.waiting = self.k
            self.sent = time.ticks_ms()
            return frames.encode(self.waiting, cmd, args).encode()

        def write(self, s):
            t0 = time.ticks_us()
            try:
                self._read(s)
            finally:
                self.us += time.ticks_diff(time.ticks_us(), t0)

        def _read(self, s):
            for line in self.lines.feed(s):
                if line[:4] == b"~c2 " and b" z " in line[:24]:
                    line = line.split(b" ", 4)[4].rsplit(b" ", 2)[0]  # the frame inside
                try:
                    f = frames.decode(line)
                except (frames.Corrupt, frames.WrongVersion):
                    continue
                if f is not None and f[1] in ("ok", "err") and f[2].get("id") == self.waiting:
                    self.ok += f[1] == "ok"
                    self.waiting = None
                    self.answered = time.ticks_ms()

    host = Host()
    from scoreboard.app import App
    from scoreboard.link import Link

    timed_gc = _TimedGC(gc)
    seen = [0]

    def patch():
        # The firmware's modules (those loaded since too) collect through the timed gc.
        if len(sys.modules) != seen[0]:
            seen[0] = len(sys.modules)
            for name in list(sys.modules):
                mod = sys.modules[name]
                if name.startswith("scoreboard") and getattr(mod, "gc", None) is gc:
                    mod.gc = timed_gc

    most = {}  # phase -> [python us, collection us, what]
    seq = {}  # phase + what -> steps of that kind so far
    noted = []  # the steps of at least NOTE_US, waiting to be printed between two steps

    # A collection the heap makes on its own (an allocation that found no room) shows as more
    # free heap after a step than before: it is counted as a collection (the pause measured
    # here below, before the run: this heap's full collection) rather than as Python.
    auto = [0]
    for _ in range(5):
        t0 = time.ticks_us()
        gc.collect()
        dt = time.ticks_diff(time.ticks_us(), t0)
        auto[0] = dt if dt > auto[0] else auto[0]

    # The time, host's, collections', world's, files', the collections made and the walks of the
    # heap's table, of the timed calls
    inner = [0, 0, 0, 0, 0, 0, 0]
    io = _files()
    _screen(board.display, io)  # the screen's drawing too: calls into C on the chip

    class Isr:
        us = 0  # the time the simulated world's callback took (its timer's App.sample in it)

    isr = Isr()
    from scoreboard.hal import simtimer

    move = simtimer.move_world

    def moved(board):
        t0 = time.ticks_us()
        move(board)
        isr.us += time.ticks_diff(time.ticks_us(), t0)

    # The world's callback (on the chip: the timer's interrupt, its sampling measured apart) is
    # no part of a step: moved by the loop at each pass and timed apart, on the main thread.
    # (From a thread of its own, as a live simulated board moves it, every wake of that thread
    # passes the interpreter's lock between the two and stalls the step under way for 0.1 ms
    # or so: nothing an ESP32 does.)
    simtimer.move_world = moved
    simtimer.start_world = lambda board: None

    depth = [0]  # timed calls under way
    dropped = [0]

    def timed(fn, name):
        def run(*args):
            e0 = time.ticks_us()  # this wrapper's own span: its bookkeeping is no step's
            patch()
            if not depth[0] and gc.mem_free() < ROOM:
                # The heap nearly full: collected before the step rather than by an allocation
                # in its middle (a collection is the gap's, timed apart, never a step's Python).
                gc.collect()
            depth[0] += 1
            g0 = timed_gc.us
            c0 = timed_gc.n
            w0 = timed_gc.walk
            h0 = host.us
            i0 = isr.us
            n0, nh, ng, ni, no, nc, nw = inner
            o0 = io.us
            f0 = gc.mem_free()
            t0 = time.ticks_us()
            try:
                r = fn(*args)
            finally:
                depth[0] -= 1
            whole = time.ticks_diff(time.ticks_us(), t0)
            host_us = host.us - h0
            isr_us = isr.us - i0
            g = timed_gc.us - g0
            # The host's reading of the wire is no part of the board's step (a UART's write on
            # the chip is a copy into its buffer, in C), nor is the world's callback, nor a step
            # timed within this one (the link's step its slice of the wire runs first: that
            # counts on its own).
            io_us = io.us - o0
            # A file's read or write is the flash's on the chip (a call into C, at the flash's
            # pace): timed apart, not scaled as Python.
            own_io = io_us - (inner[4] - no)
            dt = whole - (inner[0] - n0) - (host_us - (inner[1] - nh)) - (isr_us - (inner[3] - ni))
            dt -= own_io
            g -= inner[2] - ng
            ncol = timed_gc.n - c0 - (inner[5] - nc)
            # Counting the free heap (the gauge's gc.mem_free) walks the heap's whole table: a
            # call into C as long as the heap is big, timed apart and scaled to the board's
            # heap by bench_esp32 (this run's heap holds the ROMFS image and the bench too).
            walk = timed_gc.walk - w0 - (inner[6] - nw)
            dt -= walk
            inner[0], inner[1], inner[2], inner[3], inner[4], inner[5], inner[6] = (
                n0 + whole, nh + host_us, ng + timed_gc.us - g0, ni + isr_us, no + io_us,
                nc + timed_gc.n - c0, nw + timed_gc.walk - w0)
            if gc.mem_free() > f0 and g == 0:
                # (a collection of the heap's own: an allocation found no room)
                g = auto[0] if auto[0] < dt else dt
                ncol = 1
            if r == "dropped":
                dropped[0] += 1  # a step the heap had no block for: its work given up
            what = "%s%s (%s)" % (name, ": " + r if type(r) is str else "", host.cmd())
            phase = host.phase()
            row = most.setdefault(phase, [0, 0, "", 0])
            if dt - g > row[0]:
                row[0], row[1], row[2], row[3] = dt - g, g, what, own_io
            # Each step noted by its place in the run (the n-th of its kind), so that runs can be
            # compared step by step: a step the machine preempted in one run is not preempted
            # at the same place in another (bench_esp32 takes the shortest of the runs).
            key = phase + "\t" + what
            n = seq.get(key, 0)
            seq[key] = n + 1
            if dt - g >= NOTE_US or own_io >= 1000 or ncol or walk >= NOTE_US:
                noted.append("S\t%s\t%d\t%d\t%d\t%d\t%d\t%d" % (key, n, dt - g, g, own_io, ncol,
                                                              walk))
            if not depth[0] and noted:
                for line in noted:
                    print(line)
                noted.clear()
            # A call timed within another is taken out of the outer one whole, this wrapper's
            # own work included (its names and notes: else a step that ran a timed step, the
            # link's slice of the wire with the link's step first, carried 0.1 to 0.3 ms of it).
            inner[0] = n0 + time.ticks_diff(time.ticks_us(), e0)
            return r
        return run

    # The parts of a pass that can take long: a command gathered, the link's step (a command
    # run, a slice of a reply or a coded frame, a record of the stream), its slice of the wire,
    # the sensing layer with the referee and the screen.
    Link.feed = timed(Link.feed, "a command's bytes")
    Link.step = timed(Link.step, "the link's step")
    Link.pump = timed(Link.pump, "the link's slice of the wire")
    App.tick = timed(App.tick, "the sensing layer and the screen")
    # The signer's work between scans (a signature's arithmetic): run() steps it until the
    # pass's budget is spent, on the chip a few steps a pass; each step timed on its own.
    from scoreboard.sign import Signer

    Signer.step = timed(Signer.step, "a step of the signer's")
    try:
        serve(board, stdin=host, write=host.write, test_mode=True)
    except KeyboardInterrupt:
        pass
    pause = 0
    least = None
    for _ in range(10):
        t0 = time.ticks_us()
        gc.collect()
        dt = time.ticks_diff(time.ticks_us(), t0)
        pause = dt if dt > pause else pause
        least = dt if least is None or dt < least else least
    print(json.dumps(cal.done({"ok": host.ok, "asked": len(cmds), "gc_us": pause,
                               "gc_min_us": least, "steps": most, "dropped": dropped[0],
                               "resent": host.resent})))


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "calib":
        print(json.dumps(calib()))
    elif mode == "tick":
        tick(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif mode == "play":
        play(sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]))
    elif mode == "peer":
        peer(sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]), sys.argv[6])
    elif mode == "acc":
        acc(sys.argv[2], sys.argv[3], sys.argv[4])
    elif mode == "steps":
        steps(sys.argv[2], sys.argv[3], None)
