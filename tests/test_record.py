"""Record at the table, replay at the desk: a board's line changes, recorded with its own ms as a
sensor trace (`chalk record`), replay on a simulated board to the same actions."""

import json
import time

import pytest

from chalk import cli, remote
from chalk.record import TraceRecorder
from chalk.sim import Sim, run_virtual
from chalk.traces import Trace
from scoreboard import boardconfig
from scoreboard.hal.sim import check_trace
from tests.mpy import micropython_path

pytestmark = pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")
NAMES = boardconfig.line_names(boardconfig.load(
    str(__import__("chalk.sim", fromlist=["BOARDS"]).BOARDS / "five-pins.json")))


def a_few_shots():
    """Five-pins play at the table, 32 line changes at most (one `inject`)."""
    tr = Trace(seed=5, bounce=False)
    tr.wait(200)
    tr.press("confirm")  # P1 breaks (FP-7)
    tr.wait(300)
    tr.pin_fall("C", tr.t, 400)  # stands again: still counts (FP-19)
    tr.pin_fall("2", tr.t + 50)
    tr.wobble("3", tr.t + 120, 10)  # too short to count (FP-21)
    tr.wait(2600)  # the shot window settles
    tr.press("carom4")
    tr.press("confirm")
    tr.wait(300)
    tr.set("pin.2", 0)  # stood up again for the next shot
    tr.wait(2600)  # everything still again (settle_ms), well clear of any scan boundary
    tr.press("confirm")  # P2's shot: nothing down
    tr.wait(300)
    return tr


def plain(actions):
    return [{k: v for k, v in a.items() if k not in ("t", "seq")} for a in actions]


def test_a_recorded_trace_replays_to_the_same_actions(tmp_path):
    tr = a_few_shots()
    played = tmp_path / "played.jsonl"
    tr.write(played)
    events = [json.loads(line) for line in tr.lines()]
    assert len(events) <= 32
    recorded = tmp_path / "recorded.jsonl"
    want, _ = run_virtual("five-pins", played)
    with Sim("five-pins", flash=tmp_path / "flash", test_mode=True) as sim:
        with remote.connect(sim.port) as bl, open(recorded, "w") as out:
            first = bl.hello()["last_seq"] + 1
            rec = TraceRecorder(bl, out)
            rec.start()
            bl.request("inject", {"events": events})  # the trace, played at the table's pace
            deadline = time.monotonic() + 60
            while rec.changes < len(events):
                assert time.monotonic() < deadline, "the board reported %d of %d changes" % (
                    rec.changes, len(events))
                f = bl.poll(0.2)
                if f is not None:
                    rec.take(f)
            rec.finish()
            assert bl.request("state")["record"] is False
            # The last release is recorded a scan before the action it makes is journaled.
            while bl.request("state")["last_seq"] < first - 1 + len(want):
                assert time.monotonic() < deadline, "the board made fewer actions"
                time.sleep(0.05)
            live = [r for r in bl.journal_since(first - 1) if "a" in r]
    with open(recorded) as f:
        assert check_trace(f, NAMES) == len(events)
    got, _ = run_virtual("five-pins", recorded)
    assert [a["a"] for a in plain(want)] == ["break", "shot", "shot"]  # the trace's own play
    assert plain(want)[1]["pins"] == "2C" and plain(want)[1]["carom"] == 4
    assert plain(got) == plain(want)
    assert plain(live) == plain(want)  # what the board scored live, too


def test_chalk_record_writes_a_whole_trace_and_turns_recording_off(tmp_path, capsys):
    with Sim("five-pins", flash=tmp_path / "flash", test_mode=True) as sim:
        with remote.connect(sim.port) as bl:
            bl.request("inject", {"events": [{"t": 0, "line": "pin.C", "v": 1}]})
            deadline = time.monotonic() + 20
            while bl.request("state")["note"] is None:  # the pin is seen down
                assert time.monotonic() < deadline
                time.sleep(0.05)
        out = tmp_path / "at-the-table.jsonl"
        code = cli.main(["record", "--port", sim.port, str(out), "--seconds", "0.5"])
        err = capsys.readouterr().err
        assert code == 0, err
        assert "1 line changes recorded" in err
        assert out.read_text() == '{"t": 0, "line": "pin.C", "v": 1}\n'  # down when it started
        assert not (tmp_path / "at-the-table.jsonl.part").exists()
        with remote.connect(sim.port) as bl:
            assert bl.request("state")["record"] is False
    bad = tmp_path / "no-such-dir" / "x.jsonl"
    code = cli.main(["record", "--port", sim.port, str(bad)])
    err = capsys.readouterr().err
    assert code != 0 and err.startswith("chalk: cannot write %s" % bad)
    code = cli.main(["record", "--port", str(tmp_path / "nope"), str(tmp_path / "y.jsonl")])
    err = capsys.readouterr().err
    assert code != 0 and "no such port" in err and not (tmp_path / "y.jsonl").exists()
