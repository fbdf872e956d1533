"""The write-ahead journal (firmware/scoreboard/journal.py, docs/journal.md): on CPython here, on
the MicroPython unix port through tests/mp/journal_check.py and journal_writer.py."""

import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
import zlib

import pytest

from scoreboard.journal import MAX_LINE, Journal, JournalError, decode, encode
from tests.conftest import report_micropython
from tests.mpy import FIRMWARE, MP_TESTS, ROOT, micropython_path, run_mp

HEAD = {"chalk": 1, "game": "shove-hapenny", "config": {"sides": 2, "per_side": 1},
        "players": ["Ann", "Bob"], "started": "2025-01-31T20:15:00"}
LINE = re.compile(rb"^(\d+) ([HAE]) (\{.*\}) ([0-9a-f]{8})\n$")


def turn(i):
    return {"a": "turn", "side": i % 2, "beds": [i % 3, 0, 1, 0, 0, 0, 0, 0, i % 2], "t": 1000 * i}


def seqs(recs):
    return [r[0] for r in recs]


def spans(data):
    out, i = [], 0
    while i < len(data):
        nl = data.index(b"\n", i)
        out.append((i, nl + 1))
        i = nl + 1
    return out


def booted(d, **kw):
    j = Journal(str(d))
    return j, j.boot(**kw)


def build(d):
    """Game 1: 3 actions, ended. Game 2: 3 actions, in progress. Returns its records."""
    j, _ = booted(d)
    j.new_game(HEAD)
    for i in range(3):
        j.append(turn(i))
    j.end_game({"winner": 0})
    j.new_game(HEAD)
    for i in range(3, 6):
        j.append(turn(i))
    recs = list(j.records_after(0))
    j.close()
    return recs


def mp_summary(out, mode):
    last = out.stdout.strip().splitlines()[-1].split()
    assert last[:2] == ["ok", mode], out.stdout + out.stderr
    return dict(kv.split("=") for kv in last[2:])


# -- format ------------------------------------------------------------------------------------

def test_a_record_is_one_checksummed_text_line():
    line = encode(17, "A", {"a": "turn", "side": 0})
    body = b'17 A {"a":"turn","side":0}'
    assert line == body + b" %08x\n" % zlib.crc32(body)
    assert decode(line) == (17, "A", b'{"a":"turn","side":0}')
    crc = line[-9:-1]
    other = b"%08x" % (int(crc, 16) ^ 1)
    assert decode(line.replace(crc, other)) == "checksum mismatch"
    assert decode(line.replace(b"17", b"18")) == "checksum mismatch"
    assert decode(line[:-1]) == "malformed line"
    assert decode(b"17 A {} 0000000G\n") == "malformed checksum"


def test_a_journal_written_by_micropython_reads_the_same_on_cpython(tmp_path):
    # MicroPython writes non-ASCII text as raw UTF-8 where CPython escapes it: both read both.
    code = ("from scoreboard.journal import Journal\n"
            "j = Journal(%r); j.boot()\n"
            "j.new_game({'game': 'five-pins', 'players': ['Zo\\u00eb', 'J\\u00f6rg']})\n"
            "j.append({'a': 'break', 'player': 1, 'note': '\\u2603'})\n" % str(tmp_path))
    run_mp(code=code)
    assert "Zoë".encode() in (tmp_path / "g00001.jnl").read_bytes()
    j, r = booted(tmp_path)
    assert r.errors == [] and r.header["players"] == ["Zoë", "Jörg"]
    assert r.actions == [{"a": "break", "player": 1, "note": "\u2603"}]
    j.append({"a": "shot", "player": 1, "note": "é"})
    j.close()
    out = run_mp(code="from scoreboard.journal import Journal\n"
                      "j = Journal(%r); r = j.boot(); print(r.errors, r.actions[-1]['note'] == "
                      "'\\u00e9', r.header['players'][0] == 'Zo\\u00eb')" % str(tmp_path))
    assert out.stdout.split() == ["[]", "True", "True"]


def test_files_on_flash_are_per_game_and_line_per_record(tmp_path):
    build(tmp_path)
    assert sorted(os.listdir(tmp_path)) == ["g00001.jnl", "g00002.jnl"]
    seq = 0
    for name, kinds in (("g00001.jnl", "HAAAE"), ("g00002.jnl", "HAAA")):
        lines = (tmp_path / name).read_bytes().splitlines(keepends=True)
        assert "".join(LINE.match(ln).group(2).decode() for ln in lines) == kinds
        for ln in lines:
            seq += 1
            assert int(LINE.match(ln).group(1)) == seq


