"""The wheel a pub PC installs (`make dist`, `pipx install`): an installed chalk, away from the
checkout, simulates a board from the firmware it carries and serves the pages' files."""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_wheel_carries_the_firmware_and_runs_without_the_checkout(tmp_path):
    out = tmp_path / "dist"
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                        "--disable-pip-version-check", "-w", str(out), str(ROOT)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    wheel = next(out.glob("chalk-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for cfg in (ROOT / "firmware" / "boards").glob("*.json"):
        assert "chalk/_firmware/boards/" + cfg.name in names
    for f in ("chalk/_firmware/main.py", "chalk/_firmware/scoreboard/app.py",
              "chalk/samples/traces/five-pins.jsonl", "chalk/templates/venue.html",
              "chalk/static/chalk.js", "chalk/static/chalk.css", "scoreboard/rules/__init__.py"):
        assert f in names, f
    target = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                        "--disable-pip-version-check", "--target", str(target), str(wheel)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    # Run from elsewhere with only the installed copy first on the path: no checkout in sight.
    env = dict(os.environ, PYTHONPATH=str(target), HOME=str(tmp_path / "home"))
    env.pop("CHALK_PORT", None)
    where = subprocess.run([sys.executable, "-c", "import chalk.build as b, chalk.web as w; "
                            "print(b.FIRMWARE); print(w.HERE)"], capture_output=True, text=True,
                           env=env, cwd=str(tmp_path), timeout=60)
    firmware, web = where.stdout.split()
    assert firmware == str(target / "chalk" / "_firmware") and web == str(target / "chalk")
    trace = target / "chalk" / "samples" / "traces" / "five-pins.jsonl"
    r = subprocess.run([sys.executable, "-m", "chalk.cli", "sim", "--virtual", "--board",
                        "five-pins", "--trace", str(trace), "--flash", str(tmp_path / "flash")],
                       capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=600)
    assert r.returncode == 0, r.stdout[-1000:] + r.stderr[-1000:]
    final = json.loads(r.stdout.strip().splitlines()[-1])
    assert final["winner"] in (0, 1)
