"""A board whose heap is in pieces never leaves a host's request unanswered, and the host never
asks it the same thing for ever (docs/serial-protocol.md, "Short of memory"; docs/archive.md).

Board: a step of the link's work that finds no whole block of heap (MemoryError, faked here as
tests/test_coded_frames.py does) is tried again a few times, then its command is answered `err`
code `refused` with the heap's figures (`heap`), a journal stream ended so after the records it
sent; the link answers the next command as usual. Host: a follower whose board refuses journal
rounds for want of memory asks for less (smaller blocks, fewer records, plain frames) and
archives everything; against a board that never has room (or never answers while its frames
come), it stops after a bounded number of rounds with one clear line, keeping every record it
got; its link asks a board that gave coding up for a code again only after a while, and a state
the board has no room for is asked a few times, not for ever. Waits for events, never for
time."""

import json
import sys

import pytest

from chalk import fec as host_fec
from chalk.errors import ChalkError
from scoreboard import frames, gauge
from scoreboard.link import Link
from tests.mpy import micropython_path, run_mp
from tests.test_link import FakeHandler

# Steps a command may take, on a heap that never has room for it, before its answer is out:
# a few tries of the failing step, and the answer's own frame (budget 57: a few passes).
STEPS = 20


class NoRoom:
    """Stands in for the link's work module on a heap with no room to load it."""

    def __getattr__(self, name):
        raise MemoryError("memory allocation failed, allocating 3072 bytes")


def no_room(*args, **kw):
    raise MemoryError("memory allocation failed, allocating 1536 bytes")


def frames_of(out):
    """Every frame the board wrote, in order, coded ones read from inside their `z` frame (a
    frame cut short is left out, as the host drops it)."""
    got = []
    for line in "".join(out).encode().split(b"\n")[:-1]:
        u = host_fec.unwrap(line)
        try:
            f = frames.decode(u[0] if u else line)
        except frames.Corrupt:
            continue
        if f is not None:
            got.append(f)
    return got


def answer(out, cid):
    for _n, typ, payload in frames_of(out):
        if typ in ("ok", "err") and payload.get("id") == cid:
            return typ, payload
    return None


def run_until_answered(link, out, cid, commands=1):
    """Passes of the main loop until the command is answered (`commands` of them waiting, it
    the last); how many it took."""
    passes = 0
    while answer(out, cid) is None:
        link.pump()
        passes += 1
        assert passes <= STEPS * commands, "no answer to command %d after %d passes: %s" % (
            cid, passes, link.stats())
    return passes


def fail(mode, monkeypatch):
    """The heap has no room, for good, for one part of the link's work."""
    import scoreboard.linkwork as linkwork

    if mode == "load":  # the link's work module itself
        monkeypatch.setitem(sys.modules, "scoreboard.linkwork", NoRoom())
    elif mode == "step":  # every step of the link's work
        monkeypatch.setattr(linkwork, "step", no_room)
    elif mode == "read":  # reading the command's line (its JSON)
        real = frames.decode

        def decode(line, whole=True):
            if whole and b" state " in bytes(line):
                no_room()
            return real(line, whole)

        monkeypatch.setattr(frames, "decode", decode)
    elif mode == "reply":  # making its reply's frame
        real = frames.encode

        def encode(n, typ, payload, *args, **kw):
            if typ == "ok":
                no_room()
            return real(n, typ, payload, *args, **kw)

        monkeypatch.setattr(frames, "encode", encode)


@pytest.fixture
def figures(monkeypatch):
    """The gauge as on a board (CPython's gc tells no heap figures): 22 KB free, 3 KB block."""
    monkeypatch.setattr(gauge, "measure", lambda: (22 * 1024 + 500, 3 * 1024 + 100))


@pytest.mark.parametrize("mode,cmd", [("load", "hello"), ("step", "hello"),
                                      ("read", "state"), ("reply", "state")])