# -- round trip, rotation, records_after --------------------------------------------------------

def test_round_trip_resume_and_rotation(tmp_path):
    j, r = booted(tmp_path)
    assert (r.header, r.actions, r.last_seq, r.errors) == (None, None, 0, [])
    assert j.new_game(HEAD) == (1, 1)
    assert [j.append(turn(i)) for i in range(4)] == [2, 3, 4, 5]
    assert j.end_game({"winner": 1}) == 6
    assert j.new_game(HEAD) == (2, 7)
    assert j.append(turn(4)) == 8
    j.close()

    j, r = booted(tmp_path)
    assert r.game_no == 2 and r.count == 1 and r.actions == [turn(4)] and r.last_seq == 8
    assert r.header == dict(HEAD, game_no=2)
    assert j.append(turn(5)) == 9  # seq continues
    assert list(j.actions()) == [turn(4), turn(5)]
    assert list(j.actions(1)) == [turn(i) for i in range(4)]
    assert j.header(1) == dict(HEAD, game_no=1)
    # finished games are kept until the host has them
    assert j.acknowledge(5) == [] and len(os.listdir(tmp_path)) == 2
    assert j.acknowledge(6) == [1]
    assert os.listdir(tmp_path) == ["g00002.jnl"]
    st = j.stats()
    assert st["files"] == 1 and st["records"] == 3 and st["first_seq"] == 7
    assert st["last_seq"] == 9 and st["game_no"] == 2 and st["acked"] == 6
    assert st["bytes"] == (tmp_path / "g00002.jnl").stat().st_size
    # the newest file stays, even finished and acknowledged: it carries seq and game number
    j.end_game()
    assert j.acknowledge(10) == [] and os.listdir(tmp_path) == ["g00002.jnl"]
    j.close()
    j, r = booted(tmp_path)
    assert r.header is None and r.last_seq == 10
    assert j.new_game(HEAD) == (3, 11)
    assert j.acknowledge(10) == [2]
    assert j.stats()["games"] == [3]


def test_records_after_gives_exactly_the_later_records_across_files(tmp_path):
    recs = build(tmp_path)
    assert seqs(recs) == list(range(1, 10))
    assert [r[1] for r in recs] == list("HAAAEHAAA")
    assert recs[5][2] == dict(HEAD, game_no=2) and recs[4][2] == {"winner": 0}
    j, _ = booted(tmp_path)
    for n in range(0, 11):
        assert list(j.records_after(n)) == recs[n:]
    g = j.records_after(2)
    assert next(g)[0] == 3
    j.append(turn(9))  # written while the host is being resynced: still delivered
    assert seqs(g) == list(range(4, 11))
    j.acknowledge(5)
    assert seqs(j.records_after(0)) == [6, 7, 8, 9, 10]


def test_misuse_is_refused_without_touching_flash(tmp_path):
    j = Journal(str(tmp_path / "j"))
    with pytest.raises(JournalError):
        j.new_game(HEAD)  # not booted
    j.boot()
    with pytest.raises(JournalError):
        j.append(turn(0))  # no game
    j.new_game(HEAD)
    with pytest.raises(JournalError):
        j.new_game(HEAD)  # one in progress
    with pytest.raises(JournalError):
        j.append([1, 2])
    with pytest.raises(TypeError):
        j.append({"a": "turn", "x": object()})
    with pytest.raises(JournalError):
        j.append({"a": "turn", "pad": "x" * MAX_LINE})
    with pytest.raises(JournalError):
        j.acknowledge(2)  # the host cannot hold what was never written
    assert j.append(turn(0)) == 2
    j.close()
    j, r = booted(tmp_path / "j")
    assert r.errors == [] and r.actions == [turn(0)]


# -- power cuts: every byte offset ----------------------------------------------------------------

def cut_and_boot(d, files, expect):
    for name, data in files.items():
        (d / name).write_bytes(data)
    j, r = booted(d)
    assert r.errors == []
    assert list(j.records_after(0)) == expect
    last = expect[-1][0] if expect else 0
    assert r.last_seq == last
    header, actions = None, None
    for _, kind, payload in expect:
        if kind == "H":
            header, actions = payload, []
        elif kind == "A":
            actions.append(payload)
        else:
            header, actions = None, None
    assert (r.header, r.actions) == (header, actions)
    for name in os.listdir(d):  # what stays on flash: a prefix of what was, ending in a record
        data = (d / name).read_bytes()
        assert name.endswith(".jnl") and data.endswith(b"\n") and files[name].startswith(data)
    s = j.new_game(HEAD)[1] if header is None else j.append(turn(99))
    assert s == last + 1
    s2 = j.append(turn(100))
    j.close()
    j, r = booted(d)
    got = list(j.records_after(0))
    assert r.errors == [] and got[:len(expect)] == expect
    assert seqs(got) == list(range(1, s2 + 1)) and r.actions[-1] == turn(100)
    j.close()


