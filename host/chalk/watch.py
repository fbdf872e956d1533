"""The board's game as text for a terminal: what `chalk watch` and `chalk new` print.

render() turns the board's `state` result (docs/serial-protocol.md) into lines: the game, the
score, who is on move, the last action and every warning (a peg mismatch, a stuck or chattering
sensor, an action the rules refused). one_line() is the same on one line, for logs and pipes.
"""

import json
import sys
import time

from chalk import link
from chalk.text import printable
from scoreboard import frames

CLEAR = "\x1b[H\x1b[2J"  # cursor home, clear screen: plain ANSI, any terminal has it


def player_name(players, i, default):
    p = players[i] if i < len(players) else None
    if type(p) is list:
        return printable(" & ".join(str(x) for x in p))
    return printable(p) if p else default


def _five_pins(st, players):
    names = [player_name(players, i, "P%d" % (i + 1)) for i in (0, 1)]
    w = max(len(n) for n in names)
    rows = ["  %-*s  score  sets" % (w, "")]
    for p in (0, 1):
        mark = ">" if st["next"] == p else " "
        extra = ""
        if st["breaker"] == p and st["next"] is None and st["winner"] is None:
            extra = "   breaks"
        rows.append("%s %-*s  %5d  %4d%s" % (mark, w, names[p], st["scores"][p], st["sets"][p],
                                              extra))
    return "set %d" % st["set"], names, rows


def _shove(st, players):
    names = [player_name(players, i, "AB"[i]) for i in (0, 1)]
    w = max(len(n) for n in names)
    rows = ["  %-*s  %s  total" % (w, "", " ".join("123456789"))]
    for side in (0, 1):
        mark = ">" if st["next"] == side else " "
        beds = " ".join(str(n) if n else "." for n in st["beds"][side])
        extra = "   misses the next turn" if st["skip"][side] else ""
        rows.append("%s %-*s  %s  %5d%s" % (mark, w, names[side], beds, sum(st["beds"][side]),
                                             extra))
    return "turn %d" % st["turns"], names, rows


def _seven_pins(st, players):
    names = [player_name(players, i, "P%d" % (i + 1)) for i in (0, 1)]
    w = max(len(n) for n in names)
    rows = ["  %-*s  to go" % (w, "")]
    for p in (0, 1):
        mark = ">" if st["next"] == p else " "
        rows.append("%s %-*s  %5d" % (mark, w, names[p], st["totals"][p]))
    return "", names, rows


def _novuss(st, players):
    names = [player_name(players, i, "AB"[i]) for i in (0, 1)]
    w = max(len(n) for n in names)
    rows = ["  %-*s  left  owes" % (w, "")]
    for side in (0, 1):
        mark = ">" if st["next"] == side else " "
        rows.append("%s %-*s  %4d  %4d" % (mark, w, names[side], st["left"][side],
                                            st["debt"][side]))
    return "", names, rows


def _texas_42(st, players):
    if len(players) == 4 and all(type(p) is str for p in players):
        names = [printable("%s & %s" % (players[0], players[2])),
                 printable("%s & %s" % (players[1], players[3]))]
    else:
        names = [player_name(players, i, ("P1 & P3", "P2 & P4")[i]) for i in (0, 1)]
    w = max(len(n) for n in names)
    rows = ["  %-*s  score" % (w, "")] + ["  %-*s  %5d" % (w, names[i], st["scores"][i])
                                         for i in (0, 1)]
    return "hand %d" % (st["hands"] + 1), names, rows


def _domino_bingo(st, players):
    names = [player_name(players, i, "P%d" % (i + 1)) for i in (0, 1)]
    w = max(len(n) for n in names)
    rows = ["  %-*s  big points" % (w, "")] + ["  %-*s  %10d" % (w, names[i], st["big"][i])
                                              for i in (0, 1)]
    return "hand %d" % (st["hands"] + 1), names, rows


def _tally(st, players):
    names = [player_name(players, i, "P%d" % (i + 1)) for i in range(len(st["counts"]))]
    w = max(len(n) for n in names)
    rows = ["  %-*s  %5d" % (w, names[i], c) for i, c in enumerate(st["counts"])]
    return "", names, rows


def _generic(st, players):
    names = [player_name(players, i, "side %d" % i) for i in range(max(len(players), 2))]
    return "", names, ["  %s: %s" % (k, st[k]) for k in sorted(st)]


GAMES = {"five-pins": _five_pins, "shove-hapenny": _shove, "texas-42": _texas_42,
         "domino-bingo": _domino_bingo, "tally": _tally}
TURNLESS = ("texas-42", "domino-bingo", "tally")  # any side or player may score next
GAMES["seven-pins"] = _seven_pins
GAMES["novuss"] = _novuss
TO_START = {"seven-pins": "the break (SP-15)", "novuss": "which side shoots first"}


def _on_move(game, st, names):
    if st.get("winner") == "draw":
        return "a draw"
    if st.get("winner") is not None:
        return "winner: %s" % names[st["winner"]]
    if game in TURNLESS:
        return "next: the next %s" % ("count" if game == "tally" else "hand")
    if st.get("next") is None:
        if game in TO_START:
            return "to start: " + TO_START[game]
        return "to start: " + ("the break (FP-7)" if game == "five-pins" else
                               "who shoots first (SH-5)")
    extra = ", ball in hand" if st.get("ball_in_hand") else ""
    return "on move: %s%s" % (names[st["next"]], extra)


