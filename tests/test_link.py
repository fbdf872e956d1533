"""The serial link, both ends (docs/serial-protocol.md): the board's Link fed by hand, the same
Link on MicroPython, and the host's BoardLink talking to it over a real pseudo-terminal, with
damage on the wire both ways; and the errors a user meets opening a port."""

import binascii
import errno
import grp
import json
import os
import select
import subprocess
import sys
import threading
import time
import tty
from types import SimpleNamespace

import pytest
import serial

from chalk import link as host
from chalk import remote
from chalk.errors import ChalkError
from scoreboard import frames
from scoreboard.link import COMMANDS, Link, Refused
from scoreboard.rules import RuleError
from tests.conftest import report_micropython
from tests.mpy import FIRMWARE, MP_TESTS, run_mp


class FakeHandler:
    """Stands in for the app: records its calls, keeps a tiny journal."""

    def __init__(self, n_records=5):
        self.calls = []
        self.records = [{"seq": 1, "type": "H", "header": {
            "chalk": 1, "game": "five-pins", "config": {}, "players": ["Zoë", "Bob"],
            "game_no": 1}}]
        for s in range(2, n_records + 1):
            self.records.append({"seq": s, "t": s * 1000, "a": "shot", "player": s % 2,
                                 "pins": "1C"})

    def _call(self, name, args):
        self.calls.append((name, args))

    def seq(self):
        return self.records[-1]["seq"] if self.records else 0

    def cmd_hello(self, args):
        self._call("hello", args)
        return {"firmware": "0.1.0", "game": "five-pins", "board": "bench",
                "last_seq": self.seq()}

    def cmd_state(self, args):
        self._call("state", args)
        return {"game": "five-pins", "state": {"scores": [0, 0], "next": 0},
                "last_seq": self.seq()}

    def cmd_new(self, args):
        self._call("new", args)
        return {"game_no": 2, "seq": self.seq() + 1}

    def cmd_undo(self, args):
        self._call("undo", args)
        if len(self.records) <= 1:
            raise Refused("nothing to undo")
        self.records.pop()
        return {"seq": self.seq()}

    def cmd_journal(self, args):
        self._call("journal", args)
        for r in self.records:
            if r["seq"] > args["after"]:
                yield r

    def cmd_ack(self, args):
        self._call("ack", args)
        return {"rotated": []}

    def cmd_clock(self, args):
        self._call("clock", args)
        return {"ms": args["ms"]}

    def cmd_inject(self, args):
        self._call("inject", args)
        return {"events": len(args["events"])}

    def cmd_act(self, args):
        self._call("act", args)
        if args["action"]["a"] == "break" and args["action"].get("player") == 5:
            raise RuleError("FP-7", "player must be 0..1", args["action"])
        if args["action"]["a"] == "boom":
            raise KeyError("boom")
        return {"state": {"scores": [1, 0]}}

    def cmd_service(self, args):
        self._call("service", args)
        return {"service": args["on"]}


def board(test_mode=False, handler=None):
    out = []
    h = handler or FakeHandler()
    return Link(out.append, h, test_mode=test_mode), h, out


def cmd(n, name, args=None):
    if isinstance(args, str):  # the payload's JSON text as it is (escapes a dict cannot hold)
        body = "~c2 %d %s %s" % (n, name, args)
        return "%s %08x\n" % (body, binascii.crc32(body.encode()))
    return frames.encode(n, name, args if args is not None else {})


def replies(out):
    return [frames.decode(line) for line in out]


# -- the board's end ------------------------------------------------------------------------

def test_partial_merged_and_garbage_input():
    link, h, out = board()
    stream = (b"\x00\xffgarbage\r\n>>> \r\nMicroPython v1.24.1\r\n" + cmd(1, "hello").encode()
              + cmd(2, "state").encode() + b"~c2 3 state {} deadbeef\n" + b"\n\r\n"
              + cmd(4, "hello").encode()[:10])
    for i in range(0, len(stream), 3):
        link.feed(stream[i:i + 3])
    assert [r[1:] for r in replies(out)] == [
        ("ok", {"id": 1, "result": {"firmware": "0.1.0", "game": "five-pins", "board": "bench",
                                    "last_seq": 5, "protocol": 2, "test_mode": False}}),
        ("ok", {"id": 2, "result": {"game": "five-pins", "state": {"scores": [0, 0], "next": 0},
                                    "last_seq": 5}})]
    link.feed(cmd(4, "hello")[10:])  # the rest of the last command, as a str
    assert replies(out)[-1][2]["id"] == 4
    assert [r[0] for r in replies(out)] == [0, 1, 2]  # the board's own frame numbers
    assert link.stats() == {"frames_in": 3, "frames_out": 3, "corrupt": 1, "noise": 3,
                            "ignored": 0, "refused": 0, "repeats": 0, "version": 0,
                            "dropped": 0}


