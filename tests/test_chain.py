"""The hash chain and the board's signature (firmware/scoreboard/chain.py): the canonical
encoding and HMAC-SHA256 against CPython's json and hmac, the same bytes on the MicroPython
unix port, and the chain a board keeps across games, reboots and power cuts."""

import hashlib
import hmac
import json
import os
import random

import pytest

from chalk import chainhost
from scoreboard import chain, sign
from scoreboard.app import App
from scoreboard.hal.sim import SimBoard, VirtualClock
from scoreboard.journal import Journal
from tests.mpy import run_mp
from tests.test_app_boot import BOARDS

CASES = [
    {},
    {"b": 1, "a": [1, 2, {"z": None, "y": True, "x": False}]},
    {"seq": 12, "t": 183400, "a": "turn", "side": 0, "beds": [0, 2, 0, 0, 1, 0, 0, 0, 0]},
    {"players": ["Ann \"the cannon\"", "Bj\u00f6rn", ["Zo\u00eb", "\u4e2d\u6587"]],
     "n": -5, "back\\slash": "tab\there\nnew\x01\x1f\x7f", "emoji": "\U0001f3b1"},
    {"big": 10 ** 30, "neg": -(10 ** 12), "nested": [[[[]]]], "empty": ""},
]


def test_canon_is_sorted_compact_json_as_cpython_writes_it():
    for obj in CASES:
        want = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        # CPython escapes \x7f? No: only control characters below 0x20, as canon does.
        assert chain.canon(obj) == want.encode(), obj
        assert json.loads(chain.canon(obj)) == obj


def test_canon_refuses_floats_and_odd_keys():
    for bad in ({"t": 1.5}, [float("nan")], {1: 2}, {"x": b"bytes"}, {"s": {1, 2}}):
        with pytest.raises(chain.CanonError):
            chain.canon(bad)
    deep = []
    for _ in range(10):
        deep = [deep]
    with pytest.raises(chain.CanonError, match="deeper"):
        chain.canon(deep)


