"""The archive makes progress on a noisy line: with 1 % of the bytes corrupted both ways from the
first byte to the last, `chalk archive` keeps every good record whatever order it comes in, asks
the board only for the missing ones, never gives up, and ends with exactly the board's journal:
no gap, no duplicate. Waits for events (the archive reaching the board's last seq), not time."""

import random
import time

import pytest

from chalk.follow import Follower
from chalk.store import Archive
from tests.mpy import micropython_path
from tests.test_archive import (
    Following,
    Play,
    archived,
    board_config,
    flash_records,
    wait_caught_up,
)

live = pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")


def corrupter(rate, seed):
    """Flip one bit in one byte of every 1/rate bytes each way, at a random place in each run of
    that many, so each way is as noisy as `rate` from its first bytes on. (A byte hit with
    probability `rate` from one generator shared by both ways' threads left the host's few
    commands, a few hundred bytes on a line that soon carries coded frames, now and then with
    no hit at all.) Never makes a control byte the board's REPL would act on: the low bit of a
    byte >= 0x20 keeps it >= 0x20; a hit that falls on a control byte goes to the next byte."""
    period = round(1 / rate)
    ways = {}
    for d in ("to_host", "to_board"):
        rng = random.Random("%s %s" % (seed, d))  # each way its own: threads' order aside
        ways[d] = [rng, 0, rng.randrange(period), False]  # rng, place in the run, hit, due
    hits = {"to_host": 0, "to_board": 0}

    def corrupt(data, direction):
        w = ways[direction]
        b = bytearray(data)
        for i in range(len(b)):
            if w[1] == w[2]:
                w[3] = True
            if w[3] and b[i] >= 0x20:
                b[i] ^= 0x01
                hits[direction] += 1
                w[3] = False
            w[1] += 1
            if w[1] == period:
                w[1] = 0
                w[2] = w[0].randrange(period)
        return bytes(b)

    corrupt.hits = hits
    return corrupt


def long_play(seed, shots):
    """A five-pins match of many quick shots (none reaching the target), as a sensor trace."""
    p = Play(seed)
    p.confirm()  # break
    for _ in range(shots):
        p.confirm()  # a shot with nothing down: no score, the turn passes
    return p


class Wire:
    """A simulated board playing `play`, its wire corrupted from the start."""

    def __init__(self, tmp_path, play, rate, seed=11):
        from chalk.sim import Sim

        self.play = play
        self.flash = tmp_path / "flash"
        self.db = tmp_path / "a.db"
        self.noise = corrupter(rate, seed)
        self.sim = Sim(board_config(tmp_path), flash=self.flash,
                       trace=play.write(tmp_path / "trace.jsonl"))
        self.sim.corrupt = self.noise
        self.port = self.sim.start()

    def close(self):
        self.sim.stop()


@live
def test_one_percent_noise_the_archive_keeps_up_and_ends_exact(tmp_path):
    play = long_play(seed=21, shots=60)
    w = Wire(tmp_path, play, rate=0.01)
    ctl = None
    try:
        t0 = time.monotonic()
        ctl = Following(w.db, w.port, idle=0.5, reply=1.0)
        # Noise on all the while: once the trace has played and the board's journal stopped
        # growing, the archive holds its last record (a busy machine may make the board miss
        # a press: the board's journal, not the trace, is what the archive must hold).
        # The records are what the archive must hold: the board's state after the last one
        # comes in a long reply that a line noisy to the very end may never carry intact.
        last = wait_caught_up(w.db, w.flash, timeout=play.seconds + 120,
                              not_before=t0 + play.seconds, log=ctl.text, state=False)
        hits = dict(w.noise.hits)
        ctl.close()
    finally:
        if ctl is not None and ctl.thread.is_alive():
            ctl.stop.set()
            ctl.thread.join(timeout=5)
        w.close()
    # Protocol 2's compact frames carry about a fifth of the bytes JSON did (47 for a five-pins
    # action against 233), so 1 % of them is a few dozen hits, each a frame lost (or, once the
    # host asks for coded frames, corrected). The host's commands are fewer on a coded line
    # (nothing lost to resync): a few hits that way.
    assert hits["to_host"] > 30 and hits["to_board"] > 0, hits
    assert last > 40  # most of the 62 records: the board played on while the line was noisy
    # Exactly the board's journal: every record once, in seq order, no gap, the same lines.
    games, seqs, gaps = archived(w.db)
    assert seqs == list(range(1, last + 1)) and gaps == 0, seqs
    on_flash = flash_records(w.flash)
    assert sorted(on_flash) == seqs
    for g, rows, _states in games.values():
        assert on_flash[g["seq"]] == ("H", g["header"])
        for s, r in rows:
            kind, payload = on_flash[s]
            assert kind == "A" and dict(payload, seq=s) == r
    assert ctl.counts["gaps"] == 0 and ctl.counts["records"] == last