def test_exactly_one_reply_per_command_whatever_happens():
    link, h, out = board(test_mode=True)
    sent = [("hello", {}), ("state", {}), ("new", {"game": "five-pins"}), ("undo", {}),
            ("journal", {"after": 0}), ("ack", {"seq": 3}), ("clock", {"ms": 1767225600000}),
            ("inject", {"events": [{"t": 5, "line": "pin.C", "v": 1}]}),
            ("act", {"action": {"a": "break", "player": 0}}), ("service", {"on": True}),
            ("bogus", {}), ("state", {"x": 1}), ("act", {"action": {"a": "boom"}}),
            ("undo", {}), ("undo", {}), ("undo", {}), ("undo", {})]
    for i, (name, args) in enumerate(sent):
        link.feed(cmd(100 + i, name, args))
    got = [r for r in replies(out) if r[1] in ("ok", "err")]
    assert [r[2]["id"] for r in got] == [100 + i for i in range(len(sent))]
    recs = [r for r in replies(out) if r[1] == "rec"]
    assert [r[2]["seq"] for r in recs] == [1, 2, 3, 4]  # after undo: seq 5 is gone
    assert got[4][2]["result"] == {"last": 4, "count": 4, "records": 4}
    assert [r[1] for r in got[-4:]] == ["ok", "ok", "ok", "err"]
    assert got[-1][2] == {"id": 116, "code": "refused", "error": "nothing to undo"}


@pytest.mark.parametrize("name,args,code,words", [
    ("new", {}, "args", "new needs game"),
    ("new", {"game": 5}, "args", "game must be a game id"),
    ("new", {"game": ""}, "args", "game must be a game id"),
    ("new", {"game": "five-pins", "config": []}, "args", "config must be a JSON object"),
    ("new", {"game": "five-pins", "players": "Ann"}, "args", "players must be a list"),
    ("new", {"game": "five-pins", "players": ["x" * 41]}, "args", "players must be"),
    ("new", {"game": "five-pins", "players": [["A", "B", "C"]]}, "args", "players must be"),
    ("new", {"game": "five-pins", "players": ["A"] * 10}, "args", "at most 9"),
    ("new", {"game": "five-pins", "players": [3]}, "args", "players must be"),
    ("new", {"game": "five-pins", "colour": "red"}, "args",
     "new takes no argument colour (known: game, config, players)"),
    ("journal", {}, "args", "journal needs after"),
    ("journal", {"after": -1}, "args", "after must be a non-negative integer"),
    ("journal", {"after": "3"}, "args", "after must be a non-negative integer"),
    ("journal", {"after": True}, "args", "after must be a non-negative integer"),
    ("ack", {}, "args", "ack needs seq"),
    ("ack", {"seq": 1.5}, "args", "seq must be a non-negative integer"),
    ("clock", {"ms": None}, "args", "ms must be Unix time in ms"),
    # A far-off time is no clock (the unix port's gmtime crashed the board on 10**20).
    ("clock", {"ms": 10 ** 20}, "args", "ms must be Unix time in ms from 946684800000"),
    ("clock", {"ms": 0}, "args", "(2000-01-01) to 4102444799999 (2099-12-31)"),
    ("journal", {"after": 10 ** 20}, "args", "after must be a non-negative integer"),
    ("act", {"action": {"a": "shot", "pins": [[[[[["1"]]]]]]}}, "args", "nested at most"),
    ("act", {"action": {"a": "undo", "link": "00"}}, "args", "the chain's keys"),
    # As a JSON escape on the wire: a lone surrogate (UTF-8 has none; the host could not store it).
    ("act", '{"action":{"a":"undo","note":"\\ud800"}}', "args", "an action object"),
    ("new", '{"game":"five-pins","players":["\\udc00"]}', "args", "players must be"),
    ("inject", {"events": [{"kind": "press", "id": 3, "value": 1.5}]}, "args", "bad event"),
    ("inject", {"events": [{"kind": "press", "id": [], "value": 1}]}, "args", "bad event"),
    ("inject", {"events": [{"kind": "press", "id": 1, "value": 2 ** 40}]}, "args", "bad event"),
    ("inject", {"events": [{"t": 10 ** 12, "line": "pin.C", "v": 1}]}, "args", "bad event"),
    ("inject", {"events": [{"kind": [[[[1]]]], "id": 1, "value": 1}]}, "args",
     "bad event"),
    ("clock", {"epoch": 5}, "args", "clock needs ms"),
    ("service", {"on": 1}, "args", "on must be true or false"),
    ("service", {}, "args", "service needs on"),
    ("hello", {"verbose": True}, "args", "hello takes no argument verbose (known: none)"),
    ("state", {"x": 1}, "args", "state takes no argument x"),
    ("undo", {"n": 2}, "args", "undo takes no argument n"),
    ("inject", {}, "args", "inject needs events"),
    ("inject", {"events": []}, "args", "a list of 1..32 input events"),
    ("inject", {"events": [{"t": 1, "line": "pin.C", "v": 2}]}, "args", "bad event"),
    ("inject", {"events": [{"t": 1, "line": "pin.C", "v": True}]}, "args", "bad event"),
    ("inject", {"events": [{"t": -1, "line": "pin.C", "v": 1}]}, "args", "bad event"),
    ("inject", {"events": [{"line": "pin.C", "v": 1, "x": 0}]}, "args", "bad event"),
    ("inject", {"events": [{"kind": "press", "id": 3}]}, "args", "bad event"),
    ("inject", {"events": [{"kind": [], "id": 3, "value": 1}]}, "args", "bad event"),
    ("inject", {"events": [{"line": "x", "v": 1}] * 33}, "args", "1..32"),
    ("inject", {"events": "pin.C"}, "args", "a list"),
    ("act", {}, "args", "act needs action"),
    ("act", {"action": {"player": 0}}, "args", 'an action object with an "a" kind'),
    ("act", {"action": "undo"}, "args", "an action object"),
    ("frobnicate", {}, "unknown", "unknown command frobnicate (known: ack, act, clock, hello"),
    ("act", {"action": {"a": "break", "player": 5}}, "rule", "FP-7: player must be 0..1"),
    ("act", {"action": {"a": "boom"}}, "internal", "KeyError"),
])
def test_arguments_are_checked_before_the_handler_is_called(name, args, code, words):
    link, h, out = board(test_mode=True)
    link.feed(cmd(9, name, args))
    (n, typ, payload), = replies(out)
    assert typ == "err" and payload["id"] == 9 and payload["code"] == code, payload
    assert words in payload["error"]
    if code in ("args", "unknown"):
        assert h.calls == []
    if code == "rule":
        assert payload["rule"] == "FP-7"
    assert link.stats()["refused"] == 1


