"""The hash chain and the board's signature (firmware/scoreboard/chain.py, sign.py): the
canonical encoding against CPython's json, the board's HMAC (RFC 6979's building block) against
CPython's hmac, the same bytes on the MicroPython unix port, and the chain and signatures a
board keeps across games, reboots and power cuts; the legacy (host-made key) signature chalk
still checks."""

import hashlib
import hmac
import json
import os
import random

import pytest

from chalk import chainhost
from scoreboard import boardkey, chain, p256, sign
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
            assert p256.hmac_sha256(key, msg) == hmac.new(key, msg, hashlib.sha256).digest()
    # RFC 4231 test case 2
    assert chain.hexlify(p256.hmac_sha256(b"Jefe", b"what do ya want for nothing?")) == (
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")


def test_a_legacy_signature_checks_and_fails_on_any_change():
    key = os.urandom(32)
    link = hashlib.sha256(b"x").digest()
    sig = chainhost.legacy_sign(key, "sim-1", 7, link)
    assert chainhost.legacy_ok(key, "sim-1", 7, link, sig)
    assert not chainhost.legacy_ok(key, "sim-2", 7, link, sig)
    assert not chainhost.legacy_ok(key, "sim-1", 8, link, sig)
    assert not chainhost.legacy_ok(key, "sim-1", 7, hashlib.sha256(b"y").digest(), sig)
    assert not chainhost.legacy_ok(os.urandom(32), "sim-1", 7, link, sig)
    assert not chainhost.legacy_ok(key, "sim-1", 7, link, sig[:-1])
    assert not chainhost.legacy_ok(key, "sim-1", 7, link, "\u00e9" * 64)  # no exception
    assert chainhost.legacy_key_id(key) != chainhost.legacy_key_id(os.urandom(32))
    # What firmware with a host-made key signed: HMAC-SHA256 of "chalk-head-1 dev seq " || link
    assert sig == hmac.new(key, b"chalk-head-1 sim-1 7 " + link, hashlib.sha256).hexdigest()


MP_CODE = """
import json, sys
from scoreboard import chain, p256
for line in sys.stdin:
    if not line.strip():
        continue
    obj = json.loads(line)
    key = bytes(range(obj["klen"]))
    c = chain.canon(obj["obj"])
    print(chain.hexlify(chain.step(chain.ZERO, obj["obj"])),
          chain.hexlify(p256.hmac_sha256(key, c)))
"""


def test_micropython_writes_the_same_bytes_and_signatures():
    # Raw UTF-8, as frames carry text (MicroPython's json does not join \\ud83c\\udfb1 pairs).
    lines = [json.dumps({"obj": o, "klen": 20 + 30 * i}, ensure_ascii=False)
             for i, o in enumerate(CASES)]
    out = run_mp(code=MP_CODE, stdin="\n".join(lines) + "\n").stdout.split("\n")
    for i, o in enumerate(CASES):
        key = bytes(range(20 + 30 * i))
        c = chain.canon(o)
        want = "%s %s" % (hashlib.sha256(chain.ZERO + c).hexdigest(),
                          hmac.new(key, c, hashlib.sha256).hexdigest())
        assert out[i] == want, o


# -- the board's chain ---------------------------------------------------------------------------

def make(flash):
    cfg = json.loads((BOARDS / "shove-hapenny.json").read_text())
    board = SimBoard(cfg, str(flash), VirtualClock())
    out = []
    return board, App(board, emit=lambda t, p: out.append((t, p))), out


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


def drive(app):
    """The signer's work done as the main loop does it, a step at a time."""
    while app.signer is not None and app.signer.busy():
        app.signer.step()


def signed(app, out, game_no=None):
    """The board's signed head: asked (the first reply: pending), its work done, and the `sig`
    frame it sent."""
    first = app.signing().head(game_no)
    drive(app)
    return first, [p for t, p in out if t == "sig"][-1]


def test_the_board_signs_the_end_record_and_the_head_on_request(tmp_path):
    board, app, out = make(tmp_path)
    app.boot()
    drive(app)  # the first boot: the key pair made by the main loop
    assert app.header["device"] == board.device_id  # the device is in the chain
    assert app.header["prev"] is None  # the board's first game
    app.submit({"a": "start", "side": 0})
    app.submit({"a": "turn", "side": 0, "beds": [1, 0, 0, 0, 0, 0, 0, 0, 0]})
    app.submit({"a": "undo"})
    first, head = signed(app, out)
    assert first["pending"] and "sig" not in first  # signed between scans: not at once
    assert app.signer is None  # nothing left to do: the signer left RAM
    link, seq, _ = journal_chain(tmp_path, 1)
    assert head["seq"] == seq == 4 and head["head"] == chain.hexlify(link)
    pub = boardkey.nvs_get(board.nvs, "pk", 64).hex()
    assert head["kid"] == sign.key_id(bytes.fromhex(pub)) == chainhost.key_id(pub)
    assert app.hello()["kid"] == head["kid"]
    assert chainhost.head_ok(pub, board.device_id, 4, link, head["sig"])
    app.new_game()  # ends game 1: the end is signed on its own, a moment later
    link, seq, end = journal_chain(tmp_path, 1)
    assert seq == 5 and set(end) == {"winner"}  # no signature in the record: it follows
    drive(app)
    sig = [p for t, p in out if t == "sig" and p["seq"] == 5][0]
    assert sig["head"] == chain.hexlify(link)
    assert chainhost.head_ok(pub, board.device_id, 5, link, sig["sig"])
    # Asked again: made again, the same (RFC 6979: deterministic).
    assert signed(app, out, 1)[1] == sig
    # The next game names this one's end as its predecessor.
    assert app.header["prev"] == {"game_no": 1, "seq": 5, "link": chain.hexlify(link)}
    # The private key never leaves the board: in no reply, no frame.
    d = boardkey.nvs_get(board.nvs, "sk", 32).hex()
    assert d not in json.dumps(out) + json.dumps(app.hello()) + json.dumps(app.status())


def test_boot_rebuilds_the_chain_and_a_torn_record_is_dropped(tmp_path):
    board, app, out = make(tmp_path)
    app.boot()
    drive(app)
    app.submit({"a": "start", "side": 0})
    app.submit({"a": "turn", "side": 0, "beds": [1, 0, 0, 0, 0, 0, 0, 0, 0]})
    before = signed(app, out)[1]
    app.journal.close()
    # A power cut in the middle of the next record: half a line at the end of the file.
    path = tmp_path / "g00001.jnl"
    path.write_bytes(path.read_bytes() + b'4 A {"a":"turn","side":1,"be')
    board, again, out = make(tmp_path)
    res = again.boot()
    assert again.signer is None  # not loaded at boot: the key is there already
    assert again.hello()["kid"] == before["kid"]  # the same key: kept in NVS, not made again
    assert res.repaired and signed(again, out)[1] == before
    again.submit({"a": "turn", "side": 1, "beds": [0, 0, 0, 0, 0, 0, 0, 0, 2]})
    link, seq, _ = journal_chain(tmp_path, 1)
    assert signed(again, out)[1]["head"] == chain.hexlify(link) and seq == 4
    again.journal.close()


def test_the_chain_of_games_goes_on_over_an_erased_journal(tmp_path):
    board, app, _ = make(tmp_path)
    app.boot()
    app.new_game()
    app.new_game()  # games 1 and 2 ended, 3 under way
    link, seq, _ = journal_chain(tmp_path, 2)
    assert app.header["game_no"] == 3 and app.header["prev"]["link"] == chain.hexlify(link)
    app.journal.close()
    for f in tmp_path.glob("g*.jnl"):
        f.unlink()  # the journal erased (mpremote rm): the board's NVS still knows game 2
    board, again, _ = make(tmp_path)
    again.boot()
    assert again.header["game_no"] == 3  # numbered on, not from 1 again
    assert again.header["prev"] == {"game_no": 2, "seq": seq, "link": chain.hexlify(link)}
    again.journal.close()


def test_a_board_without_nvs_gives_no_signature(tmp_path):
    class Plain(SimBoard):
        nvs = None

    cfg = json.loads((BOARDS / "shove-hapenny.json").read_text())
    app = App(Plain(cfg, str(tmp_path), VirtualClock()))
    app.boot()
    assert app.signing() is None and "kid" not in app.hello()
    app.submit({"a": "start", "side": 1})
    app.new_game()
    _, _, end = journal_chain(tmp_path, 1)
    assert set(end) == {"winner"}
