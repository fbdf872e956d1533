"""The board is never deaf while it talks: a resync of the whole journal goes out a slice per
scan, so a button pressed meanwhile counts (docs/serial-protocol.md, `journal`)."""

import time

import pytest

from chalk.link import BoardLink, open_port
from chalk.sim import Sim
from scoreboard import frames
from scoreboard.journal import Journal
from scoreboard.link import Link
from tests.mpy import micropython_path

needs_mp = pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")


class Handler:
    def __init__(self, n):
        self.records = [{"seq": s, "a": "undo", "t": s} for s in range(1, n + 1)]

    def cmd_journal(self, args):
        return (r for r in self.records if r["seq"] > args["after"])

    def cmd_state(self, args):
        return {"pad": "x" * 900}


def decoded(out):
    got = []
    lines = frames.Lines()
    for line in lines.feed("".join(out)):
        got.append(frames.decode(line))
    return got


def test_a_journal_stream_goes_out_a_bounded_slice_per_pump():
    out = []
    link = Link(out.append, Handler(50), budget=60)
    link.feed(frames.encode(7, "journal", {"after": 0}))
    assert out == []  # nothing is written inside the command
    passes = 0
    while link.busy():
        before = sum(len(s) for s in out)
        link.pump()
        assert sum(len(s) for s in out) - before <= 60
        passes += 1
    got = decoded(out)
    assert [p["seq"] for _, t, p in got if t == "rec"] == list(range(1, 51))
    assert got[-1][1:] == ("ok", {"id": 7, "result": {"last": 50, "count": 50, "records": 50}})
    assert passes >= sum(len(s) for s in out) // 60 > 30  # ~45 bytes a record, 60 a pass


def test_frames_sent_during_a_stream_follow_its_ok_and_commands_wait():
    out = []
    link = Link(out.append, Handler(5), budget=40)
    link.feed(frames.encode(7, "journal", {"after": 0}))
    link.pump()
    link.emit("warn", {"warning": "meanwhile"})
    link.feed(frames.encode(8, "state", {}))  # a 900-byte reply, also a slice per pump
    link.feed(frames.encode(7, "journal", {"after": 0}))  # the host resending: not run twice
    while link.busy():
        link.pump()
    got = decoded(out)
    assert [t for _, t, _ in got] == ["rec"] * 5 + ["ok", "warn", "ok"]
    assert [n for n, _, _ in got] == list(range(8))  # the 5 recs are numbered just before ok
    assert got[7][2]["id"] == 8 and len(got[7][2]["result"]["pad"]) == 900
    assert link.stats()["repeats"] == 1


def test_frames_beyond_the_queue_limit_are_dropped_and_counted_never_replies():
    out = []
    link = Link(out.append, Handler(0), budget=10)
    for i in range(200):
        link.emit("warn", {"warning": "w%03d" % i})
    assert link.stats()["dropped"] > 0
    link.feed(frames.encode(9, "state", {}))
    while link.busy():
        link.pump()
    got = decoded(out)
    assert got[-1][1] == "ok"  # a reply is never dropped
    n = [f[0] for f in got]
    assert n == sorted(n) and n[-1] == 200  # the dropped frames' numbers were spent: gaps


def write_journal(flash, pairs):
    """A five-pins board's flash: a game of `pairs` break/undo pairs (no break left). Each record
    carries a note the rules do not keep, so it streams as a JSON `rec` frame (protocol 2 packs
    plain actions some 15 times tighter, and the stream would be over before the press)."""
    j = Journal(str(flash))
    j.boot()
    j.new_game({"chalk": 1, "game": "five-pins", "config": {"target": 60, "sets": 3,
                                                             "pin_foul_penalty": 0},
                "players": [], "board": "five-pins", "firmware": "0.1.0"})
    t = 0
    for _ in range(pairs):
        t += 10
        j.append({"a": "break", "player": 1, "t": t, "note": "long resync"})
        j.append({"a": "undo", "t": t + 5, "note": "long resync"})
    j.close()
    return 1 + 2 * pairs


@needs_mp
def test_a_press_during_a_long_resync_at_115200_baud_is_scored(tmp_path):
    flash = tmp_path / "flash"
    records = write_journal(flash, 500)
    with Sim("five-pins", flash=flash, test_mode=True, baud=115200) as sim:
        link = BoardLink(open_port(sim.port), sim.port)
        try:
            assert link.hello(timeout=60)["last_seq"] == records
            # Confirm (the break, FP-7) pressed for 400 ms, a second from now by the board's
            # clock; the resync asked for at once lasts ~9 s at 115200 baud.
            link.request("inject", {"events": [{"t": 1000, "line": "btn.confirm", "v": 1},
                                               {"t": 1400, "line": "btn.confirm", "v": 0}]})
            asked = time.monotonic()
            recs = link.journal_since(0, timeout=30)
            took = time.monotonic() - asked
            assert took > 1.4  # the press fell inside the stream (which the UART paces)
            assert [r["seq"] for r in recs][:records] == list(range(1, records + 1))
            state = link.request("state", timeout=10)
            assert state["last_seq"] == records + 1  # the press was journaled...
            assert state["state"]["breaker"] == 0 and state["state"]["next"] == 0  # FP-7
            last = link.journal_since(records, timeout=10)
            assert [r.get("a") for r in last] == ["break"]
            assert sim.boots == 1 and sim.watchdog_resets == 0  # alive all along
        finally:
            link.close()
