"""Put MicroPython and the Chalk app on a board: `flash` (esptool) and `deploy` (mpremote).

flash() writes a MicroPython firmware image to the ESP32's flash with esptool. deploy() copies
the app onto the board's filesystem with mpremote: the package compiled to .mpy (or its .py
sources) under /lib/scoreboard/, main.py and the board config as /board.json, then resets the
board and waits for the app to say hello. A simulated board works the same way: its flash is a
directory, its port a pseudo-terminal, and its reset a restart of the micropython process.

Both tools run as `python -m ...` subprocesses of this interpreter, so the pinned versions are
the ones used, and their output is streamed and quoted when they fail.
"""

import os
import selectors
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from chalk import build, link
from chalk.errors import ChalkError

# -- flash: MicroPython onto the chip --------------------------------------------------------

# Where the MicroPython image goes: after the 4 KB the ROM keeps on the ESP32 and ESP32-S2;
# at 0 on the later chips (micropython.org/download gives the same offsets).
FLASH_OFFSETS = {"esp32": 0x1000, "esp32s2": 0x1000, "esp32s3": 0x0, "esp32c3": 0x0,
                 "esp32c6": 0x0}
FLASH_BAUD = 460800
ESP_IMAGE_MAGIC = 0xE9  # the first byte of every ESP32 bootloader/app image
_FLASH_HINT = ("hold the board's BOOT button while esptool says \"Connecting...\" (release it "
               "when writing starts); check the USB cable is a data cable and the USB-serial "
               "driver (CP210x, CH340) is installed; a lower --baud (115200) helps on long cables")


def check_image(path):
    """The firmware image as a Path, or ChalkError if it is missing or not an ESP32 .bin."""
    p = Path(path)
    if not p.exists():
        raise ChalkError("no firmware image %s" % p,
                         "download MicroPython for the ESP32 (ESP32_GENERIC, a .bin) from "
                         "https://micropython.org/download/ESP32_GENERIC/")
    if p.is_dir() or p.suffix.lower() != ".bin":
        raise ChalkError("%s is not a .bin firmware image" % p,
                         "give the .bin file from https://micropython.org/download/"
                         "ESP32_GENERIC/ (not the .elf, .uf2 or .app-bin)")
    with p.open("rb") as f:
        first = f.read(1)
    if first != bytes([ESP_IMAGE_MAGIC]):
        raise ChalkError("%s is not an ESP32 firmware image (it does not start with byte 0x%02x)"
                         % (p, ESP_IMAGE_MAGIC),
                         "download the .bin again: it may be truncated, or an HTML error page")
    return p


def esptool_commands(port, image, erase=False, baud=FLASH_BAUD, chip="esp32",
                     connect_attempts=None):
    """The esptool command lines flash() runs, in order (erase first with `erase`)."""
    if chip not in FLASH_OFFSETS:
        raise ChalkError("unknown chip %r" % chip, "known: %s" % ", ".join(FLASH_OFFSETS))
    base = [sys.executable, "-m", "esptool", "--chip", chip, "--port", port, "--baud", str(baud)]
    if connect_attempts is not None:
        base += ["--connect-attempts", str(connect_attempts)]
    cmds = []
    if erase:
        cmds.append(base + ["erase-flash"])
    cmds.append(base + ["write-flash", "-z", "0x%x" % FLASH_OFFSETS[chip], str(image)])
    return cmds


def _stream(cmd, out, idle=None, what=None):
    """Run cmd, copying its output (stdout and stderr) to `out` as it comes.

    Returns (exit code, the output's last lines). With `idle`, a tool that prints nothing for
    that many seconds is stopped (a tool blocked on a port that never answers)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    text = b""
    last = time.monotonic()
    try:
        while True:
            if not sel.select(timeout=0.5):
                if idle is not None and time.monotonic() - last > idle:
                    proc.kill()
                    proc.wait()
                    raise ChalkError("%s stopped answering (no output for %d s)"
                                     % (what or cmd[2], idle),
                                     "unplug and replug the board, then try again")
                if proc.poll() is not None:
                    break
                continue
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                break
            last = time.monotonic()
            text = (text + chunk)[-8192:]
            if out is not None:
                out(chunk.decode("utf-8", "replace"))
        proc.wait()
    finally:
        sel.close()
        proc.stdout.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    lines = [ln.strip() for ln in text.decode("utf-8", "replace").replace("\r", "\n")
             .split("\n") if ln.strip()]
    return proc.returncode, lines


def _failure_line(lines):
    """The line of a tool's output that says what went wrong: its last error line (without
    the tool's own prefixes), else its last line."""
    for ln in reversed(lines):
        low = ln.lower()
        if "error" in low and "troubleshooting" not in low:
            for prefix in ("ERROR: ", "A fatal error occurred: ", "mpremote: "):
                if ln.startswith(prefix):
                    ln = ln[len(prefix):]
            return ln
    return lines[-1] if lines else "no output"