def test_hmac_sha256_is_rfc2104_as_cpython_hmac():
    rng = random.Random(5)
    for klen in (0, 1, 16, 32, 63, 64, 65, 100, 200):
        for mlen in (0, 1, 55, 64, 200):
            key = bytes(rng.randrange(256) for _ in range(klen))
            msg = bytes(rng.randrange(256) for _ in range(mlen))
            assert sign.hmac_sha256(key, msg) == hmac.new(key, msg, hashlib.sha256).digest()
    # RFC 4231 test case 2
    assert chain.hexlify(sign.hmac_sha256(b"Jefe", b"what do ya want for nothing?")) == (
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")


def test_signature_checks_and_fails_on_any_change():
    key = os.urandom(32)
    link = hashlib.sha256(b"x").digest()
    sig = sign.sign(key, "sim-1", 7, link)
    assert chainhost.check_sig(key, "sim-1", 7, link, sig)
    assert not chainhost.check_sig(key, "sim-2", 7, link, sig)
    assert not chainhost.check_sig(key, "sim-1", 8, link, sig)
    assert not chainhost.check_sig(key, "sim-1", 7, hashlib.sha256(b"y").digest(), sig)
    assert not chainhost.check_sig(os.urandom(32), "sim-1", 7, link, sig)
    assert not chainhost.check_sig(key, "sim-1", 7, link, sig[:-1])
    assert sign.key_id(key) != sign.key_id(os.urandom(32)) and len(sign.key_id(key)) == 16


MP_CODE = """
import json, sys
from scoreboard import chain, sign
for line in sys.stdin:
    if not line.strip():
        continue
    obj = json.loads(line)
    key = bytes(range(obj["klen"]))
    c = chain.canon(obj["obj"])
    print(chain.hexlify(chain.step(chain.ZERO, obj["obj"])),
          chain.hexlify(sign.hmac_sha256(key, c)), sign.sign(key, "dev", 3, chain.ZERO))
"""


def test_micropython_writes_the_same_bytes_and_signatures():
    # Raw UTF-8, as frames carry text (MicroPython's json does not join \\ud83c\\udfb1 pairs).
    lines = [json.dumps({"obj": o, "klen": 20 + 30 * i}, ensure_ascii=False)
             for i, o in enumerate(CASES)]
    out = run_mp(code=MP_CODE, stdin="\n".join(lines) + "\n").stdout.split("\n")
    for i, o in enumerate(CASES):
        key = bytes(range(20 + 30 * i))
        c = chain.canon(o)
        want = "%s %s %s" % (hashlib.sha256(chain.ZERO + c).hexdigest(),
                             hmac.new(key, c, hashlib.sha256).hexdigest(),
                             sign.sign(key, "dev", 3, chain.ZERO))
        assert out[i] == want, o


# -- the board's chain ---------------------------------------------------------------------------

def make(flash, key=True):
    cfg = json.loads((BOARDS / "shove-hapenny.json").read_text())
    if key:
        (flash / "board.key").write_text(KEY.hex() + "\n")
    board = SimBoard(cfg, str(flash), VirtualClock())
    return board, App(board)


KEY = bytes(range(100, 132))


def journal_chain(flash, game_no):
    """The chain recomputed from a journal file's records, as a verifier would."""
    j = Journal(str(flash))
    j.boot()
    link, seq = chain.ZERO, 0
    for s, kind, payload in j.records_after(0):
        if kind == "H":
            link = chain.ZERO
            if payload["game_no"] != game_no:
                seq = None
                continue
            seq = s
        if seq is None:
            continue
        link = chain.step(link, chain.record(s, kind, payload))
        seq = s
        if kind == "E":
            end = payload
            j.close()
            return link, s, end
    j.close()
    return link, seq, None


def test_the_board_signs_the_end_record_and_the_head_on_request(tmp_path):
    board, app = make(tmp_path)
    app.boot()
    assert app.header["device"] == board.device_id  # the device is in the chain
    app.submit({"a": "start", "side": 0})
    app.submit({"a": "turn", "side": 0, "beds": [1, 0, 0, 0, 0, 0, 0, 0, 0]})
    app.submit({"a": "undo"})
    head = app.signed_head()
    link, seq, _ = journal_chain(tmp_path, 1)
    assert head["seq"] == seq == 4 and head["head"] == chain.hexlify(link)
    assert head["kid"] == sign.key_id(KEY)
    assert chainhost.check_sig(KEY, board.device_id, 4, link, head["sig"])
    app.new_game()  # ends game 1: its end record carries the signed head
    link, seq, end = journal_chain(tmp_path, 1)
    assert seq == 5 and end["head"] == chain.hexlify(link)
    assert chainhost.check_sig(KEY, board.device_id, 5, link, end["sig"])
    assert KEY.hex() not in json.dumps(app.signed_head()) + json.dumps(app.hello())


def test_boot_rebuilds_the_chain_and_a_torn_record_is_dropped(tmp_path):
    board, app = make(tmp_path)
    app.boot()
    app.submit({"a": "start", "side": 0})
    app.submit({"a": "turn", "side": 0, "beds": [1, 0, 0, 0, 0, 0, 0, 0, 0]})
    before = app.signed_head()
    app.journal.close()
    # A power cut in the middle of the next record: half a line at the end of the file.
    path = tmp_path / "g00001.jnl"
    path.write_bytes(path.read_bytes() + b'4 A {"a":"turn","side":1,"be')
    board, again = make(tmp_path)
    res = again.boot()
    assert res.repaired and again.signed_head() == before
    again.submit({"a": "turn", "side": 1, "beds": [0, 0, 0, 0, 0, 0, 0, 0, 2]})
    link, seq, _ = journal_chain(tmp_path, 1)
    assert again.signed_head()["head"] == chain.hexlify(link) and seq == 4
    again.journal.close()


def test_a_board_without_a_key_gives_heads_but_no_signature(tmp_path):
    board, app = make(tmp_path, key=False)
    app.boot()
    app.submit({"a": "start", "side": 1})
    head = app.signed_head()
    assert "sig" not in head and "kid" not in head and head["seq"] == 2
    app.new_game()
    _, _, end = journal_chain(tmp_path, 1)
    assert "head" in end and "sig" not in end
