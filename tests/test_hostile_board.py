"""The host never trusts a board: records with seq or t of 2**63 and more (SQLite's integers
overflowed: a traceback), a header holding a lone surrogate (UnicodeEncodeError), a record with
seq 10**20 (`chalk archive --once` looped for ever), compact frames nested past any stack (the
reader recursed without bound), replies that are not objects. Each gets one line naming the
board and the frame; the archive stores every other record and goes on, the nonsense stepped
over as a gap."""

import binascii
import json

import pytest

from chalk import compact
from chalk.follow import Follower
from chalk.link import BoardError, BoardLink, Frame
from chalk.randomgame import random_match
from chalk.store import Archive, board_records
from scoreboard import frames
from tests.test_noisy_line import FakeLink

HELLO = {"device": "sim-1", "board": "five-pins", "game": "five-pins"}


def game(n=12):
    head, actions = random_match("five-pins", seed=2, config={"target": 400}, max_actions=n)
    recs, _states = board_records(dict(head, game_no=1), actions)
    return recs


class Hostile(FakeLink):
    """A board whose journal holds `bad` records among its good ones."""

    def __init__(self, recs, bad):
        super().__init__(sorted(recs + bad, key=lambda r: r["seq"]), ())


def follow(tmp_path, link):
    said = []
    with Archive(tmp_path / "a.db", create=True) as a:
        f = Follower(a, say=said.append)
        f.board_id = a.board(HELLO)
        f.device = HELLO["device"]
        f._catch_up(link, [])
        seqs = [s for s, _t, _l in a.actions(1)]
        return a.last_seq(f.board_id), seqs, said, f.counts, a.gaps(f.board_id)


@pytest.mark.parametrize("bad,words", [
    ({"seq": 5, "t": 2 ** 63, "a": "shot", "player": 0}, "no valid t"),
    ({"seq": 5, "t": 10 ** 30, "a": "shot", "player": 0}, "no valid t"),
    ({"seq": 5, "t": 10, "a": "shot", "note": "\udc80"}, "lone surrogate"),
    ({"seq": 5, "t": 10, "a": "shot", "x": [[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]}, "nested"),
    ({"seq": 5, "type": "Q"}, "unknown type"),
])
def test_a_record_the_archive_cannot_take_is_one_line_and_a_gap(tmp_path, bad, words):
    recs = game()
    recs = [r for r in recs if r["seq"] != 5]
    last, seqs, said, counts, gaps = follow(tmp_path, Hostile(recs, [bad]))
    assert last == recs[-1]["seq"]  # the archive went on past it
    assert 5 not in seqs and seqs == [s for s in range(2, last + 1) if s != 5]
    lines = [s for s in said if "cannot take" in s and "sim-1" in s]
    assert len(lines) == 1 and words in lines[0] and "frame" in lines[0], said
    assert (4, 6) in gaps and counts["unreadable"] == 1


@pytest.mark.parametrize("seq", [2 ** 63, 10 ** 20, 2 ** 53])
def test_a_seq_beyond_any_journal_never_loops_the_follower(tmp_path, seq):
    recs = game()
    last, seqs, said, counts, gaps = follow(
        tmp_path, Hostile(recs, [{"seq": seq, "t": 0, "a": "undo"}]))
    assert last == recs[-1]["seq"] and len(seqs) == len(recs) - 1
    assert sum("cannot take" in s for s in said) == 1, said


def test_a_header_with_a_lone_surrogate_is_refused_not_a_traceback(tmp_path):
    recs = game()
    recs[0] = dict(recs[0], header=dict(recs[0]["header"], players=["Ann\udc80", "Bob"]))
    last, seqs, said, counts, gaps = follow(tmp_path, Hostile(recs[1:], [recs[0]]))
    assert any("lone surrogate" in s and "seq 1" in s for s in said), said
    assert last == 0  # the actions of a game whose header cannot be stored wait for it


def test_a_device_id_the_archive_cannot_keep_is_one_line(tmp_path):
    with Archive(tmp_path / "a.db", create=True) as a:
        for device in ("sim-\udc80", "x" * 200, "a\nb"):
            with pytest.raises(Exception) as e:
                a.board(dict(HELLO, device=device))
            assert "device id" in str(e.value) and "Traceback" not in str(e.value)


def framed(n, typ, text):
    body = "~c2 %d %s %s" % (n, typ, text)
    return ("%s %08x\n" % (body, binascii.crc32(body.encode()))).encode()


class Wire:
    """A serial object that plays back lines, for BoardLink."""

    def __init__(self, data):
        self.data = bytearray(data)
        self.timeout = 0.05
        self.written = b""

    @property
    def in_waiting(self):
        return len(self.data)

    def read(self, n=1):
        out = bytes(self.data[:n])
        del self.data[:n]
        return out

    def write(self, b):
        self.written += b

    def close(self):
        pass


def test_compact_frames_past_any_stack_are_counted_corrupt():
    deep = "[" * 900 + "]" * 90
    lines = [framed(1, "a", "5 10 3 %s,0,1,2,3,4,5" % deep),
             framed(2, "r", "five-pins 99999999999999999999999 AAAA"),
             framed(3, "a", "5 10 3 " + "9" * 900),
             framed(4, "state", "{" * 200 + "}" * 200)]
    link = BoardLink(Wire(b"".join(lines)), "hostile", first_id=1)
    link._unpack.learn("five-pins", {})
    assert link.poll(0.2) is None
    st = link.stats()
    assert st["corrupt"] == 4, st  # dropped and counted, never a traceback
    with pytest.raises(ValueError):
        compact.parse_state(deep, ["a"], {"a": [0]})


def test_a_reply_that_is_not_an_object_is_a_board_error():
    line = frames.encode(0, "ok", {"id": 7, "result": [1, 2]})
    link = BoardLink(Wire(line.encode()), "hostile", first_id=7)
    with pytest.raises(BoardError, match="not an object"):
        link.request("state", timeout=0.5)


def test_a_journal_reply_with_nonsense_counts_is_said_and_asked_again(tmp_path):
    recs = game(6)

    class Liar(FakeLink):
        told = 0

        def request(self, cmd, args=None, **kw):
            res = super().request(cmd, args, **kw)
            if res is not None and self.told < 2:
                self.told += 1
                return dict(res, last=10 ** 20, records="many")
            return res

    last, seqs, said, counts, gaps = follow(tmp_path, Liar(recs, ()))
    assert last == recs[-1]["seq"], said
    assert any("nonsense" in s for s in said)
    assert json.dumps(said)  # every line printable
    assert Frame  # (imported for the fake board's frames)
