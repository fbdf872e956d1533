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

from chalk import games as host_games  # noqa: E402
from chalk.follow import Follower  # noqa: E402
from chalk.randomgame import random_match  # noqa: E402
from chalk.store import Archive, board_records  # noqa: E402
from scoreboard import frames, pack  # noqa: E402

ACTIONS = 1000
WIRE_ACTIONS = 200  # actions played over the link for the bytes figure
BAUD = 115200
# The games the ingest and wire sections measure, each (config, accuracy) of a 1,000-action
# game: their host modules' board_bench.
GAMES = {g.id: g.board_bench for g in host_games.every() if g.board_bench is not None}
# The board the noisy-line section drives: tests/test_archive.py's Play presses its buttons.
NOISY_BOARD = "five-pins"


def long_game(game, n=None):
    """A random legal game lasting exactly n actions (the first seed that does)."""
    n = ACTIONS if n is None else n
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
    board, pad = _board_of(game)
    sim = Sim(board, game=pad, flash=flash, baud=BAUD)
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
        if len(recs) != len(actions) + 1:  # the board could not resume the game (its heap)
            print("  (%s: the board holds %d records, not %d: see its warnings)"
                  % (game, len(recs), len(actions) + 1))
        nbytes = len(tap.data)
        link.close()
        # The whole catch-up as `chalk archive --once` does it: hello, clock, journal, state,
        # into SQLite.
        with Archive(Path(tmp) / ("resync-" + game + ".db"), create=True) as a:
            t = time.perf_counter()
            Follower(a, port, once=True, say=None, reply=5.0).run()
            once = time.perf_counter() - t
    finally:
        sim.stop()
    return once, stream, nbytes


# The noisy line, through `chalk archive` itself (a subprocess with the CLI's own defaults:
# --idle 2, replies within 3 s, reconnection backoff 0.25..5 s) following a simulated board
# whose wire is throttled to 115200 baud and damaged both ways from the first byte.
NOISE_RATES = (0.001, 0.01, 0.03)
NOISE_MODELS = ("bytes", "bits")  # a byte replaced by a random one; one random bit flipped
PACE_MS = 333  # three actions a second
NOISY_SHOTS = 120  # about 40 s of play
RESYNC_CAP_S = 180.0  # a resync still under way then is printed as "> cap"


def noise(model, rate, seed):
    """A wire's damage: each byte, at `rate`, replaced by a random byte ("bytes": line ends,
    control bytes and all) or with one random bit flipped ("bits")."""
    import random

    rng = random.Random(seed)

    def corrupt(data, direction):
        b = bytearray(data)
        for i in range(len(b)):
            if rng.random() < rate:
                if model == "bytes":
                    b[i] = rng.randrange(256)
                else:
                    b[i] ^= 1 << rng.randrange(8)
        return bytes(b)
    return corrupt


def _cli_archive(port, db, once=False, log=None):
    import os
    import subprocess

    cmd = [sys.executable, "-m", "chalk.cli", "archive", "--port", port, "--db", str(db)]
    if once:
        cmd.append("--once")
    return subprocess.Popen(cmd, stdout=log or subprocess.DEVNULL, stderr=subprocess.STDOUT,
                            env=dict(os.environ))


def noisy_live(tmp, model, rate, seed=21):
    """A NOISY_BOARD board playing NOISY_SHOTS quick shots, PACE_MS apart, while `chalk archive`
    follows it over the noisy wire. Returns (records, play s, mean lag, worst lag, first
    record stored at s, longest stall s, caught up s after play or None, missing at the end)."""
    from chalk.sim import Sim
    from tests.test_archive import Play, archive_last_seq, board_config, flash_last_seq

    d = Path(tmp) / ("live-%s-%g-%d" % (model, rate, seed))
    d.mkdir()
    play = Play(seed)
    play.confirm()  # break
    for _ in range(NOISY_SHOTS):
        play.tr.wait(PACE_MS - 180)  # a press takes 180 ms
        play.confirm()
    sim = Sim(board_config(d), flash=d / "flash", trace=play.write(d / "trace.jsonl"),
              baud=BAUD)
    sim.corrupt = noise(model, rate, seed)
    port = sim.start()
    proc = _cli_archive(port, d / "a.db")
    t0 = time.monotonic()
    lags, first, stall, last_move, held = [], None, 0.0, t0, 0
    try:
        while True:
            b, a = flash_last_seq(sim.flash), archive_last_seq(d / "a.db")
            now = time.monotonic()
            if a != held:
                stall = max(stall, now - last_move)
                last_move, held = now, a
                if first is None:
                    first = now - t0
            lags.append((now - t0, b - a))
            if b == play.seq == a or now - t0 > play.seconds + 60:
                break
            time.sleep(0.2)
    finally:
        proc.terminate()
        proc.wait(10)
        sim.stop()
    stall = max(stall, time.monotonic() - last_move if held < play.seq else 0)
    during = [lag for t, lag in lags if t <= play.seconds] or [0]
    done = lags[-1][0] - play.seconds if lags[-1][1] == 0 and held == play.seq else None
    return (play.seq, play.seconds, sum(during) / len(during), max(during), first, stall,
            done, play.seq - held)