def flash(port, image, erase=False, baud=FLASH_BAUD, chip="esp32", connect_attempts=None,
          out=None):
    """Write a MicroPython image to the board on `port` with esptool, streaming its output to
    out(text). ChalkError quoting esptool's error if it fails."""
    image = check_image(image)
    for cmd in esptool_commands(port, image, erase, baud, chip, connect_attempts):
        code, lines = _stream(cmd, out)
        if code != 0:
            step = "erase" if "erase-flash" in cmd else "flash"
            raise ChalkError("esptool could not %s the board on %s: %s"
                             % (step, port, _failure_line(lines)), _FLASH_HINT)


# -- deploy: the app onto the filesystem -----------------------------------------------------

MAIN = build.FIRMWARE / "main.py"
REMOTE_LIB = "lib"  # paths on the board are relative: / on an ESP32, the flash dir on the sim
_NO_CONFIG = "chalk-no-board-config"
_PROMPT = b">>> "


def stage(out_dir, board_cfg=None, mode="mpy", arch=build.ESP32_ARCH):
    """Lay out what goes on the board in out_dir; return [(local path, board path)], in the
    order to copy them: the package, then board.json, then main.py (last, so a board whose
    copy was interrupted does not boot into a half-copied app)."""
    out_dir = Path(out_dir)
    lib = out_dir / REMOTE_LIB
    if mode == "mpy":
        made = build.compile_firmware(lib, arch=arch)
    else:
        made = []
        for rel in build.sources():
            dst = lib / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(build.FIRMWARE / rel, dst)
            made.append(dst)
    files = [(p, p.relative_to(out_dir).as_posix()) for p in sorted(made)]
    if board_cfg is not None:
        files.append((Path(board_cfg), "board.json"))
    files.append((MAIN, "main.py"))
    return files


def check_board_config(path):
    """Refuse a board config the firmware would refuse at boot, with the same message."""
    from scoreboard import boardconfig

    try:
        return boardconfig.load(str(path))
    except boardconfig.BoardConfigError as e:
        raise ChalkError("bad board config %s" % e,
                         "fix it (docs/board-config.md explains every key); nothing was copied")


def _prepare_script(files, need_config):
    """MicroPython run on the board before copying: make the directories, delete files of the
    package that the new copy does not have (a stale .py would shadow the new .mpy: MicroPython
    imports x.py before x.mpy), and check there is a board config."""
    keep = sorted(remote for _, remote in files if remote.startswith(REMOTE_LIB + "/"))
    dirs = set()
    for remote in keep:
        parts = remote.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            dirs.add("/".join(parts[:i]))
    return "\n".join([
        # The stopped app's modules freed first: the copies need blocks of the heap (a board
        # stopped mid-game keeps its code and its game in RAM until a reset).
        "import os, sys, gc",
        "for _m in [m for m in sys.modules if m == %r or m.startswith(%r)]:" % (
            build.PACKAGE, build.PACKAGE + "."),
        "    del sys.modules[_m]",
        "gc.collect()",
        # The host-made key older firmware signed with: the board makes and keeps its own now.
        "try:",
        "    os.remove('board.key')",
        "except OSError:",
        "    pass",
        "def _chalk_walk(d, keep, dirs):",
        "    try:",
        "        es = list(os.ilistdir(d))",
        "    except OSError as e:",
        "        if e.args[0] == 2:",  # ENOENT: nothing there yet (the package goes to ROMFS)
        "            return",
        "        raise",
        "    for e in es:",
        "        p = d + '/' + e[0]",
        "        if e[1] == 0x4000:",
        "            _chalk_walk(p, keep, dirs)",
        "            if p not in dirs:",
        "                os.rmdir(p)",
        "        elif p not in keep:",
        "            os.remove(p)",
        "for _d in %r:" % sorted(dirs, key=len),
        "    try:",
        "        os.mkdir(_d)",
        "    except OSError:",
        "        pass",
        "_chalk_walk(%r, set(%r), set(%r))" % (REMOTE_LIB + "/" + build.PACKAGE, keep,
                                               sorted(dirs)),
        "if %r:" % need_config,
        "    try:",
        "        os.stat('board.json')",
        "    except OSError:",
        "        raise OSError(%r)" % _NO_CONFIG,
    ])


