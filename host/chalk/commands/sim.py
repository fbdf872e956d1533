"""chalk sim: a simulated board behind a pseudo-terminal, or a trace on a virtual clock."""

import argparse
import json
import re
import signal
import sys
from pathlib import Path

from chalk.errors import ChalkError
from chalk.sim import SIM_HEAP

ORDER = 20


def heap_size(text):
    """argparse type: a MicroPython -X heapsize, bytes with an optional k or m (192k, 1m)."""
    if not re.fullmatch(r"[1-9][0-9]{0,9}[kKmM]?", text):
        raise argparse.ArgumentTypeError(
            "%r is not a heap size: give bytes, or kilobytes/megabytes such as 192k or 1m"
            % text[:40])
    return text


SAMPLE_TRACES = Path(__file__).resolve().parent.parent / "samples" / "traces"


def sample_traces():
    """The names of the sample traces that come with chalk."""
    return sorted(q.stem for q in SAMPLE_TRACES.glob("*.jsonl"))


def trace_path(text):
    """--trace as given: a file, or the name of a sample trace that comes with chalk
    (`--trace NAME`: host/chalk/samples/traces/NAME.jsonl, in the wheel too).
    A file of that name in the current directory comes first."""
    if text is None:
        return None
    p = Path(text)
    if p.exists():
        return text
    samples = SAMPLE_TRACES
    named = samples / (p.name if p.suffix == ".jsonl" else p.name + ".jsonl")
    if len(p.parts) == 1 and named.is_file():
        return str(named)
    raise ChalkError("no sensor trace %s" % text, "give a file, or a sample trace by name: %s"
                     % ", ".join(sample_traces()))


def check_inputs(args):
    """Refuse a bad board config or sensor trace before the board starts (one line naming the
    file and, for a trace, the line), rather than a board that fails at boot and a port on which
    every command then blames the firmware."""
    from chalk import sim
    from scoreboard import boardconfig
    from scoreboard.hal.simtrace import TraceError, check_trace

    cfg_path = sim.board_config(args.board)
    if args.no_install:
        # The board runs the config on its flash as it is.
        flash = Path(args.flash) if args.flash else sim.default_flash(cfg_path.stem)
        cfg_path = flash / "board.json"
        if not cfg_path.is_file():
            return  # an empty flash boots to the REPL: nothing to check
    try:
        cfg = boardconfig.load(str(cfg_path))
    except boardconfig.BoardConfigError as e:
        raise ChalkError("bad board config %s" % e,
                         "fix it (docs/board-config.md explains every key); no board was started"
                         if str(cfg_path) in str(e) else None) from None
    if not args.no_install and (args.game or args.config):
        # The config the board will run: its game (and game config) as asked, if it can.
        cfg = boardconfig.load(json.loads(sim.board_for_game(cfg_path, args.game,
                                                             game_config(args))))
    if not args.trace:
        return
    try:
        with open(args.trace, "rb") as f:
            check_trace(f, boardconfig.line_names(cfg))
    except OSError as e:
        raise ChalkError("cannot read the sensor trace %s: %s" % (args.trace, e.strerror)) \
            from None
    except TraceError as e:
        raise ChalkError("bad sensor trace %s: %s" % (args.trace, e),
                         "docs/sensor-trace.md gives the format; no board was started") from None


def _terminate(signum, frame):
    raise KeyboardInterrupt  # SIGTERM or SIGHUP ends the board like Ctrl-C: its process too


def game_config(args):
    if not args.config:
        return None
    from chalk.commands.new import parse_config

    return parse_config(args.config)


