"""Coded frames on a noisy line (docs/serial-protocol.md, "Coded frames"): the board's own
Reed-Solomon encoder (scoreboard/fec.py) against the field's decoder (reedsolo), on CPython and
on MicroPython; the board's link coding every frame once asked, a few bytes a step; the host
correcting damaged lines (replaced bytes, flipped bits, a line cut in two by a stray line end,
two lines run together), never taking a miscorrection or line noise for a frame, asking for
parity only when it sees damage, and archiving a whole journal over a line that damages 3 % of
its bytes both ways."""

import json
import random
import tempfile
import time
from pathlib import Path

import pytest
import reedsolo

from chalk import fec as host_fec
from chalk.link import BoardLink, open_port
from scoreboard import fec, frames
from scoreboard.link import Link
from tests.mpy import micropython_path, run_mp
from tests.test_link import FakeHandler, PtyBoard

needs_mp = pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")

CODES = [(2, 16), (8, 200), (12, 160), (16, 96), (24, 96), (32, 96), (32, 223)]


def sample_frames():
    long_r = frames.encode(812, "r", "five-pins 18 " + "oP4KAZjsA4gBnMEDAA" * 26 + "AA==")
    hello = frames.encode(3, "ok", {"id": 12345678, "result": {
        "firmware": "0.1.0", "game": "five-pins", "board": "Zoë's table", "last_seq": 1234,
        "config": {"target": 60, "sets": 3, "pin_foul_penalty": 0}, "device": "sim-0123456789ab",
        "test_mode": False, "game_no": 7, "kid": "0123456789abcdef", "protocol": 2}})
    short = frames.encode(840, "a", "412 6034517 83137 01002/,1,,1,~")
    return [long_r, hello, short]


def damage(data, rate, model, rng):
    b = bytearray(data)
    for i in range(len(b)):
        if rng.random() < rate:
            b[i] = rng.randrange(256) if model == "bytes" else b[i] ^ (1 << rng.randrange(8))
    return bytes(b)


# -- the code ------------------------------------------------------------------------------

@pytest.mark.parametrize("nsym,span", CODES)
def test_the_boards_parity_is_the_field_decoders_reed_solomon(nsym, span):
    rng = random.Random(nsym * 1000 + span)
    code = fec.Code(nsym, span)
    while not code.build():
        pass
    rs = reedsolo.RSCodec(nsym)
    for n in (1, 7, span - 1, span, span + 1, 3 * span + 5, 1000):
        data = bytes(rng.randrange(256) for _ in range(n))
        coder = fec.Coder(code, 0, "x")
        coder.data = data  # the parity of any bytes, not only a frame's
        coder.m = (n + span - 1) // span
        coder._r = [[0] * code.chunks for _ in range(coder.m)]
        coder.step(n)
        par = bytes.fromhex(coder.hex())
        m = coder.m
        for j in range(m):
            cw = data[j::m]
            assert par[j * nsym:(j + 1) * nsym] == bytes(rs.encode(cw))[len(cw):], (n, j)
    assert fec.generator(nsym)[0] == 1 and len(fec.generator(nsym)) == nsym + 1


@pytest.mark.parametrize("nsym,span", CODES)
def test_a_coded_frame_is_the_frame_inside_a_z_frame_and_reads_back(nsym, span):
    code = fec.Code(nsym, span)
    for line in sample_frames():
        n = int(line.split(" ")[1])
        coded = fec.encode(code, line, n).encode()
        assert coded.endswith(b"\n") and coded.count(b"\n") == 1
        coded = coded[:-1]
        assert coded == host_fec.wrap(line, host_fec.Code(nsym, span))  # board == host
        assert line.rstrip("\n").encode() in coded  # readable: the frame itself, inside
        inner, got = host_fec.unwrap(coded)
        assert inner == line.rstrip("\n").encode() and got.name == "%d/%d" % (nsym, span)
        # The protocol's envelope holds: marker and version, the frame's number, type z, and
        # the CRC of all before (a reader that knows no z counts it corrupt, never a frame).
        assert coded.startswith(b"~c2 %d z %d/%d ~c2 %d " % (n, nsym, span, n))
        with pytest.raises(frames.Corrupt, match="not a JSON object"):
            frames.decode(coded[:1024])