@pytest.mark.parametrize("name,args,seen", [
    ("new", {"game": "shove-hapenny", "players": [["Zoë", "Åsa"], "Bob"]},
     {"game": "shove-hapenny", "config": {}, "players": [["Zoë", "Åsa"], "Bob"]}),
    ("new", {"game": "five-pins", "config": {"target": 31}},
     {"game": "five-pins", "config": {"target": 31}, "players": []}),
    ("ack", {"seq": 0}, {"seq": 0}),
    ("clock", {"ms": 1767225600000}, {"ms": 1767225600000}),
    ("service", {"on": False}, {"on": False}),
    ("inject", {"events": [{"t": 0, "line": "btn.undo", "v": 1},
                           {"kind": "press", "id": 3, "value": 40, "t": 9},
                           {"kind": 5, "id": "pin.C", "value": 0}]}, None),
    ("act", {"action": {"a": "break", "player": 0}}, None),
])
def test_good_arguments_reach_the_handler_with_defaults_filled(name, args, seen):
    link, h, out = board(test_mode=True)
    link.feed(cmd(3, name, args))
    (n, typ, payload), = replies(out)
    assert typ == "ok", payload
    assert h.calls == [(name, seen if seen is not None else args)]


@pytest.mark.parametrize("name,args", [
    ("inject", {"events": [{"t": 0, "line": "pin.C", "v": 1}]}),
    ("act", {"action": {"a": "undo"}}),
    ("inject", {"events": "not even checked"}),
])
def test_inject_and_act_are_refused_unless_test_mode(name, args):
    link, h, out = board(test_mode=False)
    link.feed(cmd(4, name, args))
    (n, typ, payload), = replies(out)
    assert typ == "err" and payload["code"] == "test_mode"
    assert payload["error"].startswith("%s is refused: input injection is off on this board"
                                       % name)
    assert '"test_mode": true' in payload["error"]
    assert h.calls == []


def test_hello_reports_protocol_and_test_mode_even_without_a_handler_method():
    link, h, out = board(test_mode=True, handler=object())
    link.feed(cmd(1, "hello") + cmd(2, "state"))
    (_, _, a), (_, _, b) = replies(out)
    assert a["result"] == {"protocol": 2, "test_mode": True}
    assert b["code"] == "unsupported" and "does not implement state" in b["error"]


def test_a_repeated_command_is_answered_again_not_carried_out_twice():
    link, h, out = board()
    link.feed(cmd(7, "undo") + cmd(7, "undo"))  # the host resent: its reply was lost
    assert [c[0] for c in h.calls] == ["undo"]
    (n1, t1, p1), (n2, t2, p2) = replies(out)
    assert (t1, p1) == (t2, p2) == ("ok", {"id": 7, "result": {"seq": 4}})
    assert n2 == n1 + 1  # a fresh frame number: the resend is not a lost or duplicate frame
    link.feed(cmd(8, "undo"))  # a new id is a new command
    link.feed(cmd(7, "undo"))  # an old id, no longer the last: carried out (ids never repeat)
    assert len(h.calls) == 3
    link.feed(cmd(9, "state") + cmd(9, "state"))  # reading commands are simply run again
    assert len(h.calls) == 5
    assert link.stats()["repeats"] == 1


def test_journal_streams_records_then_ok():
    link, h, out = board()
    link.feed(cmd(5, "journal", {"after": 2}))
    got = replies(out)
    assert [(t, p.get("seq")) for _, t, p in got] == [("rec", 3), ("rec", 4), ("rec", 5),
                                                     ("ok", None)]
    assert got[-1][2] == {"id": 5, "result": {"last": 5, "count": 3, "records": 3}}
    assert [n for n, _, _ in got] == [0, 1, 2, 3]
    out.clear()
    link.feed(cmd(6, "journal", {"after": 9}))
    assert replies(out)[0][2] == {"id": 6, "result": {"last": 9, "count": 0, "records": 0}}


def test_journal_record_too_long_for_a_frame_stops_the_stream_with_an_error():
    h = FakeHandler()
    h.records[2]["note"] = "x" * frames.MAX_LINE
    link, h, out = board(handler=h)
    link.feed(cmd(5, "journal", {"after": 0}))
    got = replies(out)
    assert [t for _, t, _ in got] == ["rec", "rec", "err"]
    assert got[-1][2]["code"] == "too_long" and got[-1][2]["seq"] == 3
    assert [n for n, _, _ in got] == [0, 1, 2]  # no frame number was spent on it


def test_a_handler_bug_or_refusal_mid_journal_is_an_err_after_the_records_sent():
    class Broken(FakeHandler):
        def cmd_journal(self, args):
            yield self.records[0]
            raise Refused("journal changed on flash")

    link, h, out = board(handler=Broken())
    link.feed(cmd(5, "journal", {"after": 0}))
    assert [(t, p.get("code")) for _, t, p in replies(out)] == [("rec", None),
                                                               ("err", "refused")]


