"""The board's game as text for a terminal: what `chalk watch` and `chalk new` print.

render() turns the board's `state` result (docs/serial-protocol.md) into lines: the game, the
score, who is on move, the last action and every warning (a peg mismatch, a stuck or chattering
sensor, an action the rules refused). one_line() is the same on one line, for logs and pipes.
"""

import json
import sys
import time

from chalk import games, link, remote, views
from chalk.games import common
from chalk.text import printable
from scoreboard import frames

CLEAR = "\x1b[H\x1b[2J"  # cursor home, clear screen: plain ANSI, any terminal has it


def player_name(players, i, default):
    return printable(common.entry(players, i, default))


def _on_move(g, st, names):
    def who(i):
        return names[i] if type(i) is int and 0 <= i < len(names) else printable(i)

    if st.get("winner") == "draw":
        return "a draw"
    if st.get("winner") is not None:
        return "winner: %s" % who(st["winner"])
    if g.turnless:
        return "next: the next %s" % g.turnless
    if st.get("next") is None:
        return "to start: " + g.waiting
    extra = ", ball in hand" if st.get("ball_in_hand") else ""
    return "on move: %s%s" % (who(st["next"]), extra)


def _game(status):
    """(HostGame, names escaped for the terminal, config) of a status."""
    g = games.get(status.get("game"))
    config = status.get("config") if type(status.get("config")) is dict else {}
    names = [printable(n) for n in g.side_names(status.get("players") or [], config)]
    return g, names, config


def _title(status, g, config):
    # The game by its id, as the commands name it (`chalk new --game ID`); the pages show its
    # name in words.
    return status.get("game") or "no game"


def render(status, port=None):
    """The board's state result as lines of text."""
    g, names, config = _game(status)
    st = status.get("state")
    head = "%s, game %s" % (_title(status, g, config), status.get("game_no"))
    if st is None:
        return [head + (" on %s" % port if port else ""), "no game in progress"]
    try:
        where, rows = g.watch_rows(st, names)
    except (KeyError, TypeError, ValueError, IndexError):  # a state the game does not know
        where, rows = common.HostGame.watch_rows(g, st, names)
    if where:
        head += ", " + where
    lines = [head + (" on %s" % port if port else ""), ""] + rows + ["", _on_move(g, st, names)]
    said = views.words(status)
    if said["last"]:
        lines.append("last: %s" % printable(said["last"]))
    if said["note"]:
        lines.append("now: %s" % printable(said["note"]))
    for w in said["notices"] + said["warnings"]:
        lines.append("! %s" % printable(w))
    gauge = gauge_line(status)
    if gauge:
        lines.append(gauge)
    return lines


def gauge_line(g):
    """The board's heap and time gauge in words (views.gauge_words); None for a board that
    does not report it."""
    return views.gauge_words(g) or None