def test_the_codes_table_and_each_frames_parity_are_made_a_step_at_a_time():
    code = fec.Code(32, 96)  # the largest table: 256 * 11 ints
    steps = 0
    while not code.build():
        steps += 1
    assert steps > 40  # a root, a row, a few dozen ints a step
    coder = fec.Coder(code, 5, sample_frames()[0])
    taken = []
    while not coder.done():
        before = coder._i
        coder.step()
        taken.append(coder._i - before)
    assert max(taken) <= fec.WORK // code.chunks and len(taken) > 20


@pytest.mark.parametrize("bad", [(0, 96), (1, 96), (3, 96), (34, 96), (16, 15), (16, 224),
                                 (32, 224), (True, 96)])
def test_codes_out_of_range_are_refused(bad):
    with pytest.raises(ValueError):
        fec.Code(*bad)
    with pytest.raises(ValueError):
        host_fec.Code(*bad)


@needs_mp
def test_micropython_codes_the_same_bytes(tmp_path):
    cases = [[n, s, line] for n, s in CODES for line in sample_frames()]
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
    code = ("import json, sys\nfrom scoreboard import fec\nfor n, s, line in json.load(open(%r)):"
            "\n    print(json.dumps(fec.encode(fec.Code(n, s), line, 7)))" % str(path))
    out = run_mp(code=code, heap="96k").stdout.splitlines()
    assert [json.loads(x) for x in out] == [fec.encode(fec.Code(n, s), line, 7)
                                            for n, s, line in cases]


# -- the host corrects -----------------------------------------------------------------------

@pytest.mark.parametrize("model", ["bytes", "bits"])
def test_damaged_coded_frames_are_corrected_at_the_rates_each_code_is_for(model):
    rng = random.Random(7)
    for top, code in host_fec.LEVELS:
        rate = top if top is not None else 0.05
        fixed = tries = 0
        for line in sample_frames():
            coded = host_fec.wrap(line, code)
            want = line.rstrip("\n").encode()
            for _ in range(40):
                hit = damage(coded, rate, model, rng)
                if b"\n" in hit or b"\r" in hit:
                    continue  # a line end: the reader's own case, below
                tries += 1
                got = host_fec.unwrap(hit) or host_fec.repair(hit, [code])
                assert got is None or got[0] == want  # never a wrong frame
                fixed += got is not None
        assert fixed >= 0.97 * tries, (code, model, fixed, tries)


def test_a_miscorrection_or_noise_is_never_a_frame():
    rng = random.Random(3)
    code = host_fec.Code(8, 200)
    coded = host_fec.wrap(sample_frames()[1], code)
    for _ in range(300):  # far more damage than the code corrects
        hit = damage(coded, 0.2, "bytes", rng).replace(b"\n", b"x").replace(b"\r", b"x")
        got = host_fec.repair(hit, [code])
        assert got is None or got[0] == sample_frames()[1].rstrip("\n").encode()
    for noise in (b">>> ", b"Traceback (most recent call last):", b"x" * 600,
                  bytes(range(256)) * 2, b"~c2 1 z 8/200 " + b"0" * 300):
        assert host_fec.repair(noise, [code]) is None and host_fec.unwrap(noise) is None


def test_a_line_cut_in_two_and_two_run_together_are_read_again():
    code = host_fec.Code(16, 96)
    r, hello, short = [host_fec.wrap(x, code) for x in sample_frames()]
    c = host_fec.Coding(time.monotonic)
    c.set_board(code)
    cut = r[:300] + b"\n" + r[301:]  # a byte turned into a line end
    first, second = cut.split(b"\n")
    assert c.repair(first) == []
    got = c.repair(second)
    assert [g[0] for g in got] == [sample_frames()[0].rstrip("\n").encode()]
    joined = hello[:-1] + hello[-1:] + b"Q" + short  # the line end turned into a "Q"
    got = c.repair(joined)
    assert [g[0] for g in got] == [x.rstrip("\n").encode() for x in sample_frames()[1:]]