def test_too_long_reply_becomes_an_err():
    class Chatty(FakeHandler):
        def cmd_state(self, args):
            return {"blob": "x" * 2000}

    link, h, out = board(handler=Chatty())
    link.feed(cmd(5, "state"))
    (_, typ, payload), = replies(out)
    assert typ == "err" and payload["code"] == "too_long"


def test_a_state_reply_too_long_goes_without_its_latest_action():
    """app.status() adds the latest action (rec, before, undid, config) for the host's words:
    a reply that would not fit a frame, or not fit the heap, is sent without them."""
    big = {"a": "turn", "side": 0, "beds": [0] * 9, "note": "x" * 700}

    class Long(FakeHandler):
        def cmd_state(self, args):
            return {"game": "shove-hapenny", "state": {"turns": 1}, "warnings": ["w" * 200],
                    "rec": big, "before": {"turns": 0}, "undid": None, "config": {}}

    link, h, out = board(handler=Long())
    link.feed(cmd(5, "state"))
    (_, typ, payload), = replies(out)
    assert typ == "ok" and payload["id"] == 5
    assert payload["result"] == {"game": "shove-hapenny", "state": {"turns": 1},
                                 "warnings": ["w" * 200]}

    class Fits(Long):
        def cmd_state(self, args):
            return dict(Long.cmd_state(self, args), rec={"a": "turn", "side": 0})

    link, h, out = board(handler=Fits())
    link.feed(cmd(6, "state"))
    assert replies(out)[0][2]["result"]["rec"] == {"a": "turn", "side": 0}

    # No room on the heap for the reply with its latest action (a board's heap that play has
    # left in pieces): the board does not fail, it answers without it.
    link, h, out = board(handler=Fits())
    real = frames.encode
    tries = []

    def encode(n, typ, payload, version=frames.VERSION):
        if typ == "ok":
            tries.append(sorted(payload["result"]))
            if "rec" in payload["result"]:
                raise MemoryError("memory allocation failed, allocating 1024 bytes")
        return real(n, typ, payload, version)

    frames.encode = encode
    try:
        link.feed(real(7, "state", {}))
    finally:
        frames.encode = real
    (_, typ, payload), = replies(out)
    assert typ == "ok" and payload["id"] == 7 and "rec" not in payload["result"]
    assert len(tries) == 2 and "rec" in tries[0]


def test_other_versions_and_echoes():
    link, h, out = board()
    link.feed(frames.encode(3, "hello", {}, version=1))
    link.feed(frames.encode(4, "ok", {"id": 4, "result": {}}))  # an echo of our own frame
    link.feed(frames.encode(5, "rec", {"seq": 1}))
    (_, typ, payload), = replies(out)
    assert typ == "err" and payload["id"] == 3 and payload["code"] == "version"
    assert payload["protocol"] == 2 and "speaks serial protocol v2, the command was v1" in \
        payload["error"]
    s = link.stats()
    assert (s["version"], s["ignored"], s["frames_in"]) == (1, 2, 0)
    assert h.calls == []


def test_emit_numbers_every_frame_and_checks_types():
    link, h, out = board(test_mode=True)
    assert link.emit("boot", {"firmware": "0.1.0"}) == 0
    link.feed(cmd(1, "hello"))
    assert link.emit("state", {"scores": [3, 0]}) == 2
    assert link.emit("warn", {"text": "pin 3 stuck"}) == 3
    with pytest.raises(ValueError):
        link.emit("ok", {})
    with pytest.raises(frames.FrameTooLong):
        link.emit("event", {"x": "y" * 2000})
    assert link.emit("event", {"kind": "press"}) == 4
    got = replies(out)
    assert got[0] == (0, "boot", {"firmware": "0.1.0", "protocol": 2, "test_mode": True})
    assert [n for n, _, _ in got] == [0, 1, 2, 3, 4]
    assert link.stats()["frames_out"] == 5


# -- the same Link on MicroPython ----------------------------------------------------------

def link_stream():
    parts = [b">>> \r\n", cmd(11, "hello").encode()[:7], cmd(11, "hello").encode()[7:],
             b"garbage \xff\r\n", b"~c2 12 state {} 00000000\n",
             cmd(13, "undo").encode() + cmd(13, "undo").encode() + cmd(14, "undo").encode(),
             cmd(15, "journal", {"after": 1}).encode(), cmd(16, "zap").encode(),
             cmd(17, "inject", {"events": [{"t": 0, "line": "pin.C", "v": 1}]}).encode(),
             cmd(18, "state", {"x": "é"}).encode(), frames.encode(19, "hello", {}, 1).encode(),
             cmd(20, "undo").encode(), cmd(21, "undo").encode(), cmd(22, "undo").encode()]
    return [binascii.hexlify(p).decode() for p in parts]


def run_frames_check(cases, tmp_path, micropython):
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
    if micropython:
        return run_mp(MP_TESTS / "frames_check.py", args=[path]).stdout
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(FIRMWARE), str(MP_TESTS)]))
    return subprocess.run([sys.executable, str(MP_TESTS / "frames_check.py"), str(path)],
                          capture_output=True, text=True, env=env, check=True).stdout