def test_a_command_the_heap_never_has_room_for_is_answered_and_the_link_goes_on(
        mode, cmd, monkeypatch, figures):
    out = []
    link = Link(out.append, FakeHandler(), budget=57)
    with monkeypatch.context() as m:
        fail(mode, m)
        link.feed(frames.encode(7, cmd, {}))
        run_until_answered(link, out, 7)
        typ, payload = answer(out, 7)
        assert typ == "err" and payload["code"] == "refused", payload
        assert payload["error"].startswith("the board is short of memory for that now: ask for "
                                           "less"), payload
        if mode == "load":
            # Without the link's work the answer is made at once, the heap not measured.
            assert payload["heap"] == {"free": None, "block": None}
        else:
            assert payload["heap"] == {"free": 23028, "block": 3172}
            assert "22 KB free, largest block 3 KB" in payload["error"]
        assert link.stats()["dropped"] >= (3 if mode in ("load", "step", "read") else 0)
        # Answered once: the failing work was given up, not tried for ever.
        for _ in range(10):
            link.pump()
        assert [f[2]["id"] for f in frames_of(out) if f[1] in ("ok", "err")] == [7]
        assert not link.busy()
    # The heap has room again: the link answers as before, the command asked again (as a host
    # does, for less) and the next one.
    link.feed(frames.encode(7, cmd, {}))
    link.feed(frames.encode(8, "hello", {}))
    run_until_answered(link, out, 8, commands=2)
    got = [(f[1], f[2]["id"]) for f in frames_of(out) if f[1] in ("ok", "err")]
    assert got == [("err", 7), ("ok", 7), ("ok", 8)]
    assert answer(out, 8)[1]["result"]["last_seq"] == 5


class Journal(FakeHandler):
    """A journal of 40 records whose reading finds no block from seq `stop` on (a record read
    from flash, a block packed: the stream's own work)."""

    def __init__(self, stop=None):
        super().__init__(n_records=40)
        self.stop = stop

    def cmd_journal(self, args):
        for r in self.records:
            if r["seq"] > args["after"]:
                if self.stop is not None and r["seq"] >= self.stop:
                    no_room()
                yield r


@pytest.mark.parametrize("where", ["records", "frames"])
@pytest.mark.parametrize("budget", [None, 57])
def test_a_journal_stream_the_heap_gives_out_on_ends_with_an_answer_after_its_records(
        where, budget, monkeypatch, figures):
    # A stream that fails mid-way ends with a reply the host can act on: the records before
    # it came whole, in order (the host keeps them: records are exactly-once by seq), and the
    # err says the board is short of memory, with the heap's figures. Never a stream that goes
    # on without the records it could not send (the host would take them for gone), nor one
    # that stops in silence.
    out = []
    link = Link(out.append, Journal(stop=12 if where == "records" else None), budget=budget)
    if where == "frames":
        real = frames.encode

        def encode(n, typ, payload, *args, **kw):
            if typ == "rec" and type(payload) is dict and payload.get("seq", 0) >= 12:
                no_room()
            return real(n, typ, payload, *args, **kw)

        monkeypatch.setattr(frames, "encode", encode)
    link.feed(frames.encode(7, "journal", {"after": 0}))
    while budget is not None and not link.streaming():
        link.pump()
    link.emit("warn", {"warning": "meanwhile"})  # held until the stream's answer
    passes = 0
    while link.busy():
        link.pump()
        passes += 1
        assert passes < 2000
    got = frames_of(out)
    seqs = [f[2]["seq"] for f in got if f[1] == "rec"]
    assert seqs == list(range(1, 12))
    typ, payload = answer(out, 7)
    assert typ == "err" and payload["code"] == "refused" and "heap" in payload
    assert "short of memory" in payload["error"]
    kinds = [f[1] for f in got]
    assert kinds.index("err") > max(i for i, k in enumerate(kinds) if k == "rec")
    assert kinds[-1] == "warn"  # what the app sent meanwhile follows the answer
    # The board is well again: the host asks after the last record it got, and gets the rest.
    monkeypatch.undo()
    link.handler.stop = None
    link.feed(frames.encode(8, "journal", {"after": 11}))
    while link.busy():
        link.pump()
    assert answer(out, 8)[0] == "ok"
    assert [f[2]["seq"] for f in frames_of(out) if f[1] == "rec"] == list(range(1, 41))