def test_the_host_asks_for_parity_only_once_it_sees_damage_and_plain_again_when_clean():
    now = [100.0]
    c = host_fec.Coding(lambda: now[0])
    for _ in range(50):
        c.note(300, 0, True)
    assert c.want() is None and c.due() == (False, None)  # a clean line pays nothing
    c.note(40, 1, True)  # one short glitch
    assert c.want() is None
    c.note(300, 1, True)  # a reply damaged
    assert c.want() is not None and c.due()[0]
    code = c.want()
    c.sent(99, code)
    assert c.due() == (False, None)  # asked: not again at once
    assert c.answered(99, "ok", {"id": 99, "result": {"parity": code.name}})
    assert c.board == code and c.due() == (False, None)
    for _ in range(40):  # a heavily damaged line: a stronger code
        c.note(500, 20)
    assert c.want().nsym > code.nsym
    now[0] += host_fec.OFF_S + 1
    assert c.want() is None and c.due() == (True, None)  # plain frames again
    c2 = host_fec.Coding(time.monotonic)
    c2.note(300, 1, True)
    c2.note(300, 1, True)
    c2.sent(5, c2.want())
    assert c2.answered(5, "err", {"id": 5, "code": "unknown"}) and not c2.ok
    assert c2.due() == (False, None)  # older firmware: never asked again


# -- the board's link ------------------------------------------------------------------------

class StateHandler(FakeHandler):
    def cmd_state(self, args):
        return {"game": "five-pins", "state": {"scores": [1, 2]}, "pad": "Zoë " * 150}


@pytest.mark.parametrize("budget", [None, 57])
def test_once_asked_the_board_codes_every_frame_and_goes_plain_again(budget):
    out = []
    link = Link(out.append, StateHandler(), budget=budget)
    link.feed(frames.encode(1, "parity", {"nsym": 16, "span": 96}))
    link.feed(frames.encode(2, "state", {}))
    link.emit("warn", {"warning": "meanwhile"})
    link.feed(frames.encode(3, "parity", {"nsym": 0}))
    link.feed(frames.encode(4, "hello", {}))
    passes = 0
    while link.busy():
        written = sum(map(len, out))
        link.pump()
        assert budget is None or sum(map(len, out)) - written <= budget
        passes += 1
    lines = "".join(out).encode().split(b"\n")[:-1]
    got = []
    for line in lines:
        u = host_fec.unwrap(line)
        f = frames.decode(u[0] if u else line)
        got.append((bool(u), f[1], f[2].get("id") if type(f[2]) is dict else None))
    replies = {cid: coded for coded, typ, cid in got if typ == "ok"}
    # Coded from the parity command on, its own reply included; plain again from the "off",
    # its own reply included.
    assert replies == {1: True, 2: True, 3: False, 4: False}
    assert [typ for _, typ, _ in got].count("warn") == 1
    assert link.stats()["coded"] == 3 - (budget is not None)  # (the warn went before: budget)
    hello = frames.decode(lines[-1])[2]["result"]
    assert "parity" not in hello