def test_the_board_link_writes_the_same_bytes_on_micropython(tmp_path):
    cases = {"link": link_stream()}
    mp = json.loads(run_frames_check(cases, tmp_path, True))
    cp = json.loads(run_frames_check(cases, tmp_path, False))
    assert mp["link"] == cp["link"]  # frame for frame, byte for byte
    assert mp["stats"] == cp["stats"]
    got = replies(mp["link"])
    assert [(t, p.get("id"), p.get("code")) for _, t, p in got if t in ("ok", "err")] == [
        ("ok", 11, None), ("ok", 13, None), ("ok", 13, None), ("ok", 14, None),
        ("ok", 15, None), ("err", 16, "unknown"), ("err", 17, "test_mode"),
        ("err", 18, "args"), ("err", 19, "version"), ("ok", 20, None), ("err", 21, "refused"),
        ("err", 22, "refused")]
    assert got[0][2]["board"] == "Zoë's table"
    assert mp["stats"]["corrupt"] == 1 and mp["stats"]["noise"] == 2
    assert mp["stats"]["repeats"] == 1
    report_micropython("link frames written byte-identically by the board's Link", len(got))


# -- the host's end, over a real pseudo-terminal ---------------------------------------------

class PtyBoard:
    """A board's Link served by a thread on the master side of a pty; the host opens the slave
    path like a USB port. `to_host`/`to_board` may change the bytes on the wire (damage)."""

    def __init__(self, handler=None, test_mode=False, to_host=None, to_board=None, deaf=False):
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)  # like a USB port: no echo, no line editing
        self.path = os.ttyname(self.slave)
        self.handler = handler or FakeHandler()
        self.to_host = to_host
        self.to_board = to_board
        self.deaf = deaf
        self.lock = threading.Lock()
        self.link = Link(self._write, self.handler, test_mode)
        self.received = []
        self._stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _write(self, text):
        data = text.encode()
        if self.to_host is not None:
            data = self.to_host(data)
        self.raw(data)

    def raw(self, data):
        while data:
            data = data[os.write(self.master, data):]

    def _serve(self):
        while not self._stop:
            r, _, _ = select.select([self.master], [], [], 0.02)
            if not r:
                continue
            try:
                data = os.read(self.master, 4096)
            except OSError:
                return
            self.received.append(data)
            if self.to_board is not None:
                data = self.to_board(data)
            if not self.deaf:
                with self.lock:
                    self.link.feed(data)

    def emit(self, typ, payload):
        with self.lock:
            return self.link.emit(typ, payload)

    def close(self):
        self._stop = True
        self.thread.join(2)
        os.close(self.master)
        os.close(self.slave)


@pytest.fixture
def pty_board():
    made = []

    def make(**kw):
        b = PtyBoard(**kw)
        ser = host.open_port(b.path)
        made.append((b, ser))
        return b, host.BoardLink(ser, b.path)

    yield make
    for b, ser in made:
        ser.close()
        b.close()


def test_request_and_unsolicited_frames_over_a_pty(pty_board):
    b, bl = pty_board(test_mode=True)
    info = bl.hello()
    assert info == {"firmware": "0.1.0", "game": "five-pins", "board": "bench",
                    "last_seq": 5, "protocol": 2, "test_mode": True}
    assert bl.request("new", {"game": "five-pins", "players": ["Zoë", "Bob"]}) == \
        {"game_no": 2, "seq": 6}
    b.emit("state", {"scores": [3, 0]})
    b.emit("warn", {"text": "peg 0.3.2 pulled, score says 1"})
    assert bl.request("service", {"on": True}) == {"service": True}
    got = list(bl.frames(timeout=0.3))
    assert [(f.type, f.payload) for f in got] == [
        ("state", {"scores": [3, 0]}), ("warn", {"text": "peg 0.3.2 pulled, score says 1"})]
    assert bl.poll(0) is None
    s = bl.stats()
    assert (s["corrupt"], s["lost"], s["stale"], s["restarts"]) == (0, 0, 0, 0)
    assert s["frames"] == 5
    assert b.handler.calls[1] == ("new", {"game": "five-pins", "config": {},
                                          "players": ["Zoë", "Bob"]})


def test_board_error_carries_the_board_message(pty_board):
    b, bl = pty_board(test_mode=False)
    with pytest.raises(host.BoardError) as e:
        bl.request("inject", {"events": [{"t": 0, "line": "pin.C", "v": 1}]})
    assert e.value.message.startswith("the board refused inject: inject is refused: input "
                                      "injection is off")
    assert e.value.reason == "test_mode" and "test_mode" in e.value.hint
    with pytest.raises(host.BoardError, match="unknown command zap"):
        bl.request("zap")
    for _ in range(4):
        bl.request("undo")
    with pytest.raises(host.BoardError, match="the board refused undo: nothing to undo"):
        bl.request("undo")


def test_corrupt_frames_on_the_wire_both_ways(pty_board):
    hits = {"reply": 0, "cmd": 0}

    def to_host(data):  # the first ok is damaged on its way to the host
        if b" ok " in data and not hits["reply"]:
            hits["reply"] += 1
            return data[:20] + bytes([data[20] ^ 0x04]) + data[21:]
        return data

    def to_board(data):  # the first undo is damaged on its way to the board
        if b" undo " in data and not hits["cmd"]:
            hits["cmd"] += 1
            i = data.index(b" undo ") + 2
            return data[:i] + b"X" + data[i + 1:]
        return data

    b, bl = pty_board(to_host=to_host, to_board=to_board)
    b.emit("boot", {"firmware": "0.1.0"})
    b.raw(b"~c2 77 rec {\"seq\":1} 00000000\r\nnoise\r\n")
    t0 = time.monotonic()
    assert bl.request("undo", timeout=1.5) == {"seq": 4}  # both damaged: resent, answered
    assert time.monotonic() - t0 >= 0.9
    assert [c[0] for c in b.handler.calls] == ["undo"]  # carried out once
    assert b.link.stats()["corrupt"] == 1 and b.link.stats()["repeats"] == 1
    assert bl.request("state", timeout=1.5)["last_seq"] == 4
    s = bl.stats()
    assert s["corrupt"] == 2 and s["noise"] == 1
    assert s["lost"] == 1  # the damaged ok's frame number never arrived
    assert [f.type for f in bl.frames(0.1)] == ["boot"]  # the garbage was not taken for a rec