def mpremote_command(port, files, need_config=False, romfs_dir=None):
    """One mpremote run: prepare the filesystem, then copy every file. `resume`: no soft reset
    on connecting (on the simulated board that would end the micropython process). With
    `romfs_dir`, that directory goes into the board's ROMFS partition as one image (its .mpy
    files as they are) and `files` are only what stays on the filesystem."""
    cmd = [sys.executable, "-m", "mpremote", "connect", port, "resume",
           "exec", _prepare_script(files, need_config)]
    if romfs_dir is not None:
        cmd += ["+", "romfs", "--no-mpy", "deploy", str(romfs_dir)]
    for local, remote in files:
        cmd += ["+", "fs", "cp", str(local), ":" + remote]
    return cmd


_ROMFS_QUERY = ("import vfs\nprint('chalk-romfs', hasattr(vfs, 'rom_ioctl') and "
                "vfs.rom_ioctl(1) or 0)")


def romfs_partitions(port):
    """How many ROMFS partitions the board's MicroPython has (0: no ROMFS: an ESP32_GENERIC
    image before 1.25, or one built without it). The app must be stopped (at the REPL)."""
    cmd = [sys.executable, "-m", "mpremote", "connect", port, "resume", "exec", _ROMFS_QUERY]
    code, lines = _stream(cmd, None, idle=30, what="mpremote")
    for ln in lines:
        if ln.startswith("chalk-romfs "):
            try:
                return int(ln.split()[1])
            except ValueError:
                return 0
    if code != 0:
        raise ChalkError("mpremote failed on %s: %s" % (port, _failure_line(lines)),
                         "is another program using the port (a serial monitor, chalk watch)? "
                         "close it; else unplug and replug the board and try again")
    return 0


# The heap a 1,000-action game needs with the firmware as .mpy files on the filesystem, the
# worst of every game, measured on a 32-bit build of MicroPython's unix port (docs/deploy.md):
# their bytecode is loaded into the heap, where frozen or ROMFS code stays in flash.
MPY_HEAP_KB = 153
_HEAP_QUERY = ("import gc, sys\ngc.collect()\nh = gc.mem_free() + gc.mem_alloc()\ntry:\n"
               " import esp32\n h += max([r[2] for r in esp32.idf_heap_info(esp32.HEAP_DATA)]"
               " + [0])\nexcept Exception:\n pass\nprint('chalk-heap', sys.platform, h)")


def board_heap(port):
    """(platform, bytes of heap the board's MicroPython can give: its heap now and, on an ESP32,
    the largest block it may still add from the system heap), or (None, None). The app must
    be stopped (at the REPL)."""
    cmd = [sys.executable, "-m", "mpremote", "connect", port, "resume", "exec", _HEAP_QUERY]
    _code, lines = _stream(cmd, None, idle=30, what="mpremote")
    for ln in lines:
        parts = ln.split()
        if len(parts) == 3 and parts[0] == "chalk-heap" and parts[2].isdigit():
            return parts[1], int(parts[2])
    return None, None


def check_heap(port, what):
    """Refuse to put the firmware on an ESP32's filesystem as `what` (.mpy files or sources)
    when its heap cannot hold it with a long game (docs/deploy.md): nothing is copied."""
    platform, heap = board_heap(port)
    if platform != "esp32" or heap is None:
        return  # another port (the simulated board: its --heap decides)
    if heap < MPY_HEAP_KB * 1024:
        raise ChalkError(
            "the board on %s has %d KB of heap; the firmware as %s on its filesystem needs "
            "%d KB for a 1,000-action game: nothing was copied" % (port, heap // 1024, what,
                                                                   MPY_HEAP_KB),
            "flash a MicroPython image with a ROMFS partition (docs/deploy.md, ROMFS) and deploy "
            "again, or freeze the firmware into the image (docs/deploy.md, section 3)")


