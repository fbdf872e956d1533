"""The frame codec (docs/serial-protocol.md): round trips, damage never accepted, noise apart
from corruption, other protocol versions recognised; and the same bytes on MicroPython."""

import binascii
import json
import os
import subprocess
import sys

import pytest

from scoreboard import frames
from tests.conftest import report_micropython
from tests.mpy import FIRMWARE, MP_TESTS, run_mp

PAYLOADS = [
    (0, "boot", {"firmware": "0.1.0", "protocol": 1, "test_mode": False}),
    (42, "rec", {"seq": 17, "t": 8123, "a": "turn", "side": 0,
                 "beds": [0, 1, 0, 0, 0, 0, 0, 0, 0]}),
    (7, "new", {"game": "shove-hapenny", "config": {"per_side": 2},
                "players": [["Zoë", "Åsa"], ["Siobhán", "Bjørn 🎱"]]}),
    (999999999, "ok", {"id": 3, "result": {"state": {"scores": [12, 60], "winner": None},
                                           "ok": True}}),
    (5, "err", {"id": 5, "code": "args", "error": 'new: "players" \\ must be\ta list\n'}),
    (1, "warn", {"text": "ctl \x00\x01\x08\x0c\x1f\x7f end", "slash": "a/b", "quote": '"'}),
    (3, "state", {}),
]


def frame(n=42, typ="rec", payload=None):
    return frames.encode(n, typ, payload if payload is not None else PAYLOADS[1][2])


def with_crc(body):
    """A line with a correct CRC around any body: to build well-checksummed oddities."""
    raw = body.encode() if isinstance(body, str) else body
    return raw + b" %08x" % (binascii.crc32(raw) & 0xFFFFFFFF)


# -- round trips ----------------------------------------------------------------------------

@pytest.mark.parametrize("n,typ,payload", PAYLOADS)
def test_round_trip(n, typ, payload):
    line = frames.encode(n, typ, payload)
    assert line.endswith("\n") and line.count("\n") == 1
    assert frames.decode(line) == (n, typ, payload)
    assert frames.decode(line.encode()) == (n, typ, payload)
    assert frames.decode(line.rstrip("\n") + "\r\n") == (n, typ, payload)
    assert frames.decode(line.rstrip("\n")) == (n, typ, payload)


def test_the_documented_example():
    line = frames.encode(42, "rec", {"seq": 17, "t": 8123, "a": "turn", "side": 0,
                                     "beds": [0, 1, 0, 0, 0, 0, 0, 0, 0]})
    body = '~c2 42 rec {"a":"turn","beds":[0,1,0,0,0,0,0,0,0],"seq":17,"side":0,"t":8123}'
    assert line == body + " %08x\n" % (binascii.crc32(body.encode()) & 0xFFFFFFFF)
    assert line == body + " 1683ecd7\n"


def test_unicode_names_travel_as_utf8_and_are_counted_in_bytes():
    line = frames.encode(1, "new", {"players": ["Zoë", "Siobhán", "Bjørn 🎱"]})
    assert "Zoë" in line and "\\u" not in line  # readable in a serial monitor
    raw = line.encode()
    assert frames.decode(raw)[2]["players"][2] == "Bjørn 🎱"
    # escaped spellings are valid JSON too and decode the same
    body = '~c2 1 new {"players":["Zo\\u00eb"]}'
    assert frames.decode(with_crc(body))[2] == {"players": ["Zoë"]}


def test_encoding_is_canonical_sorted_keys_compact():
    a = frames.encode(1, "state", {"b": 1, "a": {"d": [1, 2], "c": None}})
    b = frames.encode(1, "state", {"a": {"c": None, "d": [1, 2]}, "b": 1})
    assert a == b
    assert '{"a":{"c":null,"d":[1,2]},"b":1}' in a


def test_a_frame_never_contains_a_control_byte():
    # A raw Ctrl-C/Ctrl-D/Ctrl-A would stop the app or reset the board: everything is escaped.
    line = frames.encode(1, "warn", {"t": "".join(chr(i) for i in range(32)) + "\x7f"})
    assert all(c >= 32 for c in line[:-1].encode())


@pytest.mark.parametrize("n,typ,payload,why", [
    (-1, "ok", {}, "frame number"),
    (10 ** 9, "ok", {}, "frame number"),
    (True, "ok", {}, "frame number"),
    (1, "OK", {}, "frame type"),
    (1, "", {}, "frame type"),
    (1, "x" * 17, {}, "frame type"),
    (1, "9lives", {}, "frame type"),
    (1, "ok", [], "must be a dict"),
    (1, "ok", {1: 2}, "keys must be strings"),
    (1, "ok", {"x": float("nan")}, "NaN"),
    (1, "ok", {"x": {1, 2}}, "cannot put set"),
])
def test_encode_refuses_what_cannot_be_a_frame(n, typ, payload, why):
    with pytest.raises(ValueError) as e:
        frames.encode(n, typ, payload)
    assert why in str(e.value) or "bad frame type" in str(e.value)