def test_a_command_coming_during_a_stream_is_answered_after_it(monkeypatch, figures):
    # A command whose reading finds no block while a journal stream runs is answered short,
    # but after the stream's ok: the stream's frames go one after the other up to it.
    out = []
    link = Link(out.append, Journal(), budget=57)
    link.feed(frames.encode(7, "journal", {"after": 0}))
    for _ in range(6):
        link.pump()
    assert link.streaming()
    fail("read", monkeypatch)
    link.feed(frames.encode(8, "state", {}))
    passes = 0
    while link.busy():
        link.pump()
        passes += 1
        assert passes < 2000
    got = [(f[1], f[2].get("id")) for f in frames_of(out) if f[1] in ("ok", "err")]
    assert got == [("ok", 7), ("err", 8)]


@pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")
def test_on_micropython_the_answer_carries_the_boards_own_heap_figures():
    # The same paths on the unix port (an ESP32's heap), with its own gauge: a handler that
    # finds no block (the figures measured), every step of the link's work failing, and the
    # work module that cannot load (answered without them); then the link answers as before.
    code = r"""
import json, sys
from scoreboard import frames
from scoreboard.link import Link
import scoreboard.linkwork as linkwork

class H:
    def cmd_hello(self, args):
        return {"firmware": "0.1.0", "last_seq": 0}
    def cmd_state(self, args):
        raise MemoryError("memory allocation failed, allocating 9000 bytes")

def boom(*a):
    raise MemoryError("memory allocation failed, allocating 1536 bytes")

class NoRoom:
    def __getattr__(self, name):
        raise MemoryError("memory allocation failed, allocating 3072 bytes")

out = []
link = Link(out.append, H(), budget=57)

def run(cid, cmd):
    link.feed(frames.encode(cid, cmd, {}))
    for k in range(200):  # (a link that never answers: no line, not a hang)
        link.pump()
    for line in "".join(out).split("\n"):
        f = frames.decode(line) if line else None
        if f is not None and f[2].get("id") == cid:
            print(json.dumps([f[1], f[2]]))

run(1, "state")
real = linkwork.step
linkwork.step = boom
run(2, "hello")
linkwork.step = real
sys.modules["scoreboard.linkwork"] = NoRoom()
run(3, "hello")
sys.modules["scoreboard.linkwork"] = linkwork
run(4, "hello")
"""
    got = [json.loads(line) for line in run_mp(code=code).stdout.splitlines()]
    assert [p.get("id") for _, p in got] == [1, 2, 3, 4], got
    for typ, p in got[:2]:
        assert typ == "err" and p["code"] == "refused" and "short of memory" in p["error"], p
        assert p["heap"]["free"] > 1024 and 0 < p["heap"]["block"] <= gauge.BLOCK_MAX, p
        assert "KB free, largest block" in p["error"]
    assert "allocating 9000 bytes" in got[0][1]["error"]
    assert got[2][0] == "err" and got[2][1]["heap"] == {"free": None, "block": None}
    assert got[3][0] == "ok"


# -- the host ------------------------------------------------------------------------------

HELLO = {"device": "sim-1", "board": "five-pins", "game": "five-pins", "protocol": 2}
HEAP = {"free": 21 * 1024 + 300, "block": 3 * 1024 + 200}


def journal(n=120):
    from chalk.randomgame import random_match
    from chalk.store import board_records

    head, actions = random_match("five-pins", seed=4, config={"target": 5000},
                                 max_actions=n)
    recs, _states = board_records(dict(head, game_no=1), actions)
    assert len(recs) > 100
    return recs


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


