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
