"""The `chalk` command line: thin commands over the library, one error type for the user."""

import argparse
import importlib
import pkgutil
import sys

from chalk import __version__, commands
from chalk.errors import ChalkError
from chalk.text import printable


def build_parser():
    p = argparse.ArgumentParser(
        prog="chalk", description="Chalk: automatic scoreboards for pub tables.")
    p.add_argument("--version", action="version", version="chalk " + __version__)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    mods = [importlib.import_module("chalk.commands." + m.name)
            for m in pkgutil.iter_modules(commands.__path__)]
    for mod in sorted(mods, key=lambda m: (getattr(m, "ORDER", 100), m.__name__)):
        mod.register(sub)
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ChalkError as e:
        # Messages quote names and lines from outside: no escape sequence reaches the terminal.
        print("chalk: %s" % printable(e.message, keep_newlines=True), file=sys.stderr)
        if e.hint:
            print("chalk: hint: %s" % printable(e.hint, keep_newlines=True), file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
