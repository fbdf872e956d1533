"""chalk deploy: copy the Chalk app onto a board with mpremote."""

from chalk import build, deploy, link
from chalk.commands import add_port

ORDER = 50


def run(args):
    """Compile, copy, reset, and check the board answers."""
    from chalk.sim import board_config

    arch = build.parse_arch(args.arch)  # before the port: a typo is told at once
    port = link.resolve_port(args.port)
    cfg = board_config(args.board) if args.board else None
    info = deploy.deploy(port, cfg, mode="source" if args.source else "mpy", arch=arch,
                         out=lambda line: print(line, flush=True),
                         keys=args.keys,
                         romfs={"auto": None, "yes": True, "no": False}[args.romfs])
    print("the board answers: Chalk firmware %s, board %s, game %s%s" % (
        info.get("firmware"), info.get("board"), info.get("game"),
        ", test mode" if info.get("test_mode") else ""))
    return 0


def register(sub):
    p = sub.add_parser("deploy", help="copy the Chalk app onto a board (mpremote)",
                       description="Copy the Chalk app onto a board running MicroPython: the "
                       "scoreboard package (compiled to .mpy, or as .py sources) to "
                       "/lib/scoreboard, main.py, and the board config as /board.json; then "
                       "reset the board and check that the app answers. The board's journal "
                       "is left alone. The board makes its own signing key at its first boot "
                       "and keeps it; its public half is enrolled in the key store (chalk keys "
                       "enrol).")
    add_port(p)
    what = p.add_mutually_exclusive_group()
    what.add_argument("--mpy", action="store_true",
                      help="copy compiled bytecode (the default: less RAM at boot)")
    what.add_argument("--source", action="store_true", help="copy the .py sources instead")
    p.add_argument("--arch", default=build.ESP32_ARCH,
                   help="mpy-cross architecture: xtensawin for an ESP32 (default), none for "
                   "portable bytecode (the simulated board)")
    p.add_argument("--romfs", choices=("auto", "yes", "no"), default="auto",
                   help="put the bytecode in the board's ROMFS partition, run in place from "
                   "flash like frozen code (auto: when the firmware has one, else .mpy files "
                   "on the filesystem; yes: ROMFS or an error; no: the filesystem)")
    from chalk.sim import board_names

    p.add_argument("--board", metavar="CONFIG",
                   help="board config to copy as /board.json: %s, or a .json path (default: "
                   "keep the board's own)" % ", ".join(board_names()))
    from chalk.keys import add_keys

    add_keys(p)
    p.set_defaults(func=run)
