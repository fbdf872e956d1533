# hal/esp32.py against the test-only fake `machine` (tests/fake_machine), on the MicroPython unix
# port or CPython: boot of each board, a scan, an IRQ edge, a peg read (SPI and bit-banged), an
# OLED frame, and the failure paths (no display, a refresh that fails).
# Usage: micropython esp32_hal_check.py BOARDS_DIR JOURNAL_DIR   -- prints one JSON object.
import json
import sys

import machine

from scoreboard import boardconfig
from scoreboard.hal import NullDisplay, esp32
from scoreboard.hal.simchain import ShiftChain

boards, journal = sys.argv[1], sys.argv[2]
out = {}


def load(name):
    with open(boards + "/" + name + ".json") as f:
        return json.load(f)


# -- five-pins: buttons, tilt pins with edge interrupts, the OLED --------------------------------
machine.reset()
for gpio in (13, 14, 16, 17, 18, 19):
    machine.levels[gpio] = 1  # buttons pulled up: idle high (active low)
five = esp32.make_board(load("five-pins"), journal=journal)
edges = []
five.lines.on_edge(edges.append)
machine.set_level(32, 1)  # pin C tilts: its IRQ runs, the callback gets the line index
machine.set_level(32, 0)
machine.set_level(13, 0)  # confirm pressed: a button's IRQ too (line 0)
five.lines.on_edge(None)
out["five"] = {
    "device": five.device_id, "problems": five.problems, "names": list(five.lines.names),
    "pull_13": list(machine.modes[13]), "pull_34": list(machine.modes[34]),
    "irq_gpios": sorted(machine.irqs), "edges": edges,
    "read": five.lines.read(), "level_0": five.lines.level(0),
    "index_C": five.lines.index("pin.C"),
    "irqs_off": [machine.irqs[g][0] is None for g in sorted(machine.irqs)],
}
five.display.fill(0)
five.display.text("FP 12 - 8", 0, 0)
del machine.i2c_log[:]
five.display.show()
nbytes = 0
lit = 0
for e in machine.i2c_log:
    if e[0] == "writevto":
        nbytes += len(e[2])
        for b in e[2]:
            while b:
                lit += b & 1
                b >>= 1
out["five"]["oled"] = {"transactions": len(machine.i2c_log), "bytes": nbytes, "lit": lit}
five.display.show_page(0)  # one page between two scans
machine.i2c_fail[0] = True
five.display.show()  # a loose wire: counted, play goes on
five.display.show_page(1)
out["five"]["oled_errors"] = five.display.errors
machine.i2c_fail[0] = False
# the watchdog the main loop starts, feeds once a scan, and stretches for the REPL
dog = five.watchdog(8000)
dog.feed()
dog.feed()
started = machine.wdt["timeout"]
dog.release()
out["five"]["wdt"] = [started, machine.wdt["timeout"], machine.wdt["feeds"]]
# the signing key's store (NVS), and its random bytes drawn with the radio on, then off again
import network  # noqa: E402  (the fakes, beside the fake machine)

fake_nvs = __import__("esp32")  # not the name: `esp32` here is scoreboard.hal.esp32

five.nvs.set_blob("sk", b"\x01\x02")
five.nvs.commit()
got = bytearray(8)
n = five.nvs.get_blob("sk", got)
drawn = five.random(32)
radio = dict(network.radio)
network.radio["active"] = True  # a board on the venue's Wi-Fi: left on
five.random(4)
network.fail[0] = True  # a firmware without networking: the RNG as it is
plain = five.random(4)
network.fail[0] = False
out["five"]["nvs"] = [list(got[:n]), fake_nvs.commits[0], len(drawn), radio["on"], radio["off"],
                      network.radio["active"], network.radio["off"], len(plain)]

# -- five-pins without an answering display ------------------------------------------------------
machine.reset()
machine.i2c_fail[0] = True
dark = esp32.make_board(load("five-pins"), journal=journal)
out["dark"] = {"null": isinstance(dark.display, NullDisplay), "problem": dark.problems[0][:60]}

# -- shove ha'penny: the peg chain over SPI, and the display driver "none" -----------------------
machine.reset()
cfg = load("shove-hapenny")
cfg["display"] = {"driver": "none"}
loaded = boardconfig.load(cfg)
state = [0b101, 1 << 26]
chain = ShiftChain(boardconfig.chain_map(loaded), loaded["pegs"]["active"], state)
machine.attach(25, write=chain.load)
machine.spi_device[0] = chain
shove = esp32.make_board(loaded, journal=journal)
arr = [0, 0]
shove.pegs.scan_into(arr)
out["shove_spi"] = {"spi": list(machine.spi_buses[0]), "pegs": list(arr),
                    "null_display": isinstance(shove.display, NullDisplay),
                    "latch_mode": list(machine.modes[25])}