@pytest.mark.parametrize("every", [1, 3])
@pytest.mark.parametrize("codes", [[(16, 96)], [(8, 200), (32, 96)], [(32, 96), (8, 200)]])
def test_what_the_app_sends_while_the_codes_table_is_being_made_waits_for_it(codes, every):
    # The host asks for parity (then, seeing more damage, for more) and the app sends its
    # frames (a beat, an action) in the steps while the code's table is still being made, or
    # while another frame's parity is: each goes coded, whole, in order; the board never stops.
    out = []
    link = Link(out.append, FakeHandler(), budget=57)
    cid = 1
    for nsym, span in codes:
        link.feed(frames.encode(cid, "parity", {"nsym": nsym, "span": span}))
        cid += 1
    sent = []
    for k in range(60):
        if k % every == 0:
            sent.append(k)
            link.emit("beat", {"mode": "scoring", "k": k})
        link.pump()
    while link.busy():
        link.pump()
    beats, coded = [], []
    for line in "".join(out).encode().split(b"\n")[:-1]:
        u = host_fec.unwrap(line)
        f = frames.decode(u[0] if u else line)
        if u is not None:  # its parity the code's own, as made at once
            code = fec.Code(u[1].nsym, u[1].span)
            n = int(line.split(b" ")[1])
            assert line.decode() + "\n" == fec.encode(code, u[0].decode() + "\n", n)
        if f[1] == "beat":
            beats.append(f[2]["k"])
            coded.append(u is not None)
    assert beats == sent
    # (a beat before the parity command's step goes plain) coded from the first one coded on
    assert True in coded and all(coded[coded.index(True):])


@pytest.mark.parametrize("fails", ["table", "parity"])
def test_coding_work_the_heap_has_no_block_for_is_given_up_not_retried_for_ever(fails,
                                                                              monkeypatch):
    # A heap in pieces can stay so: a code's table (6 KB whole at 16/96) or a coded frame's
    # parity that fails at every try must not hold the link's step for good (the board would
    # answer nothing again). The code is given up (frames plain, hello says so); a coded frame
    # cut short ends as a line the host drops, its number spent; the link goes on answering.
    out = []
    link = Link(out.append, StateHandler(), budget=57)

    def no_room(*args, **kw):
        raise MemoryError("memory allocation failed, allocating 6144 bytes")

    monkeypatch.setattr(fec.Code if fails == "table" else fec.Coder, "build" if fails ==
                        "table" else "step", no_room)
    link.feed(frames.encode(1, "parity", {"nsym": 16, "span": 96}))
    link.feed(frames.encode(2, "state", {}))
    link.feed(frames.encode(3, "hello", {}))
    passes = 0
    while link.busy():
        link.pump()
        passes += 1
        assert passes < 500, "the link's work never ends"
    assert link.stats()["dropped"] >= 1
    got = {}
    for line in "".join(out).encode().split(b"\n")[:-1]:
        try:
            f = frames.decode(host_fec.unwrap(line)[0] if host_fec.unwrap(line) else line)
        except (frames.Corrupt, frames.WrongVersion):
            continue  # a coded frame ended short: the host drops it
        if f is not None and f[1] == "ok":
            got[f[2]["id"]] = f[2]["result"]
    assert 3 in got, got  # the link answers after the failure
    if fails == "table":
        assert got[1] == {"parity": "16/96"} and 2 in got  # asked before the table's first step
        assert "parity" not in got[3]  # given up: hello says the frames are plain
    else:
        assert 1 not in got  # its reply was the first coded frame: dropped, the host asks again
        assert 2 in got and "parity" not in got[3]  # plain again, and hello says so


def test_parity_arguments_are_checked_and_named():
    out = []
    link = Link(out.append, FakeHandler())
    for args, words in (({"nsym": 3}, "even number"), ({"nsym": 40}, "even number"),
                        ({"nsym": 16, "span": 8}, "span must be"),
                        ({"nsym": 32, "span": 230}, "span must be"),
                        ({"nsym": "16"}, "non-negative integer"), ({}, "parity needs nsym"),
                        ({"nsym": 16, "code": 1}, "takes no argument code")):
        link.feed(frames.encode(9, "parity", args))
        f = frames.decode(out[-1])
        assert f[1] == "err" and f[2]["code"] == "args" and words in f[2]["error"], f[2]
    assert link.stats().get("coded") is None  # nothing coded: no code was taken