def noisy_resync(tmp, game, head, actions, model, rate, seed=5):
    """Seconds `chalk archive --once` (the CLI) takes to archive a board's whole journal over
    the noisy wire (None: not done within RESYNC_CAP_S)."""
    from chalk.sim import Sim

    d = Path(tmp) / ("resync-%s-%s-%g" % (game, model, rate))
    write_journal(d / "flash", head, actions)
    board, pad = _board_of(game)
    sim = Sim(board, game=pad, flash=d / "flash", baud=BAUD)
    if rate:
        sim.corrupt = noise(model, rate, seed)
    port = sim.start()
    try:
        _wait_booted(port, sim)
        t = time.perf_counter()
        proc = _cli_archive(port, d / "a.db", once=True)
        try:
            proc.wait(RESYNC_CAP_S)
            took = time.perf_counter() - t if proc.returncode == 0 else None
        except Exception:
            proc.kill()
            proc.wait()
            took = None
    finally:
        sim.stop()
    return took


def _board_of(game):
    """(board, game) for Sim: the game's own board, else the scorepad playing it."""
    from chalk.sim import BOARDS

    return (game, None) if (BOARDS / (game + ".json")).exists() else ("scorepad", game)


def _wait_booted(port, sim):
    """Until the board has booted (replayed its journal): asked over a clean wire."""
    from chalk.link import BoardLink, open_port

    corrupt, sim.corrupt = sim.corrupt, None
    try:
        link = BoardLink(open_port(port), port)
        try:
            link.hello(timeout=60)
        finally:
            link.close()
    finally:
        sim.corrupt = corrupt


def smoke():
    """Small sizes for `bench.py --smoke` (make test): every section runs, no goal judged."""
    global ACTIONS, WIRE_ACTIONS, NOISE_RATES, NOISE_MODELS, NOISY_SHOTS, RESYNC_CAP_S, SMOKE
    ACTIONS, WIRE_ACTIONS, NOISY_SHOTS, RESYNC_CAP_S = 100, 20, 8, 30.0
    NOISE_RATES, NOISE_MODELS = (0.01,), ("bytes",)
    SMOKE = True


SMOKE = False
# Every game, for the resync section: a 1,000-action game's (config, accuracy), the long
# bench's where a game has no board_bench.
ALL_GAMES = {g.id: g.board_bench or g.long_bench for g in host_games.every()
             if g.random_config is not None}


def any_game(game, n):
    """A random legal game of `game` lasting n actions (or the longest of 40 seeds)."""
    cfg, acc = ALL_GAMES[game]
    best = None
    for seed in range(40):
        head, actions = random_match(game, seed=seed, max_actions=n, config=cfg, accuracy=acc,
                                     players=["Ann", "Bob"])
        if len(actions) == n:
            return head, actions
        if best is None or len(actions) > len(best[1]):
            best = (head, actions)
    return best


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
        print("resync of a %d-action game at %d baud, every game (simulated board, wire "
              "throttled to %d baud)" % (ACTIONS, BAUD, BAUD))
        print("%-14s %8s %10s %10s %10s %8s %12s %16s" % ("game", "actions", "stream KB",
                                                           "B/record", "stream s", "goal",
                                                           "per 1000 s", "archive --once s"))
        clean = {}
        for game in ALL_GAMES:
            head, actions = games[game] if game in games else any_game(game, ACTIONS)
            try:
                once, stream, nbytes = resync_time(game, head, actions, tmp)
            except Exception as e:  # (a board out of heap for that game: said, the rest go on)
                print("%-14s %8d   failed: %s" % (game, len(actions), str(e)[:90]))
                continue
            clean[game] = once
            print("%-14s %8d %10.1f %10.1f %10.2f %8s %12.2f %16.2f" % (
                game, len(actions), nbytes / 1000, nbytes / (len(actions) + 1), stream,
                "<= 1.3", stream * 1000 / len(actions), once))
        print("  stream: the `journal` command alone, measured; per 1000: the stream's time per "
              "1,000 actions (goal 1.3 s);")
        print("  archive --once: hello, clock, journal, state and the SQLite batch, measured.")
        print()
        print("a noisy line, through `chalk archive` with its own defaults, %d baud, damaged "
              "both ways from the first byte" % BAUD)
        print("live: a %s board playing %d actions, %d ms apart; lag: records journaled "
              "on the board, not yet in the archive" % (NOISY_BOARD, NOISY_SHOTS + 1, PACE_MS))
        print("%-6s %6s %9s %6s %9s %6s %8s %9s %6s %11s %8s %14s %9s %9s" % (
            "noise", "rate", "mean lag", "goal", "worst lag", "goal", "first s", "stall s",
            "goal", "caught up s", "missing", "resync 1000 s", "x clean", "goal"))
        head5, act5 = games[NOISY_BOARD]
        for model in NOISE_MODELS:
            for rate in NOISE_RATES:
                n, secs, mean, worst, first, stall, done, missing = noisy_live(tmp, model, rate)
                took = noisy_resync(tmp, NOISY_BOARD, head5, act5, model, rate)
                one = rate == 0.01
                base = clean.get(NOISY_BOARD)
                times = "%.1f" % (took / base) if took is not None and base else "-"
                print("%-6s %5.1f%% %9.1f %6s %9d %6s %8s %9.1f %6s %11s %8d %14s %9s %9s" % (
                    model, rate * 100, mean, "<= 15" if one else "", worst,
                    "<= 50" if one else "", "%.1f" % first if first is not None else "never",
                    stall, "<= 10" if rate == 0.03 else "",
                    "%.1f" % done if done is not None else "no", missing,
                    "%.1f" % took if took is not None else "> %d" % RESYNC_CAP_S, times,
                    "<= 10x" if one else ""))
        print("  first: when the archive stored its first record; stall: the longest time it "
              "stood still while")
        print("  the board played on; resync 1000: `chalk archive --once` of a %d-action journal "
              "over that line" % len(act5))
        print("  (goal: 10x its clean-line time). Goals judged in `make bench` only, not in the "
              "smoke run.")


if __name__ == "__main__":
    main()