class ShortBoard:
    """A board's journal behind a link (as tests/test_noisy_line.py's FakeLink), on a heap in
    pieces: a journal round is refused for want of memory (with the heap's figures, as the
    board's link answers) unless its block is at most `room` bytes and, with `plain`, its
    frames go plain; `room` None: never. `first`: records the first round sends before the
    heap gives out. `coded`: the board codes its frames at first (a noisy line), and takes
    the `parity` the host's link sends beside a request (BoardLink._tune)."""

    def __init__(self, recs, room, plain=False, first=0, coded=False):
        self.recs = recs
        self.room = room
        self.plain = plain
        self.first = first
        self.port = "/dev/ttyUSB7"
        self.asked = []
        self.queue = []
        self.clock = Clock()
        self.coding = host_fec.Coding(self.clock)
        if coded:
            for _ in range(3):
                self.coding.note(500, 10)  # a line damaging 2 % of its bytes
            self.coding.set_board(self.coding.want())
            assert self.coding.board is not None and self.coding.due() == (False, None)

    def request(self, cmd, args=None, timeout=1.0, retries=2, progress=(), until=None):
        from chalk.link import BoardError, Frame

        assert cmd == "journal", cmd
        assert len(self.asked) < 100, "the host asks the board the same thing for ever"
        due, code = self.coding.due()
        if due:  # the parity command beside this request: the board takes it
            self.coding.set_board(code)
        self.clock.t += 1
        self.asked.append(dict(args, coded=self.coding.board is not None))
        after, want = args["after"], int(args.get("want", "0"), 16)
        sent = [r for r in self.recs if r["seq"] > after]
        if want:
            sent = [r for r in sent if want >> (r["seq"] - after - 1) & 1]
        fits = self.room is not None and args.get("block", 360) <= self.room and not (
            self.plain and self.coding.board is not None)
        if not fits:
            got, self.first = sent[:self.first], 0  # what came before the heap gave out
            self.queue.extend(Frame(0, "rec", r) for r in got)
            words = ("the board is short of memory for that now: ask for less (memory "
                     "allocation failed, allocating 1536 bytes; 21 KB free, largest block 3 "
                     "KB)")
            raise BoardError("the board refused journal: " + words, None, "refused",
                             {"id": 1, "code": "refused", "error": words, "heap": HEAP})
        self.queue.extend(Frame(0, "rec", r) for r in sent)
        return {"last": sent[-1]["seq"] if sent else after, "count": len(sent),
                "records": len(sent)}

    def poll(self, timeout=0):
        return self.queue.pop(0) if self.queue else None

    def stats(self):
        return {"frames": len(self.asked) + len(self.queue)}


def catch_up(tmp_path, link):
    """A follower's catch-up against `link`: (what it said, the archive's last seq, its
    actions' seqs, the error it stopped with or None)."""
    from chalk.follow import Follower
    from chalk.store import Archive

    said = []
    with Archive(tmp_path / "a.db", create=True) as a:
        f = Follower(a, say=said.append)
        f._sleep = lambda seconds: None  # (its own pauses between rounds: no time here)
        f.board_id = a.board(HELLO)
        f.device = HELLO["device"]
        stopped = None
        try:
            f._catch_up(link, [])
        except ChalkError as e:
            stopped = e
        return said, a.last_seq(f.board_id), [s for s, _t, _l in a.actions(1)], stopped


def test_a_board_short_of_memory_for_big_blocks_is_asked_for_smaller_ones(tmp_path):
    recs = journal()
    link = ShortBoard(recs, room=60)
    said, last, seqs, stopped = catch_up(tmp_path, link)
    assert stopped is None, stopped
    assert last == len(recs) and seqs == list(range(2, len(recs) + 1))  # everything, once
    blocks = [a.get("block", 360) for a in link.asked]
    # Refused at 360, 180 and 90 bytes; each refusal made the next round ask for less, and
    # no round asked for more than the board had room for again.
    assert blocks[:4] == [360, 180, 90, 45], blocks
    assert max(blocks[3:]) <= 45
    assert not any("short of memory" in s for s in said), said


def test_a_board_short_of_memory_for_coded_frames_is_asked_for_plain_ones(tmp_path):
    recs = journal()
    link = ShortBoard(recs, room=360, plain=True, coded=True)
    said, last, seqs, stopped = catch_up(tmp_path, link)
    assert stopped is None, stopped
    assert last == len(recs) and seqs == list(range(2, len(recs) + 1))
    coded = [a["coded"] for a in link.asked]
    # Refused while coded; plain frames asked for (parity nsym 0, beside the next request)
    # once refused twice; then everything came.
    assert coded[:2] == [True, True] and not any(coded[3:]), coded
    assert link.coding.board is None
    assert link.coding.due() == (False, None)  # not asked to code again at once