# -- the bit-banged fallback ---------------------------------------------------------------------
machine.reset()
cfg = load("shove-hapenny")
cfg["pegs"] = {"driver": "74hc165", "load": 25, "clock": 26, "data": 34, "chips": 7}
loaded = boardconfig.load(cfg)
state[0], state[1] = 1 << 13, 0b11
chain = ShiftChain(boardconfig.chain_map(loaded), loaded["pegs"]["active"], state)
machine.attach(25, write=chain.load)
machine.attach(26, write=chain.clock)
machine.attach(34, read=chain.data)
banged = esp32.make_board(loaded, journal=journal)
banged.pegs.scan_into(arr)
out["shove_banged"] = {"pegs": list(arr), "spi": len(machine.spi_buses)}
# -- novuss: the pockets' colour sensors on ADC1 -------------------------------------------------
machine.reset()
machine.adc_values[32] = 0xABCD
nov_cfg = load("novuss")
del nov_cfg["pockets"]["4"]  # a pocket without sensors (played from the buttons)
nov = esp32.make_board(nov_cfg, journal=journal)
out["novuss"] = {"count": nov.analog.count, "read0": nov.analog.read(0),
                 "atten": machine.modes[32][1],
                 "none": [nov.analog.read(i) for i in range(nov.analog.count)].count(0)}
# A puck through pocket 1's beam between two scans: only its IRQ edges see it.
from scoreboard.app import App  # noqa: E402
from scoreboard.hal.sim import VirtualClock  # noqa: E402

p1 = nov_cfg["pockets"]["1"]
for entry in list(nov_cfg["buttons"].values()) + list(nov_cfg["pockets"].values()):
    machine.levels[entry["pin"]] = 1 - entry.get("active", 0)  # every line idle
nov = esp32.make_board(nov_cfg, journal=journal + "/nov")
nov.clock = VirtualClock(1000)
app = App(nov)
app.boot()
app.scan(nov.clock.ticks_ms())
while app.ring.pop_into(app._ev):
    pass
machine.adc_values[p1["colour"]] = 2000 << 4  # a red puck in front of the sensor
machine.set_level(p1["pin"], p1["active"])  # the beam broken: its IRQ runs
nov.clock.advance(20)
machine.set_level(p1["pin"], 1 - p1["active"])
nov.clock.advance(30)
app.scan(nov.clock.ticks_ms())
got = []
while app.ring.pop_into(app._ev):
    got.append(list(app._ev))
out["novuss"]["pocket_irq"] = p1["pin"] in machine.irqs
out["novuss"]["passage"] = got
# Sampled on edges: a press of "own" while the loop is busy elsewhere (no tick): its IRQs note
# the lines; then one tick runs the sensing layer over the samples: the press counts. No timer
# on a board whose lines all interrupt.
app.start_sampling()
own = nov_cfg["buttons"]["own"]["pin"]
for k in range(30):
    machine.set_level(own, 0 if 4 <= k < 14 else 1)  # held 50 ms
    nov.clock.advance(5)
app.sample()  # what tick() does: its own look at the lines, then the sensing layer
app._drain()
app.stop_sampling()
got = []
while app.ring.pop_into(app._ev):
    got.append(list(app._ev))
out["novuss"]["edge_sampled"] = [len(machine.timers), [e[:3] for e in got if e[0] == 1],
                                 app.btn_names.index("own")]

# -- scorepad: the 4x4 keypad, rows open drain --------------------------------------------------
machine.reset()
pad_cfg = load("scorepad")
rows, cols = pad_cfg["keypad"]["rows"], pad_cfg["keypad"]["cols"]
for g in cols:
    machine.levels[g] = 1  # pulled up: idle
pad = esp32.make_board(pad_cfg, journal=journal)
idle = pad.keypad.scan()
# key "6": row 2, column 3 -- its column reads low while row 2 is driven low
machine.attach(cols[2], read=lambda: 0 if machine.levels.get(rows[1], 0) == 0 else 1)
down = pad.keypad.scan()
out["scorepad"] = {"idle": idle, "down": down, "row_mode": machine.modes[rows[0]][0]}
# A key matrix has no interrupt: machine.Timer(0) samples it every 5 ms; a key held 40 ms while
# the loop does no tick is taken at the next one.
machine.routes.clear()
pad = esp32.make_board(pad_cfg, journal=journal + "/pad")
pad.clock = VirtualClock(5000)
pad_app = App(pad)
pad_app.boot()
pad_app.start_sampling()
timer = machine.timers[-1]
down_at = {"on": False}
machine.attach(cols[2], read=lambda: 0 if down_at["on"] and machine.levels.get(rows[1], 0) == 0
               else 1)
for k in range(40):
    down_at["on"] = 4 <= k < 12
    pad.clock.advance(5)
    machine.fire_timers()
pad_app.sample_lines()  # tick()'s own look (the timer alone reads the keys)
pad_app._drain()
pad_app.stop_sampling()
got = []
while pad_app.ring.pop_into(pad_app._ev):
    got.append(list(pad_app._ev))
out["scorepad"]["timer"] = [timer.id, timer.period, timer.mode, timer.callback is None,
                            [e[:3] for e in got if e[0] == 8]]
print(json.dumps(out))
