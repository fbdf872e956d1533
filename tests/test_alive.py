"""A board that never stops silently: one stray byte never stops play (the keyboard interrupt
is off while the app runs; only the sequences mpremote, `chalk deploy` and a person send hand
the port to the REPL), the main loop feeds a watchdog, the board sends a heartbeat, and `chalk
watch` shows NOT SCORING, with why, when it stops (docs/serial-protocol.md)."""

import io
import os
import subprocess
import sys
import threading
import time

import pytest

from chalk import remote, watch
from chalk.sim import Sim
from scoreboard import frames
from scoreboard.hal.sim import SimBoard, VirtualClock
from scoreboard.serve import serve
from tests.mpy import micropython_path

needs_mp = pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")
FIVE = os.path.join(os.path.dirname(__file__), "..", "firmware", "boards", "five-pins.json")


def until(pred, timeout=20.0, every=0.05):
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(every)


# -- the loop, in-process ---------------------------------------------------------------------

class ScriptedStdin:
    """What the host sends, one chunk per loop pass; the real Stdin's sequence detection."""

    def __init__(self, chunks):
        from scoreboard.serve import Stdin

        self.chunks = list(chunks)
        self.prev = b""
        self.stop = False
        self._scan = Stdin.read

    def read(self, limit=256):
        if not self.chunks:
            return b""
        data = self.chunks.pop(0)
        out = b""
        for i in range(len(data)):
            b = data[i:i + 1]
            out += b
            if b == b"\x03" and self.prev in (b"\r", b"\x03"):
                self.stop = True
                self.rest = data[i + 1:]
                break
            self.prev = b
        return out


def run_loop(tmp_path, chunks):
    board = SimBoard(FIVE, str(tmp_path / "flash"), VirtualClock())
    dogs = []
    made = board.watchdog

    def watchdog(ms):
        dogs.append(made(ms))
        return dogs[-1]

    board.watchdog = watchdog
    out = []
    stdin = ScriptedStdin(chunks)
    with pytest.raises(KeyboardInterrupt):
        serve(board, stdin=stdin, write=out.append)
    got = [frames.decode(line) for line in frames.Lines().feed("".join(out))]
    dogs[0].elapsed = board.clock.ticks_ms()
    return stdin, dogs, [f for f in got if f is not None]


def hello(n):
    return frames.encode(n, "hello", {}).encode()


@pytest.mark.parametrize("seq", [b"\r\x03", b"\x03\x03"])
def test_only_cr_ctrl_c_or_two_ctrl_c_stop_the_loop_and_the_rest_is_left(tmp_path, seq):
    stray = [bytes([b]) for b in range(256)]  # every single byte, one a pass
    chunks = [b"\n"] + stray + [b"\n" + hello(1)] + [b""] * 20 + [b"x" + seq + b"\r\x01"]
    stdin, dogs, got = run_loop(tmp_path, chunks)
    assert stdin.rest == b"\r\x01"  # mpremote's Ctrl-A is left for the REPL
    oks = [p for _, t, p in got if t == "ok"]
    assert [p["id"] for p in oks] == [1]  # the board answered after every stray byte
    (dog,) = dogs
    assert dog.timeout_ms == 8000 and dog.released
    # Fed at every pass that looks at the lines: every scan (scan_ms 5) while something
    # happens, every NO_WAKE_MS (100) at rest where nothing can end the loop's sleep early (this
    # host's stdin), far within its 8 s.
    from scoreboard.serve import NO_WAKE_MS

    assert dog.feeds >= dog.elapsed // NO_WAKE_MS > 4


def test_a_stray_ctrl_c_inside_a_frame_only_spoils_that_frame(tmp_path):
    bad = bytearray(hello(1))
    bad[10] = 3
    chunks = [bytes(bad), hello(2)] + [b""] * 20 + [b"\r\x03"]
    stdin, dogs, got = run_loop(tmp_path, chunks)
    assert [p["id"] for _, t, p in got if t == "ok"] == [2]
    assert [t for _, t, _ in got][0] == "boot"


# -- the simulated board ----------------------------------------------------------------------

@pytest.fixture
def board(tmp_path):
    with Sim("five-pins", flash=tmp_path / "flash", test_mode=True) as sim:
        yield sim


