"""chalk board check: validate a board config on the host, with the firmware's own rules."""

ORDER = 60


def run(args):
    from chalk import hardware

    for path in args.files:
        print("\n".join(hardware.board_check(path)))
    return 0


def register(sub):
    b = sub.add_parser("board", help="check a board config (pins, timings, game)",
                       description="Board configs: `chalk board check FILE...` applies the "
                       "checks the firmware makes at boot (flash pins 6-11, input-only 34-39 "
                       "without pull-ups, strapping pins, pins used twice, unknown keys) and "
                       "prints advice; exits 1 naming the first problem.")
    bsub = b.add_subparsers(dest="board_command", metavar="ACTION")
    bsub.required = True
    c = bsub.add_parser("check", help="validate board config files")
    c.add_argument("files", nargs="+", metavar="FILE", help="board config (.json)")
    c.set_defaults(func=run)