def test_a_board_that_never_has_room_ends_the_attempt_with_one_clear_line(tmp_path):
    recs = journal()
    link = ShortBoard(recs, room=None, first=30, coded=True)
    said, last, seqs, stopped = catch_up(tmp_path, link)
    # The records that came before the heap gave out are archived and kept.
    assert last == 30 and seqs == list(range(2, 31))
    assert isinstance(stopped, ChalkError), stopped
    assert stopped.message == (
        "the board sim-1 on /dev/ttyUSB7 is short of memory for its journal (largest block "
        "3 KB, 21 KB free): no record came though asked for less 6 times; restart the board "
        "(power cycle it) to archive the rest")
    assert "up to seq 30 is archived and kept" in stopped.hint
    # A bounded number of rounds, each asking for less than the one before.
    assert len(link.asked) == 8, link.asked
    blocks = [a.get("block", 360) for a in link.asked[1:]]
    assert blocks == sorted(blocks, reverse=True) and blocks[-1] == 24, blocks
    spans = [bin(int(a.get("want", "0"), 16)).count("1") for a in link.asked[2:]]
    assert spans == [128, 64, 32, 16, 8, 8], link.asked
    assert not any(a["coded"] for a in link.asked[4:])  # plain frames, to spare its heap


def test_a_board_whose_frames_come_but_never_its_journal_is_not_asked_for_ever(tmp_path):
    # The board's beats come, never a reply to `journal` (its link silently dropped a step the
    # heap had no block for, as firmware before `err` for it did): rounds of frames and no
    # record, asked for less every few, then the one line.
    from chalk.link import NoReply

    class Deaf(ShortBoard):
        def request(self, cmd, args=None, **kw):
            assert len(self.asked) < 100, "the host asks the board the same thing for ever"
            self.asked.append(dict(args))
            self.beats = getattr(self, "beats", 0) + 1
            raise NoReply("no reply from the board on %s" % self.port)

        def stats(self):
            return {"frames": getattr(self, "beats", 0)}

    link = Deaf(journal(), room=None)
    said, last, seqs, stopped = catch_up(tmp_path, link)
    assert last == 0 and isinstance(stopped, ChalkError)
    assert stopped.message.startswith("the board sim-1 on /dev/ttyUSB7 sends frames but no "
                                      "longer answers its journal")
    assert "restart the board (power cycle it)" in stopped.message
    assert len(link.asked) == 5 * 7  # _STALE_ROUNDS rounds for each time it asked for less
    blocks = [a["block"] for a in link.asked]
    assert blocks[0] == 360 and blocks[-1] == 24


class SessionLink(ShortBoard):
    """ShortBoard as a whole connection (hello, clock, state, ack, sign) for Follower.run()."""

    sessions = 0

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.info = None

    def hello(self, timeout=5.0, retries=2):
        SessionLink.sessions += 1
        return dict(HELLO, last_seq=self.recs[-1]["seq"])

    def request(self, cmd, args=None, **kw):
        from chalk.link import BoardError

        if cmd == "journal":
            return ShortBoard.request(self, cmd, args, **kw)
        raise BoardError("the board refused %s: not here" % cmd, None, "unsupported", {})

    def stats(self):
        return {"frames": len(self.asked) + len(self.queue), "lost": 0, "restarts": 0,
                "corrupt": 0, "repaired": 0}

    def close(self):
        pass


@pytest.mark.parametrize("once", [True, False])
def test_archive_says_it_once_keeps_what_came_and_does_not_spin(tmp_path, monkeypatch, once):
    # chalk archive --once stops with the line (the CLI prints it as `chalk: ...`, its hint
    # after it); chalk archive (and serve) say it once, and try again after the longest pause
    # without saying it again at every attempt, until stopped; the records that came are kept.
    import threading

    from chalk import follow
    from chalk.store import Archive

    recs = journal()
    SessionLink.sessions = 0
    board = {"first": 30}
    stop = threading.Event()

    def connect(ser, port):
        link = SessionLink(recs, room=None, first=board["first"])
        board["first"] = 0
        if SessionLink.sessions >= 3:
            stop.set()  # three attempts seen: enough
        return link

    monkeypatch.setattr(follow, "open_port", lambda port, baud: None)
    monkeypatch.setattr(follow, "BoardLink", connect)
    said = []
    with Archive(tmp_path / "a.db", create=True) as a:
        f = follow.Follower(a, port="/dev/ttyUSB7", once=once, say=said.append, stop=stop,
                            backoff=(0, 0))
        f._sleep = lambda seconds: None
        if once:
            with pytest.raises(follow.ShortOfMemory) as e:
                f.run()
            assert "restart the board (power cycle it)" in e.value.message
        else:
            f.run()
        assert a.last_seq(f.board_id) == 30  # kept
    short = [s for s in said if "short of memory" in s]
    if once:
        assert short == []  # (the CLI prints the error itself)
    else:
        assert SessionLink.sessions >= 3
        assert len(short) == 1 and short[0].endswith("to archive the rest; retrying"), said
        assert not any("connected to" in s for s in said), said