def render(status, port=None):
    """The board's state result as lines of text."""
    game = status.get("game") or "no game"
    st = status.get("state")
    players = status.get("players") or []
    head = "%s, game %s" % (game, status.get("game_no"))
    if st is None:
        return [head + (" on %s" % port if port else ""), "no game in progress"]
    where, names, rows = GAMES.get(game, _generic)(st, players)
    if where:
        head += ", " + where
    lines = [head + (" on %s" % port if port else ""), ""] + rows + ["", _on_move(game, st,
                                                                                 names)]
    if status.get("last"):
        lines.append("last: %s" % status["last"])
    if status.get("note"):
        lines.append("now: %s" % status["note"])
    for w in status.get("warnings") or []:
        lines.append("! %s" % w)
    g = gauge_line(status)
    if g:
        lines.append(g)
    return lines


def gauge_line(g):
    """The board's heap and time gauge (state and service replies: mem_free, mem_block, gap_ms,
    step_ms) in words; None for a board that does not report it."""
    if not isinstance(g, dict) or not isinstance(g.get("mem_free"), int):
        return None
    text = "board: %d KB of heap free" % (g["mem_free"] // 1024)
    if isinstance(g.get("mem_block"), int):
        text += " (largest block %d KB)" % (g["mem_block"] // 1024)
    if isinstance(g.get("gap_ms"), int):
        text += ", longest gap between scans %d ms" % g["gap_ms"]
    if isinstance(g.get("step_ms"), int):
        text += ", longest step %d ms" % g["step_ms"]
    return text


def one_line(status):
    """The same in one line: game, score, who is on move, last action, warnings."""
    st = status.get("state")
    game = status.get("game") or "no game"
    if st is None:
        return "%s: no game in progress" % game
    players = status.get("players") or []
    if game == "five-pins":
        names = [player_name(players, i, "P%d" % (i + 1)) for i in (0, 1)]
        score = "set %d: %s %d (%d) - %s %d (%d)" % (
            st["set"], names[0], st["scores"][0], st["sets"][0], names[1], st["scores"][1],
            st["sets"][1])
    elif game == "shove-hapenny":
        names = [player_name(players, i, "AB"[i]) for i in (0, 1)]
        score = "turn %d: %s %s - %s %s" % (
            st["turns"], names[0], "".join(map(str, st["beds"][0])), names[1],
            "".join(map(str, st["beds"][1])))
    elif game == "seven-pins":
        names = [player_name(players, i, "P%d" % (i + 1)) for i in (0, 1)]
        score = "to go: %s %d - %s %d" % (names[0], st["totals"][0], names[1], st["totals"][1])
    elif game == "novuss":
        names = [player_name(players, i, "AB"[i]) for i in (0, 1)]
        score = "left: %s %d (owes %d) - %s %d (owes %d)" % (
            names[0], st["left"][0], st["debt"][0], names[1], st["left"][1], st["debt"][1])
    elif game in GAMES:
        _, names, rows = GAMES[game](st, players)
        score = ", ".join(" ".join(r.split()) for r in rows
                          if r.strip() and not r.strip().endswith(("score", "points")))
    else:
        names = [player_name(players, i, "side %d" % i) for i in range(max(len(players), 2))]
        score = " ".join("%s=%s" % (k, st[k]) for k in sorted(st))
    parts = ["%s game %s" % (game, status.get("game_no")), score, _on_move(game, st, names)]
    if status.get("last"):
        parts.append("last: %s" % status["last"])
    parts += ["! %s" % w for w in status.get("warnings") or []]
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


BEAT_LOST = 3.0  # seconds without a frame (the board sends one at least every second)


def not_scoring(board, now=None):
    """Why the board is not scoring, or None while it is: its heartbeat says it shows the
    service view, or nothing came for BEAT_LOST seconds (at the REPL, stopped, unplugged)."""
    if not hasattr(board, "heard"):
        return None  # a board reached through `chalk serve`: the server watches its line
    now = time.monotonic() if now is None else now
    heard = board.heard
    if heard is None or now - heard > BEAT_LOST:
        silent = now - heard if heard is not None else None
        said = [ln for ln in getattr(board, "noise", ()) if ln.strip()]
        if any(">>>" in ln or "Traceback" in ln or "MicroPython" in ln or "KeyboardInterrupt"
               in ln for ln in said[-5:]):
            return "the board is at the MicroPython REPL: the app is not running"
        if silent is None:
            return "no reply from the board"
        return "no reply from the board for %d s (no heartbeat): the app stopped, or the " \
               "cable is out" % silent
    if getattr(board, "beat", None) is not None and \
            board.beat[1].get("mode", "scoring") != "scoring":
        mode = board.beat[1].get("mode")
        if mode == "repl":
            return "the board is at the MicroPython REPL: the app is not running"
        if mode == "stopped":
            return "the app stopped (an error: see it with `mpremote connect PORT repl`)"
        if mode == "service":
            return "the board shows the service view (a long press of undo, or `chalk " \
                   "service --off`, goes back to the game)"
        return "the board is in %s mode" % board.beat[1].get("mode")
    return None


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
    with link.connect(port, timeout=timeout) as board:
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

    with link.connect(port, timeout=timeout) as board:
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
