"""Archive figures, printed (never asserted: a busy machine is no bug).

- ingest rate: actions a second into SQLite from a 1,000-action game, as one resync batch (one
  transaction) and live (one transaction per rec frame and one per state frame, as
  `chalk archive` does while following a board);
- bytes on the wire per action: the real rec + state frames a simulated board sends for a game
  played through `act` (the same frames a sensed action makes), counted off the port;
- resync of a 1,000-action game at 115200 baud: measured against a simulated board whose wire is
  throttled to 115200 baud (Sim(baud=115200)), next to the time the measured bytes need at
  115200 baud 8N1 (10 bits a byte).
"""

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from chalk.archive import Archive, Follower, board_records  # noqa: E402
from chalk.randomgame import random_match  # noqa: E402
from scoreboard import frames, pack  # noqa: E402

ACTIONS = 1000
WIRE_ACTIONS = 200  # actions played over the link for the bytes figure
BAUD = 115200
GAMES = {
    "five-pins": ({"target": 1000, "sets": 3}, 0.5),
    "shove-hapenny": ({}, 0.01),
}


def long_game(game, n=ACTIONS):
    """A random legal game lasting exactly n actions (the first seed that does)."""
    cfg, acc = GAMES[game]
    for seed in range(200):
        head, actions = random_match(game, seed=seed, max_actions=n, config=cfg, accuracy=acc,
                                     players=["Ann", "Bob"])
        if len(actions) == n:
            return head, actions
    raise RuntimeError("no %d-action %s game in 200 seeds" % (n, game))


def ingest_rates(head, actions, tmp):
    recs, states = board_records(dict(head, game_no=1), actions, end=False)
    hello = {"device": "bench", "board": head["game"], "game": head["game"]}
    with Archive(Path(tmp) / "batch.db", create=True) as a:
        b = a.board(hello)
        t = time.perf_counter()
        a.ingest(b, recs, states, resync=True)
        batch = time.perf_counter() - t
    with Archive(Path(tmp) / "live.db", create=True) as a:
        b = a.board(hello)
        t = time.perf_counter()
        for rec, st in zip(recs, states):
            a.ingest(b, [rec])
            a.add_states(b, [st])
        live = time.perf_counter() - t
    return len(actions) / batch, len(actions) / live


class Tap:
    """A serial object that keeps a copy of every byte read (to count the real frames)."""

    def __init__(self, ser):
        self.ser = ser
        self.data = bytearray()

    def read(self, n=1):
        d = self.ser.read(n)
        self.data.extend(d)
        return d

    def __getattr__(self, name):
        return getattr(self.ser, name)

    def frame_bytes(self):
        """{frame type: bytes on the wire, line end included}."""
        out = {}
        for line in bytes(self.data).split(b"\n"):
            try:
                f = frames.decode(line.rstrip(b"\r"))
            except (frames.Corrupt, frames.WrongVersion):
                continue
            if f is not None:
                out[f[1]] = out.get(f[1], 0) + len(line) + 1
        return out


def wire_bytes(game, head, actions, tmp):
    """Play the actions on a simulated board through `act`; rec + state bytes per action."""
    from chalk.link import BoardLink, open_port
    from chalk.sim import Sim

    sim = Sim(game, flash=Path(tmp) / ("wire-" + game), test_mode=True)
    port = sim.start()
    try:
        tap = Tap(open_port(port))
        link = BoardLink(tap, port)
        link.hello()
        link.request("new", {"game": game, "config": head["config"],
                             "players": head["players"]})
        tap.data.clear()
        n = 0
        for _seq, _t, action in actions[:WIRE_ACTIONS]:
            link.request("act", {"action": action})
            n += 1
        time.sleep(0.3)
        link.poll(0.2)
        counts = tap.frame_bytes()
        link.close()
    finally:
        sim.stop()
    return (counts.get("rec", 0) + counts.get("state", 0) + counts.get("a", 0)) / n, counts, n


def a_frames_bytes(head, actions):
    """Mean bytes of the `a` frames of a whole game, encoded here as a board would send them
    (frame numbers as a board that also answered a command per action: twice the seq)."""
    from scoreboard.rules import new_game

    game = new_game(head["game"], head["config"])
    total = 0
    for seq, t, action in actions:
        state = game.apply(action)
        code = pack.pack_action(game, dict(action, seq=seq, t=t))
        total += len(frames.encode(2 * seq, "a", {"seq": seq, "t": t, "code": code,
                                                  "state": state}).encode())
    return total / len(actions)


def write_journal(flash, head, actions):
    """A board's flash holding one game of these actions (the journal format, written by the
    firmware's own journal code on CPython)."""
    from scoreboard.journal import Journal

    flash.mkdir(parents=True, exist_ok=True)
    j = Journal(str(flash))
    j.boot()
    h = dict(head)
    h.pop("started", None)
    j.new_game(h)
    for _seq, t, action in actions:
        j.append(dict(action, t=t))
    j.close()