@pytest.mark.parametrize("which", ["last action", "game 2 header", "end record", "game 1 header"])
def test_cut_at_every_offset_leaves_exactly_the_whole_records(tmp_path, which):
    src = tmp_path / "src"
    recs = build(src)
    g1 = (src / "g00001.jnl").read_bytes()
    g2 = (src / "g00002.jnl").read_bytes()
    n1 = len(spans(g1))
    name, data, others, span, before = {
        "last action": ("g00002.jnl", g2, {"g00001.jnl": g1}, spans(g2)[-1], recs[:-1]),
        "game 2 header": ("g00002.jnl", g2, {"g00001.jnl": g1}, spans(g2)[0], recs[:n1]),
        "end record": ("g00001.jnl", g1, {}, spans(g1)[-1], recs[:n1 - 1]),
        "game 1 header": ("g00001.jnl", g1, {}, spans(g1)[0], []),
    }[which]
    start, end = span
    for off in range(start, end + 1):
        d = tmp_path / ("cut%d" % off)
        d.mkdir()
        files = dict(others)
        files[name] = data[:off]
        cut_and_boot(d, files, recs[:len(before) + 1] if off == end else before)


def test_cut_at_every_offset_on_micropython(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(FIRMWARE))
    cp = subprocess.run([sys.executable, str(MP_TESTS / "journal_check.py"), "offsets",
                         str(tmp_path / "cp")], capture_output=True, text=True, env=env,
                        check=True)
    mp = run_mp(MP_TESTS / "journal_check.py", args=["offsets", tmp_path / "mp"])
    got = mp_summary(mp, "offsets")
    assert got == mp_summary(cp, "offsets")  # same offsets, each checked, on both
    assert int(got["cases"]) > 300
    report_micropython("journal cut offsets booted and checked", int(got["cases"]))


def test_torn_garbage_tail_and_leftover_temp_files(tmp_path):
    recs = build(tmp_path)
    good = (tmp_path / "g00002.jnl").read_bytes()
    # a cut on a filesystem that extends the file before writing it: zeros, no newline
    with open(tmp_path / "g00002.jnl", "ab") as f:
        f.write(b"\0" * (3 * MAX_LINE))
    (tmp_path / "g00001.tmp").write_bytes(b"stale copy")  # its original is still there
    j, r = booted(tmp_path)
    assert r.errors == [] and r.repaired == [
        {"file": "g00002.jnl", "offset": len(good), "bytes": 3 * MAX_LINE}]
    assert (tmp_path / "g00002.jnl").read_bytes() == good
    assert sorted(os.listdir(tmp_path)) == ["g00001.jnl", "g00002.jnl"]
    assert list(j.records_after(0)) == recs
    j.close()
    # remove-then-rename (FAT) cut between the two: the complete copy becomes the file
    os.rename(tmp_path / "g00002.jnl", tmp_path / "g00002.tmp")
    j, r = booted(tmp_path)
    assert r.errors == [] and list(j.records_after(0)) == recs
    assert sorted(os.listdir(tmp_path)) == ["g00001.jnl", "g00002.jnl"]