def stop_app(port, timeout=5.0):
    """Interrupt the app (Ctrl-C) and wait for the MicroPython prompt, so mpremote finds a
    REPL. mpremote sends its own Ctrl-C but its next byte (Ctrl-A) can arrive while the app is
    still stopping and be lost, and on a pseudo-terminal mpremote then waits forever."""
    ser = link.open_port(port)
    try:
        seen = b""
        deadline = time.monotonic() + timeout
        next_ctrl_c = 0.0
        keys = b"\r\x03"
        while time.monotonic() < deadline:
            now = time.monotonic()
            if now >= next_ctrl_c:
                ser.write(keys)
                # Again with Ctrl-B first: a board left in the raw REPL (an mpremote that was
                # interrupted) goes back to the normal one. Not in the first round, where the
                # app could swallow it as it stops.
                keys = b"\r\x02\r\x03"
                next_ctrl_c = now + 1.0
            seen = (seen + ser.read(ser.in_waiting or 1))[-4096:]
            if seen.rstrip(b" ").endswith(_PROMPT.rstrip()):
                time.sleep(0.1)  # the REPL may print more (a second prompt): let it settle
                ser.read(ser.in_waiting)
                return
    finally:
        ser.close()
    said = [ln.strip() for ln in seen.decode("utf-8", "replace").splitlines() if ln.strip()]
    raise ChalkError("the board on %s does not answer: no MicroPython prompt after Ctrl-C%s"
                     % (port, " (it printed %r)" % said[-1][:60] if said else ""),
                     "is MicroPython on it? flash it with `chalk flash --port %s "
                     "FIRMWARE.bin`; if it is, press its reset (EN) button and try again"
                     % port)


def reset_and_wait(port, timeout=20.0):
    """Soft-reset the board from its REPL (Ctrl-D) and wait until the app answers hello.

    On an ESP32 a soft reset runs main.py again; on the simulated board Ctrl-D ends the
    micropython process and the simulator starts it again, as a board reboots."""
    ser = link.open_port(port)
    board = link.BoardLink(ser, port)
    try:
        ser.write(b"\r\x04")
        deadline = time.monotonic() + timeout
        crashed_at = None
        while time.monotonic() < deadline:
            f = board.poll(0.2)
            if f is not None and f.type == "boot":
                return board.hello()
            said = [ln for ln in board.noise if ln.strip()]
            if crashed_at is None and any("Traceback" in ln for ln in said):
                crashed_at = time.monotonic()
            if crashed_at is not None and time.monotonic() - crashed_at > 1.0:
                break
        if crashed_at is None:
            # No boot frame seen (it may have come before we listened): ask directly.
            try:
                return board.hello(timeout=3.0)
            except ChalkError:
                pass
        said = [ln.strip() for ln in board.noise if ln.strip()]
        last = [ln for ln in said if "Error" in ln] or said
        hint = "check the board's output with `mpremote connect %s repl`" % port
        if last and "incompatible .mpy" in last[-1]:
            hint = ("the .mpy files were compiled for another architecture: use --arch "
                    "xtensawin for an ESP32, --arch none for the simulated board")
        elif last and "BoardConfigError" in last[-1]:
            hint = ("the board's /board.json is refused: deploy a good one with --board CONFIG "
                    "(`chalk board check FILE` checks a config)")
        raise ChalkError("the app did not start after the deploy on %s%s"
                         % (port, ": " + last[-1][:200] if last else " (no output)"), hint)
    finally:
        board.close()


