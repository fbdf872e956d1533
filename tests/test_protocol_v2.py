"""Serial protocol v2 (docs/serial-protocol.md): compact `a` frames (an action and the state
after it) and `r` frames (journal records packed in base64) read back as exactly the `rec` and
`state` payloads they stand for; records that do not pack stay JSON; a resync can start after
any seq; MicroPython writes the same bytes."""

import binascii
import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chalk import compact
from chalk.randomgame import GAMES as RANDOM_GAMES
from chalk.randomgame import random_match
from scoreboard import frames, pack
from scoreboard.journal import Journal
from scoreboard.link import Link
from scoreboard.rules import new_game
from scoreboard.serve import journal_records
from tests.conftest import report_micropython
from tests.mpy import FIRMWARE, MP_TESTS, run_mp

GAMES = ("shove-hapenny", "five-pins")
ALL_GAMES = sorted(RANDOM_GAMES)  # every game the random player knows


def host_read(lines, unpacker):
    """What the host's BoardLink queues for these lines: [(type, payload)]."""
    out = []
    for line in lines:
        f = frames.decode(line)
        if f is None:
            continue
        out += unpacker.expand(f[1], f[2])
    return out


@pytest.mark.parametrize("game_id", ALL_GAMES)
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10 ** 6))
def test_action_frames_read_back_as_the_rec_and_state_they_stand_for(game_id, seed):
    head, actions = random_match(game_id, seed=seed, max_actions=150, accuracy=0.4,
                                 undo_rate=0.05)
    game = new_game(game_id, head["config"])
    un = compact.Unpacker()
    un.learn(game_id, head["config"])
    n = 0
    for seq, t, action in actions:
        state = game.apply(action)
        rec = dict(action, seq=seq, t=t)
        code = pack.pack_action(game, rec)
        if game_id in ("shove-hapenny", "five-pins", "seven-pins", "novuss", "tally"):
            assert code is not None, rec  # every action of these games packs
        if code is not None:
            lines = [frames.encode(n, "a", {"seq": seq, "t": t, "code": code, "state": state})]
            assert lines[0].startswith("~c2 %d a %d " % (n, seq))
        else:  # what the board sends then (app.submit): JSON rec and state, as version 1
            lines = [frames.encode(n, "rec", rec),
                     frames.encode(n + 1, "state", {"seq": seq, "state": state})]
        assert host_read(lines, un) == [("rec", rec), ("state", {"seq": seq, "state": state})]
        n += len(lines)


def test_an_action_frame_is_short_readable_text():
    game = new_game("five-pins", {})
    game.apply({"a": "break", "player": 0})
    state = game.apply({"a": "shot", "player": 0, "pins": "12C", "carom": 3, "fouls": []})
    code = pack.pack_action(game, {"a": "shot", "player": 0, "pins": "12C", "carom": 3,
                                     "fouls": [], "seq": 17, "t": 81234})
    line = frames.encode(42, "a", {"seq": 17, "t": 81234, "code": code, "state": state})
    # ball_in_hand, breaker, next, scores, set, sets, winner
    # (a list of digits leaves out its trailing zeros: sets [0, 0] is written "")
    assert line[:-10] == "~c2 42 a 17 81234 205 n,0,1,11.0,1,,~"
    assert len(line) <= 64


def test_state_values_and_their_compact_forms():
    like = {"a": 0, "b": None, "c": True, "d": [0, 0], "e": [[0, 0], [0, 0]], "f": [0],
            "g": [0, 0, 0], "h": []}
    keys = sorted(like)
    for state in [like,
                  {"a": -5, "b": 3, "c": False, "d": [12, 0], "e": [[1, 2], [33, 4]], "f": [10],
                   "g": [1, 2, 3], "h": []},
                  {"a": 7, "b": None, "c": True, "d": [0, 9], "e": [[0, 0], [1, 0]], "f": [-1],
                   "g": [0, 0, 1], "h": [5, 15]}]:
        text = pack.state_text(state)
        assert " " not in text and compact.parse_state(text, keys, like) == state
    assert pack.state_text({"scores": [12, 7], "x": None, "y": [3, 0, 0]}) == "12.7,~,3"
    with pytest.raises(ValueError):  # more digits than the game's list has
        compact.parse_state("1234", ["y"], {"y": [0, 0, 0]})
    with pytest.raises(ValueError):  # such a state goes as JSON
        pack.state_text({"name": "a b"})


