"""chalk's commands: one module each, with `register(subparsers)` and an ORDER for --help.

Adding a command is adding a module here; cli.py finds it.
"""

import os

PORT_ENV = "CHALK_PORT"


def add_port(parser):
    """The --port option every command that talks to a board takes."""
    parser.add_argument(
        "--port", "-p", default=os.environ.get(PORT_ENV),
        help="the board's serial port (a path such as /dev/ttyUSB0, a pyserial URL, or auto "
        "for the only board attached; default $%s, else auto)" % PORT_ENV)


def positive_seconds(text):
    """argparse type: a number of seconds above 0 (`--every -1` is a usage error, exit 2)."""
    import argparse
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a number of seconds" % text) from None
    if not value > 0 or math.isinf(value):
        raise argparse.ArgumentTypeError("%r: give a number of seconds above 0" % text)
    return value