def test_during_a_stream_the_coding_changes_at_once_and_its_reply_follows_the_ok():
    out = []

    class Journal(FakeHandler):
        def cmd_journal(self, args):
            return iter([{"seq": s, "a": "undo", "t": s, "pad": "p" * 60} for s in range(1, 6)])

    link = Link(out.append, Journal(), budget=40)
    link.feed(frames.encode(7, "journal", {"after": 0}))
    for _ in range(5):
        link.pump()
    link.feed(frames.encode(8, "parity", {"nsym": 8, "span": 200}))
    while link.busy():
        link.pump()
    got = []
    for line in "".join(out).encode().split(b"\n")[:-1]:
        u = host_fec.unwrap(line)
        f = frames.decode(u[0] if u else line)
        got.append((f[0], f[1], bool(u)))
    assert [t for _, t, _ in got] == ["rec"] * 5 + ["ok", "ok"]
    assert [n for n, _, _ in got] == list(range(7))  # the stream's frames, one after the other
    assert got[-1][2] and got[-2][2] and not got[0][2]  # coded from the change on


# -- over a wire -----------------------------------------------------------------------------

def test_the_host_link_asks_for_parity_on_a_noisy_wire_and_reads_every_reply():
    rng = random.Random(11)

    def noisy(data):
        return damage(data, 0.02, "bytes", rng)

    b = PtyBoard(handler=StateHandler(), to_host=noisy, to_board=lambda d: d)
    ser = open_port(b.path)
    try:
        bl = BoardLink(ser, b.path)
        got = 0
        for _ in range(12):
            if bl.request("state", timeout=3.0, retries=6)["pad"] == "Zoë " * 150:
                got += 1
        assert got == 12
        assert bl.coding.board is not None and bl.stats()["repaired"] > 0
        assert b.link.stats()["coded"] > 0
    finally:
        ser.close()
        b.close()


@pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")
def test_a_whole_journal_is_archived_over_a_line_that_damages_three_bytes_in_a_hundred():
    from bench.bench_archive import _wait_booted, noise, write_journal
    from chalk.follow import Follower
    from chalk.randomgame import random_match
    from chalk.sim import Sim
    from chalk.store import Archive

    head, actions = random_match("five-pins", seed=3, max_actions=150,
                                 config={"target": 1000, "sets": 3}, accuracy=0.5)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        write_journal(tmp / "flash", head, actions)
        with Sim("five-pins", flash=tmp / "flash", baud=115200) as sim:
            _wait_booted(sim.port, sim)
            sim.corrupt = noise("bytes", 0.03, 9)
            said = []
            with Archive(tmp / "a.db", create=True) as a:
                Follower(a, sim.port, once=True, say=said.append).run()
                assert a.last_seq(1) == len(actions) + 1, said
                assert a.counts()["actions"] == len(actions) and not a.gaps(1)


def test_a_link_whose_work_the_heap_has_no_room_to_load_plays_on_and_answers_later(
        monkeypatch):
    # The link's stepwise work (linkwork.py) is loaded at its first step on a board from .mpy:
    # a heap with no room for it then drops the step (the board's loop goes on), and the
    # command is answered once it loads.
    import sys

    out = []
    link = Link(out.append, StateHandler(), budget=57)
    real = sys.modules.get("scoreboard.linkwork")

    class NoRoom:
        def __getattr__(self, name):
            raise MemoryError("memory allocation failed, allocating 3072 bytes")

    monkeypatch.setitem(sys.modules, "scoreboard.linkwork", NoRoom())
    link.feed(frames.encode(1, "hello", {}))
    assert link.step() == "dropped" and link.busy()  # no exception out of it
    if real is not None:
        monkeypatch.setitem(sys.modules, "scoreboard.linkwork", real)
    else:
        monkeypatch.delitem(sys.modules, "scoreboard.linkwork")
    while link.busy():
        link.pump()
    got = [frames.decode(line.encode()) for line in "".join(out).splitlines(True)]
    assert [(f[1], f[2]["id"]) for f in got if f[1] in ("ok", "err")] == [("ok", 1)]