@pytest.mark.parametrize("budget", [None, 57])
def test_an_action_without_a_compact_state_goes_as_its_record_and_state_made_now_or_later(
        budget):
    # A board's link makes an action's `a` frame in a step of its own (budget), after the
    # app's step journaled it; a state with no compact text (a value with a space) then goes
    # as the action's rec and state frames, in its place, in order, no number skipped. Made
    # at once (no budget), the app is told at once (ValueError) and sends the two itself.
    out = []
    link = Link(out.append, None, budget=budget)
    rec = {"a": "shot", "seq": 4, "t": 900, "player": 0}
    sent = []
    for state in ({"scores": [1, 2]}, {"name": "a b"}, {"scores": [3, 2]}):
        try:
            link.emit("a", {"seq": rec["seq"], "t": 900, "code": 7, "state": state, "rec": rec})
            sent.append("a")
        except ValueError:
            link.emit("rec", rec)
            link.emit("state", {"seq": rec["seq"], "state": state})
            sent.append("rec+state")
    while link.busy():
        link.pump()
    got = [frames.decode(line.encode()) for line in "".join(out).splitlines(True)]
    assert [f[0] for f in got] == list(range(len(got)))  # numbered one after the other
    assert [f[1] for f in got] == ["a", "rec", "state", "a"]
    assert got[1][2] == rec and got[2][2] == {"seq": 4, "state": {"name": "a b"}}
    assert sent == (["a", "rec+state", "a"] if budget is None else ["a"] * 3)


def test_records_that_the_rules_do_not_give_back_exactly_stay_json():
    game = new_game("five-pins", {})
    shot = {"a": "shot", "player": 0, "pins": "1", "carom": 0, "fouls": [], "seq": 3, "t": 9}
    assert pack.pack_action(game, shot) is not None
    assert pack.pack_action(game, dict(shot, sig="ab12")) is None  # a key the rules drop
    no_fouls = dict(shot)
    del no_fouls["fouls"]
    assert pack.pack_action(game, no_fouls) is None  # decode would add "fouls": []
    assert pack.pack_action(game, dict(shot, pins="X")) is None  # not a legal action
    assert pack.pack_action(game, dict(shot, t=-1)) is None
    assert pack.pack_action(game, {"a": "undo", "seq": 4, "t": 10}) == pack.UNDO


def write_journal(path, games):
    j = Journal(str(path))
    j.boot()
    for game_id, seed, n in games:
        head, actions = random_match(game_id, seed=seed, max_actions=n, accuracy=0.3,
                                     undo_rate=0.05)
        if j.stats()["game_no"] is not None:
            j.end_game({"reason": "next"})
        j.new_game(dict(head))
        for _, t, action in actions:
            j.append(dict(action, t=t))
        last = (game_id, head)
    return j, last


def resync_lines(j, after, game, game_id):
    out = []
    link = Link(out.append, type("H", (), {
        "cmd_journal": lambda self, a: journal_records(j, a["after"], game, game_id)})())
    link.feed(frames.encode(7, "journal", {"after": after}))
    return out


