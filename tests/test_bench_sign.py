"""A smoke run of bench/bench_sign.py (`make bench`'s signing figures): it runs, on the unix
port (and its 32-bit build when there is one), and prints every figure beside its goal. The
figures themselves are never asserted: a busy machine is no bug."""

import re
import subprocess
import sys

from tests.mpy import ROOT


def test_the_signing_bench_runs_and_prints_its_figures():
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_sign.py"), "--quick"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    rows = [ln for ln in lines if ln.startswith("unix port")]
    assert len(rows) in (4, 2), out.stdout  # signing time and loop gap, per port
    for row in rows:
        figures = re.findall(r"\d+\.\d+", row)
        assert figures, row
    # The loop-gap rows measured scans (a loop that samples on edges, not scanning every pass,
    # would leave nothing measured: a gap of 0.0 over 0 scans, whatever the loop did).
    gap_rows = rows[len(rows) // 2:]
    for row in gap_rows:
        assert int(row.split()[-1]) > 0, row
    assert any(ln.startswith("goal") and "<= 100" in ln for ln in lines)
    assert "goal: at most 2 scan periods" in out.stdout