def wait_beat(bl, mode="scoring", timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        bl.poll(0.1)
        if bl.beat is not None and bl.beat[1].get("mode") == mode and \
                time.monotonic() - bl.beat[0] < 0.5:
            return bl.beat[1]
    raise AssertionError("no %s heartbeat" % mode)


@needs_mp
def test_no_single_byte_stops_a_simulated_board(board):
    with remote.connect(board.port) as bl:
        for b in range(256):
            bl.ser.write(b"\n" + bytes([b]) + b"\n")
            if b % 16 == 15:
                assert bl.hello(timeout=10)["game"] == "five-pins"
        bl.ser.write(b"\x03" + frames.encode(5, "hello", {}).encode()[1:])  # into a frame
        assert bl.request("state", timeout=10)["mode"] == "scoring"
        wait_beat(bl)
    assert board.boots == 1  # never stopped, never restarted


def mpremote(port, *args, timeout=60):
    return subprocess.run([sys.executable, "-m", "mpremote", "connect", port, "resume"]
                          + list(args), capture_output=True, text=True, timeout=timeout)


@needs_mp
def test_mpremote_still_gets_the_repl_and_watch_says_not_scoring(board):
    with remote.connect(board.port) as bl:
        wait_beat(bl)
    out = mpremote(board.port, "exec", "print(6 * 7)")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "42"
    # Left at the REPL: watch says so within a few seconds, never a live score.
    buf = io.StringIO()
    stop = threading.Event()
    failed = []

    def run():
        try:
            watch.watch(board.port, out=buf, tty=False, stop=stop, timeout=3)
        except Exception as e:
            failed.append(e)

    t = threading.Thread(target=run)
    t.start()
    try:
        t.join(12)
    finally:
        stop.set()
        t.join(5)
    # At the REPL the app does not answer: watch cannot even start, and says why.
    assert failed and "REPL" in (failed[0].hint or "")
    # A soft reset (Ctrl-D) starts the app again, and it scores.
    with open(board.port, "wb", buffering=0) as f:
        f.write(b"\r\x04")
    until(lambda: board.boots == 2)
    with remote.connect(board.port, timeout=20) as bl:
        wait_beat(bl)


@needs_mp
def test_watch_shows_not_scoring_when_the_app_stops_under_it(board):
    buf = io.StringIO()
    stop = threading.Event()
    t = threading.Thread(target=watch.watch, args=(board.port,),
                         kwargs={"out": buf, "tty": False, "stop": stop})
    t.start()
    try:
        until(lambda: "five-pins game" in buf.getvalue())
        # What mpremote sends, straight onto the board's wire (watch holds the port).
        os.write(board._board_master, b"\r\x03")
        until(lambda: "NOT SCORING" in buf.getvalue(), timeout=10)
        line = [ln for ln in buf.getvalue().splitlines() if "NOT SCORING" in ln][0]
        assert "at the MicroPython REPL" in line
        os.write(board._board_master, b"\r\x04")  # soft reset: the app again
        until(lambda: buf.getvalue().rstrip().endswith("(the board restarted)"), timeout=30)
    finally:
        stop.set()
        t.join(10)


@needs_mp
def test_watch_shows_not_scoring_in_the_service_view(board):
    buf = io.StringIO()
    stop = threading.Event()
    with remote.connect(board.port) as bl:
        bl.request("service", {"on": True})
    t = threading.Thread(target=watch.watch, args=(board.port,),
                         kwargs={"out": buf, "tty": False, "stop": stop})
    t.start()
    try:
        until(lambda: "NOT SCORING: the board shows the service view" in buf.getvalue())
    finally:
        stop.set()
        t.join(10)
    out = io.StringIO()
    watch.watch(board.port, once=True, out=out)
    assert "NOT SCORING: the board shows the service view" in out.getvalue()


# -- the simulator's relay and watchdog ---------------------------------------------------------

@needs_mp
def test_the_relay_never_blocks_and_a_hung_board_comes_back_by_itself(tmp_path):
    import json
    import signal

    cfg = json.loads(open(FIVE).read())
    cfg["timings"]["watchdog_ms"] = 2000
    path = tmp_path / "five-pins.json"
    path.write_text(json.dumps(cfg))
    with Sim(str(path), flash=tmp_path / "flash", test_mode=True) as sim:
        with remote.connect(sim.port, timeout=20) as bl:
            bl.request("act", {"action": {"a": "break", "player": 1}})
            wait_beat(bl)
            # The board hangs (its loop never reads again) and the host sends 200 KB.
            os.killpg(sim.proc.pid, signal.SIGSTOP)
            for _ in range(200):
                bl.ser.write(b"x" * 1024)
            bl.ser.flush()
            until(lambda: sim.dropped_to_board > 100 * 1024)  # held, then dropped: no block
            # Its watchdog resets it, into its journal: it answers and scores again.
            until(lambda: sim.boots == 2, timeout=30)
            assert sim.watchdog_resets == 1
        with remote.connect(sim.port, timeout=20) as bl:
            st = bl.request("state")
            assert st["state"]["breaker"] == 1 and st["mode"] == "scoring"
            wait_beat(bl)


@needs_mp
def test_every_byte_the_board_sends_reaches_the_port_or_is_counted_dropped(tmp_path):
    # A host that reads nothing: the port's buffer fills, and a chunk that only partly fits
    # loses its rest. Every byte relayed is read from the port afterwards or counted in
    # sim.dropped (a partial write's rest went uncounted: lost bytes the count did not show).
    relayed = [0]
    lock = threading.Lock()

    def big(data, direction):  # each chunk from the board made 4 KB or more: fills it fast
        if direction == "to_host":
            data = data * (4096 // max(1, len(data)) + 1)
            with lock:
                relayed[0] += len(data)
        return data

    with Sim("five-pins", flash=tmp_path / "flash", test_mode=True) as sim:
        port = os.open(sim.port, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
        try:
            sim.corrupt = big
            until(lambda: sim.dropped > 0 and relayed[0] > sim.dropped + 8192, timeout=60)
            sim.cut = True  # nothing relayed from now on
            seen = [relayed[0], -1]
            while seen[0] != seen[1]:  # until a pass of the relay's loop relayed nothing more
                seen[1] = seen[0]
                time.sleep(0.3)  # a poll interval: the relay's loop reads every 50 ms
                with lock:
                    seen[0] = relayed[0]
            got = 0
            while True:
                try:
                    chunk = os.read(port, 65536)
                except BlockingIOError:
                    break
                if not chunk:
                    break
                got += len(chunk)
        finally:
            os.close(port)
        with lock:
            assert got + sim.dropped == relayed[0], (got, sim.dropped, relayed[0])
        assert got > 0 and sim.dropped > 0


@needs_mp
def test_a_board_at_the_repl_is_not_reset_and_its_last_beat_says_so(board):
    with remote.connect(board.port) as bl:
        wait_beat(bl)
        bl.ser.write(b"\r\x03")
        wait_beat(bl, "repl", timeout=10)
        assert watch.not_scoring(bl).startswith("the board is at the MicroPython REPL")
        # 100 KB of junk at the REPL (no line end): the relay takes it or drops it, never
        # blocks, and the REPL is left alone (its watchdog is stretched, as on an ESP32).
        for _ in range(100):
            bl.ser.write(b"y" * 1024)
        bl.ser.flush()
    t0 = time.monotonic()
    for _ in range(20):
        with open(board.port, "wb", buffering=0) as f:
            f.write(b"\r\x03\r\x04")  # Ctrl-C, soft reset: the app starts again
        try:
            until(lambda: board.boots >= 2, timeout=3)
            break
        except AssertionError:
            continue
    assert board.boots >= 2 and board.watchdog_resets == 0 and time.monotonic() - t0 < 60
    with remote.connect(board.port, timeout=20) as bl:
        wait_beat(bl)


def test_a_trace_starts_when_the_board_looks_at_its_lines_however_long_its_boot(tmp_path):
    # A busy machine made the live board's boot (before its loop looks at the lines) take
    # seconds: the trace's first seconds were then due at once, in one move of the table's
    # world, more changes than the ring of samples holds between two passes of the loop, and
    # a press among them was lost (the archive's live test: one record fewer than its trace).
    from chalk.traces import Trace
    from scoreboard.hal.simtrace import TracePlayer

    tr = Trace(seed=3)
    tr.wait(300)
    for _ in range(14):  # the break, then shots with nothing down: 6 edges a press (bounce)
        tr.press("confirm", hold=60, after=80)
    tr.wait(500)
    path = tmp_path / "trace.jsonl"
    tr.write(path)
    board = SimBoard(FIVE, str(tmp_path / "flash"), VirtualClock())
    with open(path, "rb") as f:
        player = TracePlayer(board, f)
        assert len(tr.records) >= 80
        board.clock.advance(3000)  # the boot: the whole trace would be due at its end
        passes = int(tr.t // 5) + 400  # every pass of the loop takes one chunk (5 ms or more)
        with pytest.raises(KeyboardInterrupt):
            serve(board, trace=player, stdin=ScriptedStdin([b""] * passes + [b"\r\x03"]),
                  write=lambda s: None)
        assert player.done
    from scoreboard.app import App

    app = App(board)  # the board again, booted from its journal
    app.boot()
    actions = list(app.journal.actions())
    assert [a["a"] for a in actions] == ["break"] + ["shot"] * 13, actions