def deploy(port, board_cfg=None, mode="mpy", arch=build.ESP32_ARCH, out=print,
           stage_dir=None, keys=None, romfs=None):
    """Copy the app onto the board on `port`, reset it and return its hello.

    board_cfg: a board config path copied as /board.json (None keeps the board's own; a board
    without one is refused). mode: "mpy" (compiled for `arch`; None = portable bytecode) or
    "source". romfs: None puts the bytecode in the board's ROMFS partition when its firmware
    has one (executed in place from flash, as frozen code: far less RAM) and on the filesystem
    otherwise; False: the filesystem always; True: ROMFS or an error. out(line) gets the
    progress lines, the first saying which was done. keys: the key store (a path; None: the
    default one) the board's own key is enrolled in once it answers (it makes that key at its
    first boot and keeps it in its NVS: no key is written by the deploy; an old /board.key,
    the host-made key of older firmware, is removed)."""
    from chalk.keys import KeyStore

    if board_cfg is not None:
        check_board_config(board_cfg)
    KeyStore(keys)  # a key store that cannot be read fails now, before the board is touched
    tmp = None
    if stage_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="chalk-deploy-")
        stage_dir = tmp.name
    try:
        what = ("%s bytecode" % arch if arch else "portable bytecode") if mode == "mpy" \
            else ".py sources"
        files = stage(stage_dir, board_cfg, mode, arch)
        stop_app(port)
        rom_dir = None
        if mode == "mpy" and romfs is not False:
            if romfs_partitions(port) > 0:
                # The package goes into the ROMFS image (rom/lib/scoreboard: /rom/lib is on
                # the board's sys.path); board.json and main.py stay on the filesystem, and
                # the old /lib/scoreboard is removed (the prepare script keeps nothing there).
                rom_dir = Path(stage_dir) / "rom"
                (rom_dir / REMOTE_LIB).mkdir(parents=True, exist_ok=True)
                shutil.move(str(Path(stage_dir) / REMOTE_LIB / build.PACKAGE),
                            str(rom_dir / REMOTE_LIB / build.PACKAGE))
                packed = len([f for f in files if f[1].startswith(REMOTE_LIB + "/")])
                files = [f for f in files if not f[1].startswith(REMOTE_LIB + "/")]
                out("deploying %d modules (%s) into the board's ROMFS partition, run in place "
                    "from flash; %d files to the filesystem, on %s" % (packed, what, len(files),
                                                                       port))
            elif romfs:
                raise ChalkError("the board on %s has no ROMFS partition" % port,
                                 "flash a MicroPython image with one (1.25 or later), or "
                                 "deploy without --romfs: .mpy files on the filesystem")
        if rom_dir is None:
            check_heap(port, what + " files" if mode == "mpy" else what)
            out("deploying %d files (%s) to the filesystem of %s%s" % (
                len(files), what, port,
                " (no ROMFS partition on this board)" if mode == "mpy" and romfs is not False
                else ""))
        cmd = mpremote_command(port, files, need_config=board_cfg is None, romfs_dir=rom_dir)
        by_local = {str(local): (i, remote) for i, (local, remote) in enumerate(files)}
        total = len(files)
        partial = [""]
        current = [None]  # the file being copied, shown once its copy is done

        def done(suffix=""):
            if current[0] is not None:
                i, remote = current[0]
                out("[%d/%d] %s%s" % (i + 1, total, remote, suffix))
                current[0] = None

        def progress(text):
            # mpremote prints "cp LOCAL :REMOTE" as it starts each copy, and "Up to date: X"
            # when the board already has the same file.
            partial[0] += text
            *whole, partial[0] = partial[0].replace("\r", "\n").split("\n")
            for line in whole:
                if line.startswith("cp "):
                    done()
                    current[0] = by_local.get(line[3:].rsplit(" :", 1)[0])
                elif line.startswith("Up to date: "):
                    done(" (unchanged)")
                elif line.startswith("ROMFS image deployed"):
                    out("ROMFS image written")

        code, lines = _stream(cmd, progress, idle=30, what="mpremote")
        if code == 0:
            done()
        if code != 0:
            if any(_NO_CONFIG in ln for ln in lines):
                raise ChalkError("the board on %s has no /board.json and no --board was given"
                                 % port, "give its config: chalk deploy --board five-pins "
                                 "(or shove-hapenny, or a .json path)")
            raise ChalkError("mpremote failed on %s: %s" % (port, _failure_line(lines)),
                             "is another program using the port (a serial monitor, chalk "
                             "watch)? close it; else unplug and replug the board and try again")
    finally:
        if tmp is not None:
            tmp.cleanup()
    out("resetting the board")
    info = reset_and_wait(port)
    enrol_board(port, keys, out)
    return info


def enrol_board(port, keys, out):
    """Enrol the board's own key in the key store (chalk keys enrol): said, never fatal (the
    deploy itself went through)."""
    from chalk.keys import enrol

    try:
        _reply, lines = enrol(port, keys)
    except ChalkError as e:
        out("warning: the board's key was not enrolled: %s%s" % (
            e.message, " (%s)" % e.hint if e.hint else ""))
        return
    for line in lines:
        out(line)