def test_max_line_is_enforced_on_both_sides():
    room = frames.MAX_LINE - len(frames.encode(1, "warn", {"t": ""}).rstrip("\n").encode())
    fits = frames.encode(1, "warn", {"t": "x" * room})
    assert len(fits.rstrip("\n").encode()) == frames.MAX_LINE
    assert frames.decode(fits)[2]["t"] == "x" * room
    with pytest.raises(frames.FrameTooLong):
        frames.encode(1, "warn", {"t": "x" * (room + 1)})
    with pytest.raises(frames.FrameTooLong):  # counted in bytes, not characters
        frames.encode(1, "warn", {"t": "é" * (room // 2 + 1)})
    over = with_crc('~c2 1 warn {"t":"%s"}' % ("x" * (room + 1)))
    assert len(over) == frames.MAX_LINE + 1
    with pytest.raises(frames.Corrupt, match="longer"):
        frames.decode(over)


def test_frame_numbers_wrap():
    assert frames.next_n(5) == 6
    assert frames.next_n(frames.MAX_N) == 0


# -- damage ---------------------------------------------------------------------------------

def outcome(line):
    try:
        f = frames.decode(line)
    except frames.WrongVersion as e:
        return ("version", e.version)
    except frames.Corrupt:
        return ("corrupt",)
    return ("noise",) if f is None else ("frame",) + f


@pytest.mark.parametrize("n,typ,payload", PAYLOADS[:4])
def test_no_single_byte_change_gives_another_valid_frame(n, typ, payload):
    good = frames.encode(n, typ, payload).rstrip("\n").encode()
    want = frames.decode(good)
    seen = set()
    for i in range(len(good)):
        for v in range(256):
            if v == good[i]:
                continue
            bad = good[:i] + bytes([v]) + good[i + 1:]
            o = outcome(bad)
            seen.add(o[0])
            # never a frame, and never a version claim: a damaged version digit fails the CRC
            assert o[0] in ("corrupt", "noise"), (i, v, o)
    assert seen == {"corrupt", "noise"}  # noise: the marker itself was hit
    assert want == (n, typ, payload)


@pytest.mark.parametrize("n,typ,payload", PAYLOADS[:4])
def test_no_truncation_is_accepted(n, typ, payload):
    good = frames.encode(n, typ, payload).encode()
    for cut in range(len(good) - 1):
        for tail in (b"", b"\n", b"\r\n"):
            assert outcome(good[:cut] + tail)[0] in ("corrupt", "noise"), cut
        # the tail of a line cut at its start (a port opened mid-line) is noise, not corrupt
        assert outcome(good[cut + 2:])[0] == "noise" or good[cut + 2:].startswith(b"~c")


def test_checks_behind_a_good_crc():
    # Lines a buggy or hostile sender could make with a correct CRC: still refused.
    for body in ['~c2 01 ok {}', '~c2 1 OK {}', '~c2 1 ok [1,2]', '~c2 1 ok "x"',
                 '~c2 1 ok {"a":', '~c2 1 ok', '~c2 x ok {}', '~c2  ok {}', '~cx 1 ok {}',
                 '~c 1 ok {}', '~c2 1234567890 ok {}', '~c01 1 ok {}']:
        assert outcome(with_crc(body)) == ("corrupt",), body
    assert outcome(with_crc(b'~c2 1 ok {"a":"\xff"}')) == ("corrupt",)
    good = frame().rstrip("\n")
    assert outcome(good[:-8] + good[-8:].upper())[0] == "corrupt" or good[-8:].isdigit()
    assert outcome(good + " ") == ("corrupt",)


def test_repl_noise_is_not_a_frame():
    for noise in [">>> ", "MicroPython v1.24.1 on 2024-11-29; Generic ESP32 module with ESP32",
                  "Traceback (most recent call last):", '  File "main.py", line 3',
                  "ets Jul 29 2019 12:21:46", "", "   ~c2 1 ok {} 00000000",
                  ">>> ~c2 1 hello {} 12345678", "~", "~C1 1 ok {} 00000000",
                  b"\xff\xfe garbage \x00"]:
        assert frames.decode(noise) is None, noise


def test_other_protocol_versions_are_recognised():
    newer = with_crc('~c3 8 ok {"id":3,"result":{}}')
    with pytest.raises(frames.WrongVersion) as e:
        frames.decode(newer)
    assert (e.value.version, e.value.n, e.value.newer) == (3, 8, True)
    older = with_crc('~c0 9 boot {"protocol":0}')
    with pytest.raises(frames.WrongVersion) as e:
        frames.decode(older)
    assert (e.value.version, e.value.n, e.value.newer) == (0, 9, False)
    # a future version may change what follows the frame number: still recognised
    with pytest.raises(frames.WrongVersion) as e:
        frames.decode(with_crc("~c22 4 something else entirely"))
    assert (e.value.version, e.value.n) == (22, 4)
    with pytest.raises(frames.WrongVersion) as e:
        frames.decode(with_crc("~c4 ?? x"))
    assert e.value.n is None
    # a damaged "newer" frame is corrupt, not a version claim
    bad = bytearray(newer)
    bad[5] ^= 1
    assert outcome(bytes(bad)) == ("corrupt",)
    # the encoder can speak another version (for tests of the other end)
    assert frames.decode(frames.encode(1, "ok", {}, version=2)) == (1, "ok", {})
    with pytest.raises(frames.WrongVersion) as e:
        frames.decode(frames.encode(1, "ok", {}, version=1))
    assert (e.value.version, e.value.newer) == (1, False)


# -- lines ----------------------------------------------------------------------------------

def test_lines_assemble_any_chunking():
    a, b = frame(1).encode(), frame(2).encode()
    stream = b"noise\r\n" + a + b"\r\n" + b + b"\rtail"
    for size in (1, 2, 3, 7, 64, len(stream)):
        lines = frames.Lines()
        got = []
        for i in range(0, len(stream), size):
            got += list(lines.feed(stream[i:i + size]))
        assert got == [b"noise", a.rstrip(b"\n"), b.rstrip(b"\n")]
        assert lines.pending() == 4
    assert list(frames.Lines().feed("é\n")) == ["é".encode()]


def test_lines_bound_memory_on_endless_input():
    lines = frames.Lines()
    out = []
    for _ in range(100):
        out += list(lines.feed(b"~c2 " + b"x" * 500))
        assert lines.pending() <= frames.MAX_LINE + 1
    out += list(lines.feed(b"\n" + frame(3).encode()))
    assert len(out) == 2
    assert outcome(out[0]) == ("corrupt",)  # too long: cut, then refused
    assert outcome(out[1])[:3] == ("frame", 3, "rec")
    noise = list(frames.Lines().feed(b"y" * 5000 + b"\n"))
    assert outcome(noise[0]) == ("noise",)


# -- MicroPython ----------------------------------------------------------------------------

def run_check(cases, tmp_path, micropython):
    path = tmp_path / "cases.json"
    # raw UTF-8: MicroPython's json misreads escaped surrogate pairs (\ud83c\udfb1)
    path.write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
    if micropython:
        out = run_mp(MP_TESTS / "frames_check.py", args=[path]).stdout
    else:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(FIRMWARE), str(MP_TESTS)]))
        out = subprocess.run([sys.executable, str(MP_TESTS / "frames_check.py"), str(path)],
                             capture_output=True, text=True, env=env, check=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def damaged_lines():
    good = [frames.encode(n, t, p).encode() for n, t, p in PAYLOADS]
    lines = []
    for g in good:
        lines.append(g)
        lines += [g[:cut] for cut in range(0, len(g), 7)]
        for i in range(0, len(g) - 1, 5):
            lines.append(g[:i] + bytes([g[i] ^ 0x20]) + g[i + 1:])
    lines += [with_crc(b) for b in ['~c3 8 ok {"id":3}', '~c0 9 boot {}', "~c2 1 ok [1]",
                                    '~c2 1 ok {"a":', "~c2 01 ok {}", "~c7 x y"]]
    lines += [b">>> ", b"Traceback (most recent call last):", b"\xff\xfe\x00", b"~c"]
    return lines


def test_micropython_encodes_the_same_bytes_and_agrees_on_every_decode(tmp_path):
    lines = damaged_lines()
    cases = {"encode": PAYLOADS, "decode": [binascii.hexlify(x).decode() for x in lines]}
    mp = run_check(cases, tmp_path, micropython=True)
    cp = run_check(cases, tmp_path, micropython=False)
    assert mp == cp
    assert [r["frame"] for r in mp[:len(PAYLOADS)]] == [frames.encode(*p) for p in PAYLOADS]
    kinds = {r["decode"][0] for r in mp[len(PAYLOADS):]}
    assert kinds == {"frame", "noise", "corrupt", "version"}
    report_micropython("frames encoded byte-identically, decodes agreeing on damaged lines "
                       "(%d lines)" % len(lines), len(PAYLOADS))


def test_micropython_never_accepts_a_changed_or_cut_frame(tmp_path):
    cases = {"mutate": [PAYLOADS[1], PAYLOADS[2]]}
    mp = run_check(cases, tmp_path, micropython=True)
    cp = run_check(cases, tmp_path, micropython=False)
    assert mp == cp
    for r in mp:
        m = r["mutate"]
        assert m["other"] == 0 and m["cut_accepted"] == 0 and m["version"] == 0
        assert m["corrupt"] > 0 and m["noise"] > 0
    report_micropython("frames with every byte changed to every value, none accepted",
                       sum(sum(r["mutate"].values()) for r in mp))
