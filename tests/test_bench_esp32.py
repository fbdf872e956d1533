"""A short run of `make bench`'s ESP32 figures (bench/bench_esp32.py), so the bench nothing else
runs does not break unseen: every section prints, each figure beside its goal."""

import pytest

from bench import bench_esp32
from tests.mpy import micropython_path


@pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")
def test_the_esp32_bench_prints_every_figure_beside_its_goal(capsys, monkeypatch):
    monkeypatch.delenv(bench_esp32.PEER_ENV, raising=False)
    bench_esp32.main(smoke=True)
    out = capsys.readouterr().out
    assert "the ESP32's time: this machine's unix-port figures x" in out
    for section in ("idle ms", "Chalk ms/s", "resync ms", "collect ms", "falls seen"):
        assert section in out
    assert "<= 2.5" in out and "<= Switch" in out and "<= 10" in out
    chalk = [ln for ln in out.splitlines() if ln.startswith("Chalk (goal")][0]
    assert chalk.split()[-3:] == ["100.0%", "0.0%", "met"]  # every fall, no wobble (FP-19, 21)
    assert "goals met" in out
    assert bench_esp32.esp32_factor() >= 1