def test_missing_reply_times_out_with_a_useful_error(pty_board):
    b, bl = pty_board(deaf=True)
    t0 = time.monotonic()
    with pytest.raises(ChalkError) as e:
        bl.request("hello", timeout=0.6)
    assert 0.55 <= time.monotonic() - t0 < 2
    assert e.value.message == ("no reply from the board on %s: is the Chalk firmware running?"
                               % b.path)
    assert "chalk deploy" in e.value.hint
    sent = b"".join(b.received)
    assert sent.count(b" hello {} ") == 3  # the request and two resends, same id
    b.raw(b"\r\nMicroPython v1.24.1 on 2024-11-29; Generic ESP32 module with ESP32\r\n>>> ")
    b.raw(b"\r\n")
    with pytest.raises(ChalkError) as e:
        bl.request("hello", timeout=0.3)
    assert "the board is at the MicroPython REPL" in e.value.hint


def test_live_actions_are_no_progress_of_a_journal_the_board_did_not_hear(pty_board):
    # A board playing on (an `a` frame, its rec and state, every 50 ms) while the host's journal
    # command is lost on the way: the request is sent again and times out as any other; only
    # the stream's own records (`r` blocks, `rec` frames) push its deadline on.
    from chalk.randomgame import random_match
    from scoreboard import pack
    from scoreboard.rules import new_game

    head, actions = random_match("five-pins", seed=3, max_actions=200,
                                 config={"target": 1000, "sets": 3}, accuracy=0.5,
                                 players=["Ann", "Bob"])
    b, bl = pty_board(deaf=True)
    b.emit("boot", {"device": "sim-x", "game": "five-pins", "config": head["config"],
                    "last_seq": 0})
    game = new_game("five-pins", head["config"])
    stop = threading.Event()

    def play():
        for seq, (_seq, t, action) in enumerate(actions, 1):
            if stop.wait(0.05):
                return
            state = game.apply(action)
            code = pack.pack_action(game, dict(action, seq=seq, t=t))
            b.emit("a", {"seq": seq, "t": t, "code": code, "state": state})

    player = threading.Thread(target=play, daemon=True)
    player.start()
    try:
        t0 = time.monotonic()
        with pytest.raises(host.NoReply):
            bl.request("journal", {"after": 0}, timeout=0.9, retries=2, progress=("rec",))
        assert time.monotonic() - t0 < 3
        heard = [f for f in iter(lambda: bl.poll(0), None) if f.type == "rec"]
        assert heard  # the live records came meanwhile, and are kept
    finally:
        stop.set()
        player.join(2)
    assert b"".join(b.received).count(b" journal {") == 3  # the request and two resends


def test_lost_records_in_a_journal_stream_are_asked_for_again(pty_board):
    drop = {"n": 0}

    def to_host(data):  # the 3rd record vanishes on the wire
        if b'"seq":3,' in data and b" rec " in data and not drop["n"]:
            drop["n"] += 1
            return b""
        return data

    b, bl = pty_board(handler=FakeHandler(n_records=8), to_host=to_host)
    recs = bl.journal_since(0)
    assert [r["seq"] for r in recs] == list(range(1, 9))
    assert recs[0]["header"]["players"] == ["Zoë", "Bob"]
    assert [c[1]["after"] for c in b.handler.calls] == [0, 2]
    assert bl.stats()["lost"] == 1
    assert bl.journal_since(6) == recs[6:]
    assert bl.journal_since(8) == []


def test_board_restart_and_gaps_are_counted_not_taken_for_data():
    ser = serial.serial_for_url("loop://", timeout=0.01)
    bl = host.BoardLink(ser, "loop://")
    for n, typ, p in [(0, "boot", {}), (1, "state", {}), (2, "warn", {}), (6, "rec", {"seq": 3}),
                      (7, "ok", {"id": 123, "result": {}}), (0, "boot", {}), (1, "event", {}),
                      (5, "state", {}), (0, "state", {})]:
        ser.write(frames.encode(n, typ, p).encode())
    got = list(bl.frames(timeout=0.2))
    assert [f.type for f in got] == ["boot", "state", "warn", "rec", "boot", "event", "state",
                                     "state"]
    s = bl.stats()
    assert (s["lost"], s["restarts"], s["stale"], s["frames"]) == (3 + 3, 2, 1, 9)


def test_a_port_that_echoes_our_commands_is_not_a_board():
    ser = serial.serial_for_url("loop://", timeout=0.01)
    bl = host.BoardLink(ser, "loop://")
    with pytest.raises(ChalkError, match="no reply from the board on loop://"):
        bl.request("hello", timeout=0.2)
    assert bl.stats()["echo"] == 3


@pytest.mark.parametrize("version,words,hint", [
    (3, "speaks serial protocol v3; this chalk speaks v2", "upgrade chalk"),
    (1, "speaks serial protocol v1, older than this chalk's v2", "chalk deploy"),
])
def test_a_board_of_another_protocol_version_is_named(pty_board, version, words, hint):
    b, bl = pty_board(deaf=True)
    b.raw(frames.encode(0, "boot", {"protocol": version}, version=version).encode())
    with pytest.raises(ChalkError) as e:
        bl.request("hello", timeout=1)
    assert words in e.value.message and hint in e.value.hint