class FakeLink:
    """A board's journal behind a link that loses a chosen set of rec frames once each (and
    never has the seqs in `gone`): to see what the follow loop asks for."""

    def __init__(self, recs, lose, per_frame=1):
        self.recs = recs
        self.lose = set(lose)
        self.per_frame = per_frame  # actions a frame carries (protocol 2 packs runs in `r`)
        self.asked = []
        self.queue = []
        self.port = "fake"

    def request(self, cmd, args=None, timeout=1.0, retries=2, progress=(), until=None):
        from chalk.link import Frame

        if cmd == "journal":
            self.asked.append(dict(args))
            after, want = args["after"], int(args.get("want", "0"), 16)
            sent = [r for r in self.recs if r["seq"] > after]
            if want:
                sent = [r for r in sent if want >> (r["seq"] - after - 1) & 1]
            if until is not None and all(r["seq"] not in self.lose for r in sent):
                for r in sent:
                    self.queue.append(Frame(0, "rec", r))
                return None  # every record asked for came: the ok is not waited for
            frames = self.frames_of(sent)
            for frame in frames:
                if self.lose & {r["seq"] for r in frame}:  # a lost frame loses all it carries
                    self.lose -= {r["seq"] for r in frame}  # lost this time, through the next
                else:
                    self.queue.extend(Frame(0, "rec", r) for r in frame)
            return {"last": sent[-1]["seq"] if sent else after, "count": len(frames),
                    "records": len(sent)}
        raise AssertionError(cmd)

    def frames_of(self, sent):
        """The records as the board frames them: runs of consecutive actions (at most
        per_frame a frame) in one frame, headers and ends one a frame."""
        frames = []
        for r in sent:
            last = frames[-1] if frames else None
            if (last and "type" not in r and "type" not in last[-1]
                    and r["seq"] == last[-1]["seq"] + 1 and len(last) < self.per_frame):
                last.append(r)
            else:
                frames.append([r])
        return frames

    def poll(self, timeout=0):
        return self.queue.pop(0) if self.queue else None

    def stats(self):
        return {"frames": len(self.asked)}


def test_catch_up_keeps_every_good_record_and_asks_only_for_the_missing(tmp_path):
    from chalk.randomgame import random_match
    from chalk.store import board_records

    head, actions = random_match("five-pins", seed=2, config={"target": 400}, max_actions=40)
    recs, _states = board_records(dict(head, game_no=1), actions)
    lost = {3, 4, 10, 17, 18, 19, 30}
    link = FakeLink(recs, lost)
    with Archive(tmp_path / "a.db", create=True) as a:
        f = Follower(a, say=None)
        f.board_id = a.board({"device": "sim-1", "board": "five-pins", "game": "five-pins"})
        touched = []
        f._catch_up(link, touched)
        assert a.last_seq(f.board_id) == len(recs)
        assert [s for _g, rows in [(1, a.actions(1))] for s, _t, _l in rows] == list(
            range(2, len(recs) + 1))
    # The first round asks for everything; the next only for the seqs that are missing (bit
    # i of "want": seq after + 1 + i); the last for anything after the last seq held.
    want = sum(1 << (s - 3) for s in lost)
    assert without_block(link.asked) == [{"after": 0}, {"after": 2, "want": "%x" % want},
                                         {"after": len(recs)}]
    # The block size adapts: halved after the round that lost frames, half again as large
    # after the one that came whole (docs/archive.md).
    assert [a["block"] for a in link.asked] == [360, 180, 270]


def without_block(asked):
    return [{k: v for k, v in a.items() if k != "block"} for a in asked]


def test_catch_up_judges_packed_frames_by_the_records_in_them(tmp_path):
    """Protocol 2: a journal stream's `count` is frames, each `r` frame a run of records. A lost
    frame loses the whole run; the host judges by the records here (the ok's `records`), so a
    stream with fewer frames than records missing never stores those records as gone."""
    from chalk.randomgame import random_match
    from chalk.store import board_records

    head, actions = random_match("five-pins", seed=2, config={"target": 400}, max_actions=40)
    recs, _states = board_records(dict(head, game_no=1), actions)
    assert len(recs) > 34
    link = FakeLink(recs, {3, 4, 10, 17, 18, 19, 30}, per_frame=8)
    with Archive(tmp_path / "a.db", create=True) as a:
        f = Follower(a, say=None)
        f.board_id = a.board({"device": "sim-1", "board": "five-pins", "game": "five-pins"})
        f._catch_up(link, [])
        assert f.counts["gaps"] == 0
        assert a.last_seq(f.board_id) == len(recs)
        assert [s for s, _t, _l in a.actions(1)] == list(range(2, len(recs) + 1))
    # Frames [2..9] [10..17] [18..25] [26..33] were lost whole: the second round asks for
    # exactly their seqs (bit i: seq 2 + i), the last for anything after the end.
    assert without_block(link.asked) == [{"after": 0},
                                         {"after": 1, "want": "%x" % ((1 << 32) - 1)},
                                         {"after": len(recs)}]