def run(args):
    """Run a simulated board: live behind a pseudo-terminal, or a trace on a virtual clock."""
    from chalk import sim

    args.trace = trace_path(args.trace)
    check_inputs(args)
    if args.virtual:
        if not args.trace:
            raise ChalkError("--virtual plays a trace: give one with --trace FILE")
        # SIGTERM as Ctrl-C: the board's process is killed on the way out (subprocess.run).
        old = {sig: signal.signal(sig, _terminate) for sig in (signal.SIGTERM, signal.SIGHUP)}
        try:
            actions, summary = sim.run_virtual(args.board, args.trace, flash=args.flash,
                                               heap=args.heap, test_mode=args.test_mode,
                                               game=args.game, game_config=game_config(args))
        finally:
            for sig in old:
                signal.signal(sig, old[sig])
        print("simulated %s board, trace %s: %d actions" % (args.board, args.trace,
                                                           len(actions)))
        print("+" + "-" * 16 + "+")
        for row in summary["screen"]:
            print("|%-16s|" % row)
        print("+" + "-" * 16 + "+")
        for w in summary["warnings"]:
            print("warning: %s" % w)
        # The same actions through the host's copy of the rules must give the board's state.
        from scoreboard.rules import new_game

        game = new_game(summary["game"], summary["config"])
        steps = []
        for n, action in enumerate(actions, 1):
            before = game.state()
            steps.append((n, action, before, game.apply(action)))
        if args.sheet:
            from chalk.sheet import scoresheet

            head = {"game": summary["game"], "config": summary["config"]}
            print("\n".join(scoresheet(head, steps, game.state())))
        if game.state() != summary["state"]:
            raise ChalkError("the board's state %s differs from the replay of its journal %s"
                             % (json.dumps(summary["state"]), json.dumps(game.state())))
        print(json.dumps(game.state(), separators=(",", ":")))
        return 0
    board = sim.Sim(args.board, flash=args.flash, trace=args.trace, test_mode=args.test_mode,
                    heap=args.heap, install_firmware=not args.no_install, game=args.game,
                    game_config=game_config(args), keys=args.keys or "")
    # The board's process runs in its own session (Ctrl-C at the terminal must not reach it), so
    # only we can stop it: every way of stopping us goes through board.stop().
    old = {sig: signal.signal(sig, _terminate) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        port = board.start()
        print(port, flush=True)
        print("simulated %s board on %s (flash %s); Ctrl-C stops it" % (
            board.cfg_path.stem, port, board.flash), file=sys.stderr, flush=True)
        _serve(args, board)
    except KeyboardInterrupt:
        pass
    finally:
        for sig in old:  # a second signal must not cut the stopping short
            signal.signal(sig, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            board.stop()
        finally:
            for sig in old:
                signal.signal(sig, old[sig])
            signal.signal(signal.SIGINT, signal.default_int_handler)
    return 0


def _serve(args, board):
    """Until interrupted: with --show, print the board's screen when it changes."""
    import time

    screen = board.flash / "screen.txt"
    last = None
    while True:
        time.sleep(0.25)
        if args.show and screen.exists():
            text = screen.read_text()
            if text != last:
                last = text
                print("\n".join("|%-16s|" % r for r in text.rstrip("\n").split("\n")),
                      file=sys.stderr, flush=True)
                print("-" * 18, file=sys.stderr, flush=True)


def register(sub):
    s = sub.add_parser("sim", help="run a simulated board behind a pseudo-terminal",
                       description="Run the firmware on the MicroPython unix port as a simulated "
                       "board. Prints the device path to use as --port; the flash directory "
                       "(journal, firmware) survives restarts.")
    from chalk.keys import add_keys

    add_keys(s)
    from chalk.sim import board_names
    from scoreboard import games

    s.add_argument("--board", default="five-pins",
                   help="board config: %s, or a .json path" % ", ".join(board_names()))
    s.add_argument("--game", help="the game a scorepad plays (%s; default: its config's)"
                   % ", ".join(games.with_sensor("keypad")))
    s.add_argument("--config", nargs="+", metavar="JSON|KEY=VALUE",
                   help="with --game: that game's config, as for `chalk new`")
    s.add_argument("--flash", help="the board's flash directory (default: in the user's data "
                   "directory, one per board)")
    s.add_argument("--trace", help="a sensor trace (JSON Lines) to play at boot: a file, or a "
                   "sample trace by name (%s)" % ", ".join(sample_traces()))
    s.add_argument("--test-mode", action="store_true",
                   help="accept injected input events and actions over the link")
    s.add_argument("--virtual", action="store_true",
                   help="play --trace on a virtual clock as fast as possible, then print the "
                   "screen and the final state")
    s.add_argument("--show", action="store_true", help="print the board's screen as it changes")
    s.add_argument("--no-install", action="store_true",
                   help="run what is on the flash as it is (an empty flash boots to the REPL, "
                   "like a new ESP32: then `chalk deploy --arch none` puts the firmware on it)")
    s.add_argument("--sheet", action="store_true",
                   help="with --virtual: also print the scoresheet of the game the board kept")
    s.add_argument("--heap", default=SIM_HEAP, type=heap_size,
                   help="MicroPython heap size (default: %(default)s, an ESP32's on 64 bits)")
    s.set_defaults(func=run)
