"""Commands that once broke a simulated board (the firmware on the MicroPython unix port behind
its pty), each with the input that broke it: a fraction in an action (journaled, then refused
by the chain: the board never booted again), a clock 10**20 ms away (the unix port's gmtime
segfaulted), an injected line that does not exist (`internal`, with the events before it kept)
and a string id. Each is now a documented refusal, nothing is half-applied, and the board boots
again after a power cut."""

import time

import pytest

from chalk.link import BoardError, BoardLink, open_port
from chalk.sim import Sim
from tests.mpy import micropython_path

live = pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")


def refused(link, cmd, args, code):
    with pytest.raises(BoardError) as e:
        link.request(cmd, args, timeout=10)
    assert e.value.reason == code, e.value.payload
    return e.value.payload["error"]


def connect(sim):
    port = sim.port
    deadline = time.monotonic() + 30
    while True:
        link = BoardLink(open_port(port), port)
        try:
            link.hello(timeout=5)
            return link
        except Exception:
            link.close()
            if time.monotonic() > deadline:
                raise


@live
def test_hostile_commands_are_refused_and_the_board_plays_on(tmp_path):
    with Sim("five-pins", flash=tmp_path / "flash", test_mode=True) as sim:
        link = connect(sim)
        first = link.request("state")["last_seq"]
        # A fraction in a key the rules do not know: refused before it is journaled.
        err = refused(link, "act", {"action": {"a": "break", "player": 0, "x": 1.5}},
                      "refused")
        assert "cannot be chained" in err and "not written" in err
        # ... and in one they know: their rule (FP-7: player must be 0..1).
        with pytest.raises(BoardError) as e:
            link.request("act", {"action": {"a": "break", "player": 0.0}}, timeout=10)
        assert e.value.reason == "rule"
        assert link.request("state")["last_seq"] == first  # nothing journaled
        assert "ms must be Unix time" in refused(link, "clock", {"ms": 10 ** 20}, "args")
        err = refused(link, "inject", {"events": [{"kind": "press", "id": "confirm",
                                                   "value": 40},
                                                  {"t": 0, "line": "pin.Z", "v": 1}]},
                      "refused")
        assert "unknown line" in err and "pin.Z" in err
        # All or nothing: the press before the unknown line was not taken either.
        assert link.request("state")["last_seq"] == first
        # A line name as the id of an input event: the break, by the confirm button.
        link.request("inject", {"events": [{"kind": "press", "id": "btn.confirm",
                                            "value": 40}]})
        deadline = time.monotonic() + 10
        while link.request("state")["last_seq"] == first and time.monotonic() < deadline:
            time.sleep(0.05)
        assert link.request("state")["last_seq"] == first + 1
        assert link.request("act", {"action": {"a": "shot", "player": 0, "pins": "1",
                                               "carom": 0, "fouls": []}})["seq"] == first + 2
        before = link.request("state")["state"]
        link.close()
        sim.power_cut()
        link = connect(sim)  # it boots again, where it was
        st = link.request("state")
        assert st["last_seq"] == first + 2 and st["state"] == before
        assert not [w for w in st["warnings"] if "journal" in w], st["warnings"]
        link.close()