@pytest.mark.parametrize("game_id", GAMES)
def test_a_resync_in_blocks_gives_the_records_of_protocol_1_from_any_seq(tmp_path, game_id):
    other = "five-pins" if game_id == "shove-hapenny" else "shove-hapenny"
    # a finished game of the other kind, then a long one in progress
    j, (gid, head) = write_journal(tmp_path / "j", [(other, 1, 40), (game_id, 2, 400)])
    game = new_game(gid, head["config"])
    for a in j.actions():
        game.apply({k: a[k] for k in a if k != "t"})
    last = j.stats()["last_seq"]
    for after in (0, 1, 30, 41, 42, 43, 44, 100, last - 1, last):
        want = list(journal_records(j, after))  # protocol 1: one JSON rec per record
        lines = resync_lines(j, after, game, gid)
        un = compact.Unpacker()
        got = host_read(lines, un)
        assert got[-1][0] == "ok" and got[-1][1]["result"]["last"] == (want[-1]["seq"] if want
                                                                          else after)
        assert [p for t, p in got[:-1]] == want
        # the reply's count is the frames sent, so the host can find a lost one
        assert got[-1][1]["result"]["count"] == len(lines) - 1
        if after >= 43:  # all in the game in progress: packed, a handful of frames
            assert len(lines) - 1 <= 1 + (last - after) // 40
        for line in lines:
            assert len(line.encode()) <= frames.MAX_LINE
    j.close()


def test_a_block_whose_data_is_damaged_under_a_good_crc_is_refused():
    un = compact.Unpacker()
    for text in ["five-pins 3 gIkP", "five-pins 3 !!!!", "five-pins x AAA=", "five-pins 3"]:
        with pytest.raises(ValueError):
            un.expand("r", text)
    with pytest.raises(ValueError):
        compact.Unpacker().expand("a", "1 2 3 n,0,1,0.0,1,00,~")  # no game known yet


def run_check(cases, tmp_path, micropython):
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases), encoding="utf-8")
    if micropython:
        # The heap holds the whole case file (every action's state at once, which a board
        # never does) beside the firmware compiled from source: more than a board's 96k.
        return [json.loads(x) for x in run_mp(MP_TESTS / "frames_check.py", args=[path],
                                               heap="160k").stdout.splitlines()]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(FIRMWARE), str(MP_TESTS)]))
    out = subprocess.run([sys.executable, str(MP_TESTS / "frames_check.py"), str(path)],
                         capture_output=True, text=True, env=env, check=True).stdout
    return [json.loads(x) for x in out.splitlines()]


def test_micropython_writes_the_same_compact_frames(tmp_path):
    head, actions = random_match("shove-hapenny", seed=5, max_actions=60, accuracy=0.5)
    game = new_game("shove-hapenny", head["config"])
    cases = []
    recs = []
    for seq, t, action in actions:
        state = game.apply(action)
        code = pack.pack_action(game, dict(action, seq=seq, t=t))
        cases.append([seq, "a", {"seq": seq, "t": t, "code": code, "state": state}])
        recs.append([t, code])
    cases.append([99, "r", {"game": "shove-hapenny", "first": 1, "records": recs}])
    mp = run_check({"encode": cases}, tmp_path, True)
    cp = run_check({"encode": cases}, tmp_path, False)
    assert mp == cp and len(mp) == len(cases)
    un = compact.Unpacker()
    un.learn("shove-hapenny", head["config"])
    got = host_read([r["frame"] for r in mp[-1:]], un)
    assert [p for _, p in got] == [dict(a, seq=s, t=t) for s, t, a in actions]
    report_micropython("compact v2 frames (a, r) written byte-identically", len(cases))


def test_base64_of_a_block_is_text_safe():
    b = pack.Block("five-pins", 1)
    for i in range(200):
        if not b.add(i + 1, i * 40000, (i * 7919) % 2 ** 24):
            break
    text = b.text()
    assert frames._text_ok(text) and len(b) > 50
    assert binascii.a2b_base64(text.split(" ")[2])  # standard base64


