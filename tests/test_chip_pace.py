"""Never deaf on the chip's own budget: a simulated board slowed to an ESP32's pace (every step
of its loop and every sample stretched by the factor `make bench` derives, docs/simulator.md)
resyncs a 1,000-action journal, and a button press and a puck through a pocket's beam during
the resync are both taken: the press from the samples the board's timer took meanwhile, the
puck from its beam's edges."""

import json
import time
from pathlib import Path

import pytest

from bench.bench_esp32 import esp32_factor
from chalk.link import BoardLink, open_port
from chalk.sim import Sim
from tests.longgames import board_config, endless, journal
from tests.mpy import micropython_path

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")


def test_a_press_and_a_passage_during_a_1000_action_resync_at_the_chips_pace(tmp_path):
    factor = esp32_factor()
    head, actions = endless("novuss", 1000, seed=9)
    flash = tmp_path / "flash"
    flash.mkdir()
    journal(flash, head, actions)
    cfg = board_config(ROOT, "novuss", head, tmp_path / "novuss.json")
    cfg_data = json.loads(cfg.read_text())
    cfg_data["link"] = {"test_mode": True}
    cfg.write_text(json.dumps(cfg_data))
    with Sim(str(cfg), flash=flash, test_mode=True, baud=115200, stretch=factor) as sim:
        link = BoardLink(open_port(sim.port), sim.port)
        try:
            assert link.hello(timeout=120)["last_seq"] == 1001
            # "own" pressed for 60 ms and a red puck through pocket 1's beam in 25 ms, from
            # 0.4 s on by the board's clock; the resync asked for at once lasts far longer at
            # the chip's pace.
            link.request("inject", {"events": [
                {"t": 400, "line": "btn.own", "v": 1}, {"t": 460, "line": "btn.own", "v": 0},
                {"t": 700, "line": "colour.1", "v": 2000}, {"t": 700, "line": "pocket.1", "v": 1},
                {"t": 725, "line": "pocket.1", "v": 0}, {"t": 725, "line": "colour.1", "v": 80},
            ]}, timeout=60)
            asked = time.monotonic()
            recs = link.journal_since(0, timeout=600)
            took = time.monotonic() - asked
            assert took > 1.0, "the resync must outlast the press and the passage"
            assert [r["seq"] for r in recs] == list(range(1, 1002))
            events = []
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and len(events) < 2:
                f = link.poll(1.0)
                if f is not None and f.type == "event" and f.payload["kind"] in ("press",
                                                                                   "pocket"):
                    events.append(f.payload)
            kinds = sorted((e["kind"], e["id"]) for e in events)
            own = cfg_data and list(cfg_data["buttons"]).index("own")
            assert kinds == [("pocket", 0), ("press", own)], events
            press = [e for e in events if e["kind"] == "press"][0]
            assert 50 <= press["value"] <= 70  # held 60 ms, as sampled every 5 ms
            pocket = [e for e in events if e["kind"] == "pocket"][0]
            assert pocket["value"] == 0  # RED: the colour read at the beam's break
            st = link.request("state", timeout=60)
            assert st["gap_ms"] >= 5 and st["step_ms"] > 0
            assert sim.boots == 1 and sim.watchdog_resets == 0
        finally:
            link.close()