def test_connect_resolves_opens_and_says_hello(monkeypatch):
    b = PtyBoard()
    try:
        monkeypatch.setenv("CHALK_PORT", b.path)
        with remote.connect() as bl:
            assert bl.info["protocol"] == 2 and bl.port == b.path
    finally:
        b.close()


# -- opening ports --------------------------------------------------------------------------

def fake_ports(monkeypatch, *entries):
    listed = [SimpleNamespace(device=d, description=desc, vid=vid, pid=pid)
              for d, desc, vid, pid in entries]
    monkeypatch.setattr(host.list_ports, "comports", lambda: listed)


def test_no_such_port_lists_the_ports_seen(monkeypatch):
    fake_ports(monkeypatch, ("/dev/ttyS0", "n/a", None, None),
               ("/dev/ttyUSB0", "CP2102 USB to UART Bridge Controller", 0x10C4, 0xEA60))
    with pytest.raises(ChalkError) as e:
        host.open_port("/dev/ttyCHALK-none")
    assert e.value.message == "no such port: /dev/ttyCHALK-none"
    assert e.value.hint == ("ports seen: /dev/ttyUSB0 (CP210x, likely a board, 10c4:ea60); "
                            "/dev/ttyS0")
    fake_ports(monkeypatch)
    with pytest.raises(ChalkError) as e:
        host.open_port("/dev/ttyCHALK-none")
    assert "no serial ports seen" in e.value.hint and "data cable" in e.value.hint


def test_a_directory_or_a_file_is_not_a_serial_port(tmp_path):
    with pytest.raises(ChalkError) as e:
        host.open_port(str(tmp_path))
    assert e.value.message == "%s is not a serial port (a directory)" % tmp_path
    f = tmp_path / "notes.txt"
    f.write_text("hi")
    with pytest.raises(ChalkError) as e:
        host.open_port(str(f))
    assert e.value.message == "%s is not a serial port (not a terminal device)" % f


def test_a_port_held_by_another_program_is_busy():
    b = PtyBoard()
    try:
        first = host.open_port(b.path)
        with pytest.raises(ChalkError) as e:
            host.open_port(b.path)
        assert e.value.message == "port %s is busy: another program has it open" % b.path
        assert "mpremote" in e.value.hint and "serial monitor" in e.value.hint
        first.close()
        host.open_port(b.path).close()  # free again
    finally:
        b.close()


def raising(exc):
    def fake(*args, **kwargs):
        raise exc
    return fake


@pytest.mark.parametrize("exc", [
    serial.SerialException(errno.EBUSY, "could not open port /dev/ttyUSB0: [Errno 16] Device "
                                        "or resource busy: '/dev/ttyUSB0'"),
    serial.SerialException(errno.EAGAIN, "Could not exclusively lock port /dev/ttyUSB0: "
                                         "[Errno 11] Resource temporarily unavailable"),
])
def test_busy_as_pyserial_reports_it(monkeypatch, exc):
    monkeypatch.setattr(serial, "serial_for_url", raising(exc))
    with pytest.raises(ChalkError, match="is busy: another program has it open"):
        host.open_port("/dev/ttyUSB0")


def test_permission_denied_names_the_group_to_join(monkeypatch, tmp_path):
    # Tests run as root, so the EACCES is the one pyserial raises, and the device a stand-in.
    dev = tmp_path / "ttyUSB0"
    dev.write_text("")
    os.chown(dev, -1, grp.getgrnam("dialout").gr_gid)
    exc = serial.SerialException(errno.EACCES, "could not open port %s: [Errno 13] Permission "
                                               "denied: '%s'" % (dev, dev))
    monkeypatch.setattr(serial, "serial_for_url", raising(exc))
    with pytest.raises(ChalkError) as e:
        host.open_port(str(dev))
    assert e.value.message == "permission denied on %s (it belongs to group dialout)" % dev
    assert "sudo usermod -aG dialout $USER" in e.value.hint and "log out" in e.value.hint
    os.chown(dev, -1, grp.getgrnam("uucp").gr_gid)  # Arch
    with pytest.raises(ChalkError) as e:
        host.open_port(str(dev))
    assert "group uucp" in e.value.message and "usermod -aG uucp" in e.value.hint
    os.chown(dev, -1, 0)  # a group nobody should join: name the usual ones
    with pytest.raises(ChalkError) as e:
        host.open_port(str(dev))
    assert e.value.message == "permission denied on %s" % dev
    assert "dialout on Debian/Ubuntu, uucp on Arch" in e.value.hint


def test_urls_open_and_bad_urls_are_explained():
    ser = host.open_port("loop://")
    assert ser.baudrate == 115200
    ser.close()
    with pytest.raises(ChalkError, match="cannot open nope://x: invalid URL"):
        host.open_port("nope://x")


def test_ports_flag_likely_boards(monkeypatch):
    fake_ports(monkeypatch, ("/dev/ttyS0", "n/a", None, None),
               ("/dev/ttyACM0", "USB JTAG/serial debug unit", 0x303A, 0x1001),
               ("/dev/ttyUSB1", "USB Serial", 0x1A86, 0x7523),
               ("/dev/ttyUSB0", "USB Single Serial", 0x1A86, 0x55D4),
               ("/dev/ttyUSB2", "FT232R", 0x0403, 0x6001))
    got = host.ports()
    assert [(p.device, p.bridge, p.board) for p in got] == [
        ("/dev/ttyACM0", "Espressif USB", True), ("/dev/ttyUSB0", "CH9102", True),
        ("/dev/ttyUSB1", "CH340", True), ("/dev/ttyS0", None, False),
        ("/dev/ttyUSB2", None, False)]
    assert host.describe(got[-1]) == "/dev/ttyUSB2 (FT232R, 0403:6001)"