def test_watch_raw_shows_each_line_with_what_it_stands_for(tmp_path):
    from chalk import watch
    from chalk.sim import Sim

    un = compact.Unpacker()
    un.learn("five-pins", {})
    b = pack.Block("five-pins", 3)
    b.add(3, 1000, 0)  # break, player 0
    b.add(4, 2000, pack.UNDO)
    line = frames.encode(5, "r", b).encode().rstrip()
    text = watch.raw_line(line, un.expand("r", frames.decode(line)[2]))
    assert text.splitlines() == [
        line.decode(),
        '    rec {"a": "break", "player": 0, "seq": 3, "t": 1000}',
        '    rec {"a": "undo", "seq": 4, "t": 2000}']
    assert watch.raw_line(b">>> ", "not a frame") == ">>> \n    (not a frame)"

    with Sim("five-pins", flash=tmp_path / "flash", test_mode=True) as sim:
        proc = subprocess.Popen([sys.executable, "-m", "chalk.cli", "watch", "--raw", "--port",
                                 sim.port], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        try:
            first = proc.stdout.readline()
            assert first.startswith("watching %s raw (protocol 2)" % sim.port), first
            sim.power_cut()  # the board restarts: its boot frame, decoded under it
            seen = [proc.stdout.readline() for _ in range(2)]
        finally:
            proc.kill()
            proc.wait()
    assert seen[0].startswith("~c2 0 boot {") and seen[1].startswith('    boot {"board": ')


def test_the_host_link_reads_compact_frames_and_shows_them_raw():
    from chalk.link import BoardLink

    class Wire:
        timeout = 0.01
        port = "test"

        def __init__(self, data):
            self.data = data
            self.in_waiting = len(data)

        def read(self, n):
            out, self.data = self.data, b""
            self.in_waiting = 0
            return out

    game = new_game("shove-hapenny", {})
    game.apply({"a": "start", "side": 1})
    action = {"a": "turn", "side": 1, "beds": [0, 2, 0, 0, 0, 0, 0, 0, 1]}
    state = game.apply(action)
    code = pack.pack_action(game, dict(action, seq=2, t=5000))
    head = {"game": "shove-hapenny", "config": {}, "chalk": 1}
    data = (frames.encode(0, "boot", {"game": "five-pins", "protocol": 2})
            + frames.encode(1, "rec", {"seq": 1, "type": "H", "header": head})
            + frames.encode(2, "a", {"seq": 2, "t": 5000, "code": code, "state": state})
            + "~c2 3 a 1 2 x 2f00d000\n").encode()
    bl = BoardLink(Wire(data))
    shown = []
    bl.on_line = lambda line, parts: shown.append(parts)
    got = [(f.n, f.type, f.payload) for f in bl.frames(timeout=0)]
    assert got[2:] == [(2, "rec", dict(action, seq=2, t=5000)),
                       (2, "state", {"seq": 2, "state": state})]
    assert [type(p) for p in shown] == [list, list, list, str]  # the last line is corrupt
    assert bl.stats()["corrupt"] == 1 and bl.stats()["lost"] == 0


def want_lines(j, after, want, game, game_id):
    out = []
    link = Link(out.append, type("H", (), {
        "cmd_journal": lambda self, a: journal_records(
            j, a["after"], game, game_id, int(a["want"], 16) if a.get("want") else 0)})())
    link.feed(frames.encode(7, "journal", {"after": after, "want": "%x" % want}))
    return out


@pytest.mark.parametrize("game_id", GAMES)
def test_a_resync_asked_by_want_packs_only_the_wanted_seqs(tmp_path, game_id):
    """`want` is honoured inside the blocks: a block never carries a seq the host did not ask
    for, the stream stops past the highest bit, and the ok's `records` counts the records sent
    (its `count` the frames). Each record comes back with the canonical bytes of protocol 1,
    which is what its hash chain link is over."""
    from scoreboard.chain import canon

    j, (gid, head) = write_journal(tmp_path / "j", [(game_id, 3, 300)])
    game = new_game(gid, head["config"])
    for a in j.actions():
        game.apply({k: a[k] for k in a if k != "t"})
    last = j.stats()["last_seq"]
    after = 20
    seqs = [s for s in range(after + 1, min(last, after + 200)) if s % 7 in (0, 1, 2, 5)]
    want = sum(1 << (s - after - 1) for s in seqs)
    expect = [r for r in journal_records(j, after) if r["seq"] in seqs]
    assert [r["seq"] for r in expect] == seqs
    lines = want_lines(j, after, want, game, gid)
    got = host_read(lines, compact.Unpacker())
    assert got[-1][0] == "ok"
    result = got[-1][1]["result"]
    recs = [p for t, p in got[:-1]]
    assert [r["seq"] for r in recs] == seqs  # nothing unwanted, nothing past the highest bit
    assert [canon(r) for r in recs] == [canon(r) for r in expect]
    assert result == {"last": seqs[-1], "count": len(lines) - 1, "records": len(seqs)}
    assert any(frames.decode(x)[1] == "r" for x in lines)  # runs of wanted seqs still pack
    for x in lines:
        f = frames.decode(x)
        if f[1] == "r":
            _gid, block = compact.unpack_block(f[2])
            assert all(s in seqs for s, _t, _c in block)
    j.close()


def test_an_action_packs_only_if_its_code_gives_back_the_same_canonical_bytes():
    """A key the code does not carry (a chain field, a note) or a value equal only in Python
    (1 for true, True for 1) keeps the record JSON: the host's record must hash as the
    board's did."""
    from scoreboard.chain import canon

    game = new_game("five-pins", {})
    rec = {"a": "break", "player": 0, "seq": 2, "t": 100}
    code = pack.pack_action(game, rec)
    assert code is not None
    un = compact.Unpacker()
    un.learn("five-pins", {})
    back = un.expand("r", pack.block_text({"game": "five-pins", "first": 2,
                                           "records": [(100, code)]}))[0][1]
    assert canon(back) == canon(rec)
    for extra in ({"link": "00" * 32}, {"device": "sim-1"}, {"head": "ab"}, {"kid": "k1"},
                  {"sig": "cd"}, {"note": "x"}):
        assert pack.pack_action(game, dict(rec, **extra)) is None, extra
    assert pack.pack_action(game, dict(rec, player=False)) is None  # False == 0, not the bytes
    shot = {"a": "shot", "player": 1, "pins": "", "carom": 0, "fouls": ["miss"], "seq": 3,
            "t": 5}
    game.apply({"a": "break", "player": 0})
    code = pack.pack_action(game, shot)
    assert code is not None
    assert pack.pack_action(game, dict(shot, player=True)) is None


def test_finished_games_pack_too_and_blocks_take_the_size_the_host_asks(tmp_path):
    # A finished game resynced as JSON (8.8 s for 1,000 actions): every game's actions pack now.
    j, (gid, head) = write_journal(tmp_path / "j", [("five-pins", 1, 300),
                                                    ("shove-hapenny", 2, 30)])
    game = new_game(gid, head["config"])

    def stream(args):
        out = []
        link = Link(out.append, type("H", (), {
            "cmd_journal": lambda self, a: journal_records(j, a["after"], game, gid,
                                                           0, a.get("block"))})())
        link.feed(frames.encode(7, "journal", args))
        return out, link

    whole, _ = stream({"after": 0})
    small, link = stream({"after": 0, "block": 24})
    assert host_read(whole, compact.Unpacker())[:-1] == host_read(small, compact.Unpacker())[:-1]
    r_whole = [ln for ln in whole if " r five-pins " in ln]
    r_small = [ln for ln in small if " r five-pins " in ln]
    assert r_whole and len(r_small) > 4 * len(r_whole)  # the finished game's actions, packed
    assert max(len(ln) for ln in r_small) < 90
    # The same journal command again (its ok lost on the way): the ok again, not the stream.
    out = []
    link._write = out.append
    link.feed(frames.encode(7, "journal", {"after": 0, "block": 24}))
    assert len(out) == 1 and " ok " in out[0] and link.stats()["repeats"] == 1
    j.close()