def test_the_hosts_link_takes_a_board_that_gave_coding_up_as_plain_and_waits_to_ask_again():
    # A board short of memory for its code's table, or for a coded frame's parity, gives
    # coding up (its frames plain: scoreboard/linkwork.py shed) or refuses `parity`. The host
    # takes its frames as plain from then on (so it asks for blocks as on a plain line) and
    # asks for a code again only after a while (fec.HOLD_S), never at every request.
    from types import SimpleNamespace

    from chalk.link import BoardLink

    clock = Clock()
    link = BoardLink(SimpleNamespace(timeout=0.05, port="/dev/ttyUSB7"), "/dev/ttyUSB7")
    c = link.coding = host_fec.Coding(clock)
    for _ in range(3):
        c.note(500, 10)  # a noisy line
    code = c.want()
    link._take(host_fec.wrap(frames.encode(5, "beat", {"mode": "scoring"}), code))
    assert c.board == code and c.due() == (False, None)
    link._take(frames.encode(6, "beat", {"mode": "scoring"}).encode().rstrip(b"\n"))
    assert c.board is None and c.due() == (False, None)  # plain now, not asked again at once
    clock.t += host_fec.HOLD_S + 1
    c.note(500, 10)  # (the line as noisy as it was)
    assert c.due() == (True, code)  # a while later: asked again
    c.sent(77, code)
    assert c.answered(77, "err", {"id": 77, "code": "refused", "error": "short of memory"})
    assert c.due() == (False, None) and c.ok  # refused for want of memory: later again
    clock.t += host_fec.HOLD_S + 1
    c.note(500, 10)
    assert c.due() == (True, code)
    # A board that restarted (plain from its boot frame on) is plain, and asked for a code
    # at once: it did not give one up for want of memory.
    c.set_board(code)
    link._take(frames.encode(0, "boot", {"last_seq": 3}).encode().rstrip(b"\n"))
    link._take(frames.encode(1, "beat", {"mode": "scoring"}).encode().rstrip(b"\n"))
    assert c.board is None and c.due() == (True, code)


def test_a_state_the_board_has_no_room_for_is_not_asked_at_every_quiet_moment(tmp_path,
                                                                               monkeypatch):
    # Following live, the state of the last record held is asked for at quiet moments when its
    # frame was lost: a board short of memory for that reply is asked a few times, its refusal
    # said once, not at every quiet moment for ever.
    import threading

    from chalk import follow
    from chalk.link import BoardError
    from chalk.store import Archive

    recs = journal()
    stop = threading.Event()
    asked = []

    class NoState(SessionLink):
        def hello(self, timeout=5.0, retries=2):
            if SessionLink.sessions >= 12:
                stop.set()  # a dozen quiet moments seen: enough
            return SessionLink.hello(self, timeout, retries)

        def request(self, cmd, args=None, **kw):
            asked.append(cmd)
            if cmd == "state":
                raise BoardError("the board refused state: the board is short of memory for "
                                 "that now: ask for less", None, "refused",
                                 {"id": 1, "code": "refused", "heap": HEAP})
            return SessionLink.request(self, cmd, args, **kw)

    SessionLink.sessions = 0
    monkeypatch.setattr(follow, "open_port", lambda port, baud: None)
    monkeypatch.setattr(follow, "BoardLink", lambda ser, port: NoState(recs, room=360))
    said = []
    with Archive(tmp_path / "a.db", create=True) as a:
        f = follow.Follower(a, port="/dev/ttyUSB7", say=said.append, stop=stop, idle=0.0)
        f.tick = 0.0
        f.run()
        assert a.last_seq(f.board_id) == len(recs)
    assert SessionLink.sessions >= 12
    assert asked.count("state") == 1 + 3  # after the catch-up, then a few quiet moments
    assert sum("did not give its state" in s for s in said) == 1, said
