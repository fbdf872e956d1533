"""Match logs on the host: open a file, read it leniently, replay it through the rules."""

import sys

from chalk.errors import ChalkError
from scoreboard import matchlog

# Exit codes of `chalk replay`: a log the rules refuse, and a log that cannot be read.
RULE_BROKEN = 1
UNREADABLE = 2


def open_lines(path):
    """The lines of a match log file ('-' for standard input); ChalkError (exit 2) if it cannot
    be read as UTF-8 text."""
    try:
        if path == "-":
            return sys.stdin.buffer.read().decode("utf-8").splitlines()
        with open(path, encoding="utf-8") as f:
            return f.read().splitlines()
    except FileNotFoundError:
        raise ChalkError("no such match log: %s" % path, "check the path",
                         code=UNREADABLE) from None
    except IsADirectoryError:
        raise ChalkError("%s is a directory, not a match log" % path, code=UNREADABLE) from None
    except UnicodeDecodeError as e:
        raise ChalkError("%s is not UTF-8 text (byte %d): not a match log" % (path, e.start),
                         code=UNREADABLE) from None
    except OSError as e:
        raise ChalkError("cannot read %s: %s" % (path, e.strerror), code=UNREADABLE) from None


def load(path, skip_bad=False):
    """Read a log; every bad line becomes one ChalkError unless skip_bad (then warn on stderr)."""
    log = matchlog.read(open_lines(path))
    if log.problems:
        lines = ["%s:%d: %s" % (path, n, text) for n, text in log.problems]
        header_bad = any(n == 1 for n, _ in log.problems) or log.header is None
        if not skip_bad or header_bad:
            raise ChalkError(
                "%s has %d bad line%s:\n  %s" % (path, len(lines), "" if len(lines) == 1 else "s",
                                                  "\n  ".join(lines)),
                None if header_bad else "--skip-bad replays the good lines anyway",
                code=UNREADABLE,
            )
        for line in lines:
            print("chalk: skipped %s" % line, file=sys.stderr)
    return log


def replay(path, log, on_step=None):
    """Replay a read log; a refused action becomes a ChalkError naming the line and rule."""
    try:
        return matchlog.replay(log, on_step)
    except matchlog.LineError as e:
        raise ChalkError("%s %s" % (path, e), code=RULE_BROKEN) from None
