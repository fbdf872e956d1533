"""The `chalk` command line: thin commands over the library, one error type for the user."""

import argparse
import json
import sys

from chalk import __version__, logs, sheet
from chalk.errors import ChalkError

SIM_HEAP = "192k"  # chalk.sim.SIM_HEAP, without importing the simulator for every command


def cmd_replay(args):
    """Replay a match log through the rules: print the final state, or the scoresheet."""
    log = logs.load(args.log, skip_bad=args.skip_bad)
    steps = []
    before = [logs.matchlog.new_game(log.header).state()] if args.sheet else None

    def keep(n, rec, state):
        steps.append((n, rec, before[0], state))
        before[0] = state

    game = logs.replay(args.log, log, keep if args.sheet else None)
    if args.sheet:
        print("\n".join(sheet.scoresheet(log.header, steps, game.state())))
    else:
        print(json.dumps(game.state(), separators=(",", ":")))
    return 0


def cmd_sim(args):
    """Run a simulated board: live behind a pseudo-terminal, or a trace on a virtual clock."""
    from chalk import sim

    if args.virtual:
        if not args.trace:
            raise ChalkError("--virtual plays a trace: give one with --trace FILE")
        actions, summary = sim.run_virtual(args.board, args.trace, flash=args.flash,
                                           heap=args.heap, test_mode=args.test_mode)
        print("simulated %s board, trace %s: %d actions" % (args.board, args.trace,
                                                           len(actions)))
        print("+" + "-" * 16 + "+")
        for row in summary["screen"]:
            print("|%-16s|" % row)
        print("+" + "-" * 16 + "+")
        for w in summary["warnings"]:
            print("warning: %s" % w)
        print(json.dumps(summary["state"], separators=(",", ":")))
        return 0
    board = sim.Sim(args.board, flash=args.flash, trace=args.trace, test_mode=args.test_mode,
                    heap=args.heap)
    port = board.start()
    print(port, flush=True)
    print("simulated %s board on %s (flash %s); Ctrl-C stops it" % (
        board.cfg_path.stem, port, board.flash), file=sys.stderr, flush=True)
    screen = board.flash / "screen.txt"
    last = None
    try:
        import time

        while True:
            time.sleep(0.25)
            if args.show and screen.exists():
                text = screen.read_text()
                if text != last:
                    last = text
                    print("\n".join("|%-16s|" % r for r in text.rstrip("\n").split("\n")),
                          file=sys.stderr, flush=True)
                    print("-" * 18, file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        board.stop()
    return 0


def build_parser():
    p = argparse.ArgumentParser(
        prog="chalk", description="Chalk: automatic scoreboards for pub tables.")
    p.add_argument("--version", action="version", version="chalk " + __version__)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    r = sub.add_parser("replay", help="replay a match log and print its final state",
                       description="Replay a match log (v1) through the rules. Prints the final "
                       "state as one JSON object and exits 0; exits 1 naming the line and rule if "
                       "the log breaks a rule, 2 if it cannot be read.")
    r.add_argument("log", help="match log file (JSON Lines), or - for standard input")
    r.add_argument("--sheet", action="store_true",
                   help="print a readable scoresheet: the state after every action")
    r.add_argument("--skip-bad", action="store_true",
                   help="replay the good lines of a log with malformed ones (reported on stderr)")
    r.set_defaults(func=cmd_replay)

    s = sub.add_parser("sim", help="run a simulated board behind a pseudo-terminal",
                       description="Run the firmware on the MicroPython unix port as a simulated "
                       "board. Prints the device path to use as --port; the flash directory "
                       "(journal, firmware) survives restarts.")
    s.add_argument("--board", default="five-pins",
                   help="board config: five-pins, shove-hapenny, or a .json path")
    s.add_argument("--flash", help="the board's flash directory (default: in the user's data "
                   "directory, one per board)")
    s.add_argument("--trace", help="a sensor trace (JSON Lines) to play at boot")
    s.add_argument("--test-mode", action="store_true",
                   help="accept injected input events and actions over the link")
    s.add_argument("--virtual", action="store_true",
                   help="play --trace on a virtual clock as fast as possible, then print the "
                   "screen and the final state")
    s.add_argument("--show", action="store_true", help="print the board's screen as it changes")
    s.add_argument("--heap", default=SIM_HEAP,
                   help="MicroPython heap size (default: %(default)s, an ESP32's on 64 bits)")
    s.set_defaults(func=cmd_sim)
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ChalkError as e:
        print("chalk: %s" % e.message, file=sys.stderr)
        if e.hint:
            print("chalk: hint: %s" % e.hint, file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