def test_resolve_port(monkeypatch):
    one = [host.Port("/dev/ttyUSB0", "", 0x10C4, 0xEA60, "CP210x", True),
           host.Port("/dev/ttyS0", "", None, None, None, False)]
    assert host.resolve_port("/dev/ttyX", env={"CHALK_PORT": "/dev/ttyY"}) == "/dev/ttyX"
    assert host.resolve_port(None, env={"CHALK_PORT": "/dev/ttyY"}) == "/dev/ttyY"
    assert host.resolve_port(None, env={}, listing=one) == "/dev/ttyUSB0"
    assert host.resolve_port("auto", env={"CHALK_PORT": "/dev/ttyY"}, listing=one) == \
        "/dev/ttyUSB0"
    with pytest.raises(ChalkError) as e:
        host.resolve_port(None, env={}, listing=one[1:])
    assert e.value.message.startswith("no Chalk board found")
    assert "ports seen: /dev/ttyS0" in e.value.hint and "CHALK_PORT" in e.value.hint
    two = one + [host.Port("/dev/ttyACM0", "", 0x303A, 2, "Espressif USB", True)]
    with pytest.raises(ChalkError) as e:
        host.resolve_port(None, env={}, listing=two)
    assert e.value.message == ("2 boards attached: /dev/ttyUSB0 (CP210x, likely a board, "
                               "10c4:ea60), /dev/ttyACM0 (Espressif USB, likely a board, "
                               "303a:0002)")
    assert "--port" in e.value.hint


def test_every_command_is_documented():
    doc = (FIRMWARE.parent / "docs" / "serial-protocol.md").read_text()
    for name in COMMANDS:
        assert "### `%s`" % name in doc, name


def test_an_app_frame_the_heap_has_no_room_for_is_dropped_with_its_number_spent(monkeypatch):
    link, h, out = board(test_mode=True)
    assert link.emit("boot", {"firmware": "0.1.0"}) == 0
    real = frames.encode

    def encode(n, typ, payload, *args, **kw):
        if typ == "warn":
            raise MemoryError("memory allocation failed, allocating 1280 bytes")
        return real(n, typ, payload, *args, **kw)

    monkeypatch.setattr(frames, "encode", encode)
    assert link.emit("warn", {"text": "pin 3 stuck"}) is None  # no exception: play goes on
    assert link.emit("state", {"scores": [3, 0]}) == 2
    link.feed(cmd(1, "hello"))  # replies too go on numbering after the gap
    assert [n for n, _, _ in replies(out)] == [0, 2, 3]
    assert link.stats()["dropped"] == 1
    # During a journal stream the frames are numbered one after the other up to its ok: one
    # the heap had no room for is dropped without spending a number there.
    link.feed(cmd(2, "journal", {"after": 0}))
    link._stream = link._stream or ["held"]  # (streaming, as between two passes)
    n = link._n
    assert link.emit("warn", {"text": "x"}) is None and link._n == n
    assert link.stats()["dropped"] == 2


class SteppedHandler(FakeHandler):
    """A command done in steps (a generator), as the board's undo and act are (serve.py)."""

    def __init__(self):
        super().__init__()
        self.steps = []

    def cmd_undo(self, args):
        self.steps.append("check")
        yield
        self.steps.append("write")
        if self.fail:
            raise self.fail
        yield
        self.steps.append("reply")
        return {"seq": 9}

    fail = None


def _stepped_lines(out):
    return [frames.decode(line.encode()) for line in "".join(out).splitlines(True)]


def test_a_command_done_in_steps_takes_a_link_step_for_each_and_answers_once():
    out = []
    h = SteppedHandler()
    link = Link(out.append, h, budget=57)
    link.feed(cmd(4, "undo").encode())
    seen = []
    resent = False
    while link.busy():
        link.step()
        seen.append(len(h.steps))
        if h.steps == ["check"] and not resent:
            resent = True
            link.feed(cmd(4, "undo").encode())  # the host sends it again meanwhile
        link._pump(None)  # (what is made goes out; the link's own steps only above)
    # Run once, a step of the link's for each of its steps; each line answered, the resent
    # one with the same reply (as for a command done at once).
    assert h.steps == ["check", "write", "reply"]
    assert seen.count(1) >= 1 and seen.count(2) >= 1
    got = [f for f in _stepped_lines(out) if f[1] in ("ok", "err")]
    assert [(f[1], f[2]["id"], f[2].get("result")) for f in got] == [("ok", 4, {"seq": 9})] * 2
    assert link.stats()["repeats"] == 1


@pytest.mark.parametrize("budget", [None, 57])
def test_a_command_done_in_steps_that_fails_midway_is_answered_and_the_link_goes_on(budget):
    from scoreboard.link import Refused

    out = []
    h = SteppedHandler()
    h.fail = Refused("the table took an action meanwhile")
    link = Link(out.append, h, budget=budget)
    link.feed(cmd(5, "undo").encode())
    link.feed(cmd(6, "hello").encode())
    while link.busy():
        link.pump()
    assert h.steps == ["check", "write"]
    got = [f for f in _stepped_lines(out) if f[1] in ("ok", "err")]
    assert [(f[1], f[2]["id"]) for f in got] == [("err", 5), ("ok", 6)]
    assert got[0][2]["code"] == "refused" and "meanwhile" in got[0][2]["error"]