class FailingFile:
    """A file whose next write puts half the bytes on flash and then fails (flash full)."""

    def __init__(self, f):
        self.f = f

    def write(self, data):
        self.f.write(data[:len(data) // 2])
        self.f.flush()
        raise OSError(28, "no space")

    def __getattr__(self, name):
        return getattr(self.f, name)


def test_a_failed_write_is_cut_off_before_the_next_one(tmp_path):
    j, _ = booted(tmp_path)
    j.new_game(HEAD)
    j.append(turn(0))
    j._f = FailingFile(j._f)
    with pytest.raises(OSError):
        j.append(turn(1))
    assert j.append(turn(2)) == 3  # the failed one never got its seq
    j.close()
    j, r = booted(tmp_path)
    assert r.errors == [] and r.repaired == [] and r.actions == [turn(0), turn(2)]


# -- damage (bit rot) ---------------------------------------------------------------------------

def test_every_bit_flip_in_a_record_is_reported_and_stops_the_game(tmp_path):
    src = tmp_path / "src"
    recs = build(src)
    g1 = (src / "g00001.jnl").read_bytes()
    g2 = (src / "g00002.jnl").read_bytes()
    start, end = spans(g2)[2]  # game 2, line 3: its second action, seq 8
    for off in range(start, end):
        for bit in range(8):
            d = tmp_path / ("f%d_%d" % (off, bit))
            d.mkdir()
            (d / "g00001.jnl").write_bytes(g1)
            bad = bytearray(g2)
            bad[off] ^= 1 << bit
            (d / "g00002.jnl").write_bytes(bytes(bad))
            j, r = booted(d)
            assert len(r.errors) == 1
            e = r.errors[0]
            assert (e["file"], e["line"], e["seq"], e["offset"]) == ("g00002.jnl", 3, 8, start)
            assert r.header is None and r.stopped == [2] and r.last_seq >= 9
            assert list(j.records_after(0)) == recs[:7]  # the game stops at its last good one
            assert (d / "g00002.jnl").read_bytes() == bytes(bad)  # evidence kept
            no, s = j.new_game(HEAD)
            assert no == 3 and s > 9  # no seq the host may hold is ever reused
            j.close()


def test_damage_is_named_again_at_every_boot_until_acknowledged(tmp_path):
    build(tmp_path)
    p = tmp_path / "g00001.jnl"
    data = bytearray(p.read_bytes())
    data[spans(bytes(data))[1][0] + 8] ^= 0x01  # line 2 of game 1
    p.write_bytes(bytes(data))
    j, r = booted(tmp_path)
    assert [(e["file"], e["line"], e["seq"]) for e in r.errors] == [("g00001.jnl", 2, 2)]
    assert r.stopped == [1] and r.game_no == 2 and r.actions == [turn(3), turn(4), turn(5)]
    assert seqs(j.records_after(0)) == [1, 6, 7, 8, 9]
    j.close()
    j, r = booted(tmp_path)
    assert len(r.errors) == 1 and r.errors[0]["error"] == "checksum mismatch"
    assert j.acknowledge(5) == [1]
    j.close()
    j, r = booted(tmp_path)
    assert r.errors == [] and r.game_no == 2


def test_a_complete_but_corrupt_last_line_is_damage_not_a_torn_write(tmp_path):
    build(tmp_path)
    p = tmp_path / "g00002.jnl"
    data = bytearray(p.read_bytes())
    data[-5] ^= 0x04  # inside the checksum of the last record; its newline is intact
    p.write_bytes(bytes(data))
    j, r = booted(tmp_path)
    assert [(e["file"], e["line"], e["seq"]) for e in r.errors] == [("g00002.jnl", 4, 9)]
    assert r.header is None and r.stopped == [2] and j.new_game(HEAD)[1] >= 10


def test_structural_damage_and_overlong_lines_are_reported(tmp_path):
    build(tmp_path)
    p = tmp_path / "g00002.jnl"
    lines = p.read_bytes().splitlines(keepends=True)
    p.write_bytes(lines[0] + lines[2] + lines[1] + lines[3])  # seq 8 before 7
    j, r = booted(tmp_path)
    assert [(e["line"], e["error"]) for e in r.errors] == [(3, "seq 7 after 8")]
    j.close()
    p.write_bytes(lines[0] + b"x" * (MAX_LINE * 2) + b"\n" + lines[1])
    j, r = booted(tmp_path)
    assert [(e["line"], e["error"]) for e in r.errors] == [(2, "line too long")]
    j.close()
    p.write_bytes(lines[1] + lines[2])
    j, r = booted(tmp_path)
    assert [(e["line"], e["error"]) for e in r.errors] == [(1, "no header")]


def test_bit_flips_on_micropython(tmp_path):
    got = mp_summary(run_mp(MP_TESTS / "journal_check.py", args=["flips", tmp_path / "f"]),
                     "flips")
    assert int(got["flips"]) > 500
    report_micropython("journal bit flips detected and reported", int(got["flips"]))


# -- MicroPython: round trip, a long game on an ESP32-sized heap, LittleFS power cuts ----------

def test_round_trip_on_micropython(tmp_path):
    mp_summary(run_mp(MP_TESTS / "journal_check.py", args=["roundtrip", tmp_path / "r"]),
               "roundtrip")


def test_a_1000_action_game_boots_within_a_96k_heap(tmp_path):
    out = run_mp(MP_TESTS / "journal_check.py", args=["big", tmp_path / "b", 1000])
    got = mp_summary(out, "big")
    assert int(got["actions"]) == 1000 and int(got["bytes"]) > 60000
    assert int(got["boot_used"]) < 16 * 1024  # streamed: what boot holds, not the game
    print("1000-action boot on the unix port: %s ms, %s bytes held" % (got["boot_ms"],
                                                                      got["boot_used"]))


def test_littlefs_power_cut_at_every_block_write(tmp_path):
    # The RAM flash lives on the MicroPython heap, hence the bigger heap for this one.
    got = mp_summary(run_mp(MP_TESTS / "journal_lfs.py", heap="512k"), "lfs")
    assert int(got["scenario_ops"]) > 50 and int(got["repair_ops"]) > 3
    report_micropython("journal LittleFS power cuts (every block write)", int(got["cuts"]))


# -- SIGKILL at random moments -----------------------------------------------------------------

@pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")
def test_sigkill_never_loses_an_acknowledged_record(tmp_path):
    d = tmp_path / "kill"
    env = dict(os.environ, MICROPYPATH=os.pathsep.join([str(FIRMWARE), str(MP_TESTS)]))
    cmd = [micropython_path(), "-X", "heapsize=96k", str(MP_TESTS / "journal_writer.py"), str(d),
           "20"]
    rng = random.Random(20250131)
    acked, durable, kills = [], 0, 0
    for k in range(30):
        # bufsize=0: readline() below must not read ahead into a buffer that communicate(),
        # reading the pipe itself, would never see (the lines printed after the first).
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                             cwd=str(ROOT), bufsize=0)
        guard = threading.Timer(20, p.kill)  # never hang the suite on a stuck writer
        guard.start()
        first = b""
        if k % 4:
            # most kills land while it writes (however slow the machine is to start it) ...
            first = p.stdout.readline()
            time.sleep(rng.random() * rng.choice([0.002, 0.02, 0.06]))
        else:
            time.sleep(rng.random() * 0.05)  # ... some while it starts up or boots
        p.send_signal(signal.SIGKILL)
        out, err = p.communicate()
        guard.cancel()
        out = first + out
        assert p.returncode == -signal.SIGKILL, (k, out[-200:], err)
        kills += 1
        lines = out.split(b"\n")[:-1]  # a last piece without newline was cut mid-print
        if not lines:
            continue  # killed before boot finished
        boot = lines[0].split()
        assert boot[0] == b"boot" and boot[2] == b"0", lines[0]  # no damage, ever
        assert int(boot[1]) >= durable  # every seq printed before is still there
        run = [int(x) for x in lines[1:]]
        assert run == list(range(int(boot[1]) + 1, int(boot[1]) + 1 + len(run)))
        acked += run
        durable = max([durable, int(boot[1])] + run)
    j, r = booted(d)
    got = seqs(j.records_after(0))
    assert r.errors == [] and r.stopped == []
    assert got == list(range(1, r.last_seq + 1))  # strictly increasing, no gap
    assert set(acked) <= set(got)
    assert r.last_seq - durable in (0, 1)  # at most the record in flight when killed
    assert kills >= 20 and len(acked) > 100
    report_micropython("journal writer SIGKILLs, every acknowledged seq kept", kills)


def test_records_after_only_rises_past_a_file_with_no_good_record(tmp_path):
    # Game 2's only record is damaged, and game 3 starts again at seq 1 (say, files copied in
    # from another board): boot reports both files, and records_after never goes back.
    j, _ = booted(tmp_path)
    j.new_game(HEAD)
    j.append(turn(0))
    j.end_game({"winner": None})
    j.close()
    (tmp_path / "g00002.jnl").write_bytes(
        encode(4, "H", dict(HEAD, game_no=2)).replace(b"Ann", b"Anx"))
    (tmp_path / "g00003.jnl").write_bytes(encode(1, "H", dict(HEAD, game_no=3))
                                          + encode(2, "A", turn(1)))
    j, r = booted(tmp_path)
    got = seqs(j.records_after(0))
    assert got == [1, 2, 3] and got == sorted(set(got))
    assert [(e["file"], e["error"]) for e in r.errors] == [
        ("g00002.jnl", "checksum mismatch"), ("g00003.jnl", "seq 1 after 3")]
    assert r.header is None and r.last_seq >= 4  # nothing resumes; new seqs come after
    no, seq = j.new_game(HEAD)
    assert seq > 4 and seqs(j.records_after(0)) == [1, 2, 3, seq]
    j.close()