def resync_time(game, head, actions, tmp):
    """(seconds for `chalk archive --once` into an empty archive, seconds for the journal
    stream alone, bytes of that stream) against a board throttled to 115200 baud."""
    from chalk.link import BoardLink, open_port
    from chalk.sim import Sim

    flash = Path(tmp) / ("resync-" + game)
    write_journal(flash, head, actions)
    sim = Sim(game, flash=flash, baud=BAUD)
    port = sim.start()
    try:
        # Once the board has booted (replaying its 1,000 actions), time the stream alone.
        tap = Tap(open_port(port))
        link = BoardLink(tap, port)
        link.hello(timeout=30)
        tap.data.clear()
        t = time.perf_counter()
        recs = link.journal_since(0, timeout=30)
        stream = time.perf_counter() - t
        assert len(recs) == len(actions) + 1
        nbytes = len(tap.data)
        link.close()
        # The whole catch-up as `chalk archive --once` does it: hello, clock, journal, state,
        # into SQLite.
        with Archive(Path(tmp) / ("resync-" + game + ".db"), create=True) as a:
            t = time.perf_counter()
            Follower(a, port, once=True, say=None, reply=5.0).run()
            once = time.perf_counter() - t
            assert a.counts()["actions"] == len(actions)
    finally:
        sim.stop()
    return once, stream, nbytes


NOISE = 0.01  # bytes corrupted on the noisy line, both ways
NOISY_SHOTS = 150  # a five-pins board playing about 5.4 actions a second, about 28 s
LAG_GOAL = 50


def noisy_line(tmp, seed=21):
    """A simulated board playing NOISY_SHOTS quick shots while `chalk archive` follows it over
    a wire that corrupts NOISE of the bytes both ways from the first byte: how far the archive
    stays behind the board (sampled every 0.2 s) and when it holds the last record."""
    from tests.test_archive import Following, archive_last_seq, flash_last_seq
    from tests.test_noisy_line import Wire, long_play

    d = Path(tmp) / ("noisy%d" % seed)
    d.mkdir()
    play = long_play(seed=seed, shots=NOISY_SHOTS)
    w = Wire(d, play, rate=NOISE, seed=seed)
    ctl = Following(w.db, w.port, idle=0.5, reply=3.0)
    try:
        t0 = time.monotonic()
        lags = []
        while True:
            b, a = flash_last_seq(w.flash), archive_last_seq(w.db)
            t = time.monotonic() - t0
            lags.append((t, b - a))
            if b == play.seq == a or t > play.seconds + 120:
                break
            time.sleep(0.2)
        ctl.close()
    finally:
        if ctl.thread.is_alive():
            ctl.stop.set()
            ctl.thread.join(timeout=5)
        w.close()
    during = [lag for t, lag in lags if t <= play.seconds]
    return (play.seq, play.seconds, max(during), sum(during) / len(during),
            lags[-1][0] - play.seconds, lags[-1][1])


def main():
    print("Archive benchmarks (figures vary with load)")
    print()
    with tempfile.TemporaryDirectory() as tmp:
        games = {g: long_game(g) for g in GAMES}
        print("ingest into SQLite, %d-action game (actions/s)" % ACTIONS)
        print("%-14s %14s %14s" % ("game", "resync batch", "live frames"))
        for game, (head, actions) in games.items():
            batch, live = ingest_rates(head, actions, tmp)
            print("%-14s %14.0f %14.0f" % (game, batch, live))
        print("  resync batch: one transaction; live: one transaction per rec and per state "
              "frame")
        print()
        print("bytes on the wire per action live (real frames of a simulated board, %d actions)"
              % WIRE_ACTIONS)
        print("%-14s %8s %8s %8s %13s %16s %8s" % ("game", "a B", "rec B", "state B",
                                                    "per action B", "whole game a B",
                                                    "goal"))
        for game, (head, actions) in games.items():
            per, counts, n = wire_bytes(game, head, actions, tmp)
            print("%-14s %8.1f %8.1f %8.1f %13.1f %16.1f %8s" % (
                game, counts.get("a", 0) / n, counts.get("rec", 0) / n,
                counts.get("state", 0) / n, per, a_frames_bytes(head, actions), "<= 64"))
        print("  a: protocol 2's one frame per action, the state after it included; rec + "
              "state: JSON frames of")
        print("  records that do not pack (protocol 1 sent every action that way, ~230 B); "
              "whole game: the mean")
        print("  `a` frame over all %d actions (longer seq, t and scores late in a game)"
              % ACTIONS)
        print()
        print("resync of a %d-action game at %d baud (simulated board, wire throttled to %d "
              "baud)" % (ACTIONS, BAUD, BAUD))
        print("%-14s %10s %10s %10s %8s %12s %16s" % ("game", "stream KB", "B/record",
                                                       "stream s", "goal", "computed s",
                                                       "archive --once s"))
        for game, (head, actions) in games.items():
            once, stream, nbytes = resync_time(game, head, actions, tmp)
            print("%-14s %10.1f %10.1f %10.2f %8s %12.2f %16.2f" % (
                game, nbytes / 1000, nbytes / (len(actions) + 1), stream, "<= 1.3",
                nbytes * 10 / BAUD, once))
        print("  stream: the `journal` command alone, measured; computed: its measured bytes "
              "at %d baud 8N1;" % BAUD)
        print("  archive --once: hello, clock, journal, state and the SQLite batch, measured.")
        print()
        print("a noisy line: %g %% of bytes corrupted both ways, chalk archive following a "
              "board live" % (NOISE * 100))
        print("%-8s %8s %8s %12s %12s %16s %10s" % ("seed", "records", "play s", "max lag",
                                                    "mean lag", "caught up +s", "missing"))
        for seed in (21, 22):
            n, secs, worst, mean, after, missing = noisy_line(tmp, seed)
            print("%-8d %8d %8.1f %12d %12.1f %16.1f %10d" % (seed, n, secs, worst, mean,
                                                              after, missing))
        print("  lag: records the board has journaled that the archive does not hold yet, "
              "sampled every 0.2 s during play (goal: at most %d)" % LAG_GOAL)


if __name__ == "__main__":
    main()