def one_line(status):
    """The same in one line: game, score, who is on move, last action, warnings."""
    g, names, config = _game(status)
    st = status.get("state")
    if st is None:
        return "%s: no game in progress" % _title(status, g, config)
    try:
        score = g.watch_score(st, names)
    except (KeyError, TypeError, ValueError, IndexError):
        score = common.HostGame.watch_score(g, st, names)
    parts = ["%s game %s" % (_title(status, g, config), status.get("game_no")), score,
             _on_move(g, st, names)]
    said = views.words(status)
    if said["last"]:
        parts.append("last: %s" % printable(said["last"]))
    parts += ["! %s" % printable(w) for w in said["notices"] + said["warnings"]]
    if isinstance(status.get("mem_free"), int):
        parts.append("heap %dK free" % (status["mem_free"] // 1024))
    return " | ".join(parts)


def raw_line(line, parts):
    """`chalk watch --raw`: a line as it came, then what it stands for (compact v2 frames
    decoded into the rec/state JSON of protocol 1), or why it was not taken."""
    text = line.decode("utf-8", "replace")
    if type(parts) is str:
        return "%s\n    (%s)" % (text, parts)
    return "\n".join([text] + ["    %s %s" % (typ, json.dumps(payload, ensure_ascii=False,
                                                                sort_keys=True))
                                for typ, payload in parts])


BEAT_LOST = 1.5  # seconds without a frame: a heartbeat (one a second) missed, and a half


def not_scoring(board, now=None):
    """Why the board is not scoring, in words for the staff (what to check), or None while it
    is: its heartbeat says it shows the service view or its app stopped, or nothing came for
    BEAT_LOST seconds (stopped, frozen, unplugged). A board reached through `chalk serve`: the
    server's own view of the table (it watches the line)."""
    condition = getattr(board, "condition", None)
    if condition is not None:
        state, why = condition()
        return None if state == "scoring" else why
    if not hasattr(board, "heard"):
        return None
    now = time.monotonic() if now is None else now
    heard = board.heard
    beat = getattr(board, "beat", None)
    mode = beat[1].get("mode", "scoring") if beat is not None else "scoring"
    if mode == "repl" or heard is None or now - heard > BEAT_LOST:
        said = [ln for ln in getattr(board, "noise", ()) if ln.strip()]
        if mode == "repl" or any(">>>" in ln or "Traceback" in ln or "MicroPython" in ln or
                                 "KeyboardInterrupt" in ln for ln in said[-5:]):
            return "the board is at the MicroPython REPL: the scoreboard app is not running " \
                "\u2014 press the board's reset button (or Ctrl-D in mpremote)"
        if mode == "stopped":
            return _STOPPED
        if heard is None:
            return "the board does not answer \u2014 check its USB cable and that it has power"
        return "the board does not answer (no heartbeat for %d s) \u2014 check its USB cable " \
            "and that it has power" % (now - heard)
    if mode == "stopped":
        return _STOPPED
    if mode == "service":
        return "the board shows the service view \u2014 a long press of undo on the board (or " \
            "`chalk service --off`) goes back to the game"
    if mode != "scoring":
        return "the board is in %s mode, not scoring" % printable(mode)
    return None


_STOPPED = "the scoreboard app on the board stopped on an error \u2014 see it with `mpremote " \
    "connect PORT repl`, then press the board's reset button"


def watch(port=None, once=False, out=None, tty=None, timeout=5.0, stop=None, raw=False):
    """Show the board's game, redrawn whenever the board reports a change, until Ctrl-C (or
    until `stop`, a threading.Event, is set).

    On a terminal the screen is redrawn in place; otherwise one line per change (with a time
    of day), so the output can be logged. A board that stops scoring (at the REPL, in the
    service view, silent) is shown as NOT SCORING, with why, within BEAT_LOST seconds.
    `once`: show it once and return. `raw`: every line from the board as it came, each frame
    decoded under it."""
    out = out or sys.stdout
    tty = out.isatty() if tty is None else tty
    if raw:
        return _watch_raw(port, out, timeout)
    with remote.connect(port, timeout=timeout) as board:
        status = board.request("state", timeout=timeout)
        if once:
            out.write("\n".join(render(status, board.port)) + "\n")
            why = not_scoring(board)
            if why is None and status.get("mode") == "service":
                why = "the board shows the service view"
            if why:
                out.write("NOT SCORING: %s\n" % why)
            return status

        def show(status, note=None, why=None):
            if tty:
                lines = render(status, board.port)
                if why:
                    lines = ["NOT SCORING: %s" % why, "(the last score the board sent:)"] + lines
                if note:
                    lines.append(note)
                lines += ["", "watching %s; Ctrl-C to stop" % board.port]
                out.write(CLEAR + "\n".join(lines) + "\n")
            elif why:
                out.write("%s NOT SCORING: %s\n" % (time.strftime("%H:%M:%S"), why))
            else:
                out.write("%s %s%s\n" % (time.strftime("%H:%M:%S"), one_line(status),
                                         " | " + note if note else ""))
            out.flush()

        show(status)
        shown_why = None
        restarted = False
        try:
            while stop is None or not stop.is_set():
                f = board.poll(0.25)
                if f is not None and f.type == "boot":
                    restarted = True
                why = not_scoring(board)
                if why is not None:
                    if why != shown_why:
                        shown_why = why
                        show(status, why=why)
                    continue
                if f is None and shown_why is None:
                    continue
                if f is not None and f.type not in ("state", "warn", "boot") and \
                        shown_why is None:
                    continue
                try:
                    status = board.request("state", timeout=timeout)
                except link.NoReply:
                    continue  # it stopped meanwhile: the heartbeat's silence tells why
                note = "(the board restarted)" if restarted else None
                restarted = False
                shown_why = None
                show(status, note)
        except KeyboardInterrupt:
            pass
    return None


def _watch_raw(port, out, timeout):
    def show(line, parts):
        out.write(raw_line(line, parts) + "\n")
        out.flush()

    with remote.connect(port, timeout=timeout) as board:
        board.on_line = show
        out.write("watching %s raw (protocol %d); Ctrl-C to stop\n"
                  % (board.port, frames.VERSION))
        out.flush()
        try:
            for _ in board.frames():
                pass
        except KeyboardInterrupt:
            pass
    return None
