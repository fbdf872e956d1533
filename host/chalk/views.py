"""What a scoreboard shows of a game, worked out from the board's state reply alone.

view() turns a board's `state` result (docs/serial-protocol.md) into a plain dict the web page
draws: one row per side (name as the board shows it, score, a detail line, on move, winner), the
game's name and race in words, its headline (set, turn, hand), who is on move, the last action
in words with the players' names, its fouls, plain-word notices for staff (what to do about a
peg mismatch or a stuck sensor) and the warnings. Each game's words come from its host module
(chalk/games/); a game with no module is shown from its state's shape, so it still shows.

words() is the same words for `chalk watch`: names as given (the terminal escapes them), no
bidi isolates.
"""

from chalk import games
from chalk.games import common

SCORE_KEYS = common.SCORE_KEYS


def player_name(players, i, default):
    return common.entry(players, i, default)


def side_names(players, k):
    """Names of k sides, players named one by one sitting alternately (a game with no module
    of its own; a game's module names its sides as its board does)."""
    return common.alternate_names(players or [], k)


def score(game, st):
    """Each side's score as one number, for charts and statistics."""
    return games.get(game).score(st) if st else []


def names_of(status):
    """The sides' names of a status (or a match-log header: players and config)."""
    g = games.get(status.get("game"))
    return g.side_names(status.get("players") or [], status.get("config") or {})


def last_words(status, names):
    """(text, fouls) of the status's latest action, or ("", []) when it has none (a new game,
    a board without it): the board's own short text is never passed on."""
    rec = status.get("rec")
    after = status.get("state")
    g = games.get(status.get("game"))
    if "rec" not in status and type(status.get("last")) is str and type(after) is dict:
        try:  # a board whose reply has only its own short text: what that stands for
            rec = g.parse_last(status["last"], after)
        except (KeyError, TypeError, ValueError, IndexError):
            rec = None
    if type(rec) is not dict or type(after) is not dict:
        return "", []
    before = status.get("before") if type(status.get("before")) is dict else None
    config = status.get("config") if type(status.get("config")) is dict else {}
    return describe(g, rec, before, after, names, config, status.get("undid"))


def describe(g, rec, before, after, names, config, undid=None):
    """One action in words: (text, fouls). An undo is said as what it took back (the action
    `undid`, which led from the state after the undo to the one before it). Anything that does
    not fit the game's vocabulary (a board speaking another firmware) gives ("", [])."""
    try:
        if rec.get("a") == "undo":
            if type(undid) is dict and g.valid(undid, config):
                text, _fouls = g.describe(undid, after, before, names, config)
                return "Undone: " + text, []
            return "Undone: the action before", []
        if not g.valid(rec, config):
            return "", []
        return g.describe(rec, before, after, names, config)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        return "", []


def gauge_words(g, short=False):
    """The board's heap and time gauge (state and service replies: mem_free, mem_block, gap_ms,
    step_ms, lost, docs/serial-protocol.md) in words, or "" for a board that does not report it.
    `short`: in one line of a phone's small print (the table's page)."""
    if not isinstance(g, dict) or type(g.get("mem_free")) is not int:
        return ""
    words = (("board: %d KB free", " (block %d KB)", ", scan gap %d ms", ", step %d ms")
             if short else ("board: %d KB of heap free", " (largest block %d KB)",
                            ", longest gap between scans %d ms", ", longest step %d ms"))
    text = words[0] % (g["mem_free"] // 1024)
    if type(g.get("mem_block")) is int:
        text += words[1] % (g["mem_block"] // 1024)
    for key, form in (("gap_ms", words[2]), ("step_ms", words[3])):
        if type(g.get(key)) is int:
            text += form % g[key]
    lost = g.get("lost")
    if type(lost) is int and lost > 0:
        # The loop fell so far behind that the ring of input samples filled: a press or a
        # release may have been merged with the next one. A fault of the board, said plainly.
        text += (", %d input samples lost" if short else
                 ", %d input samples lost (the board fell behind: report it)") % lost
    return text


def words(status, page=False):
    """The status in words: last (the latest action), last_fouls, note (what is being entered
    now, or ""), notices (for staff: what to do) and warnings. `page`: names wrapped in bidi
    isolates where they could reorder the sentence around them."""
    g = games.get(status.get("game"))
    config = status.get("config") if type(status.get("config")) is dict else {}
    names = g.side_names(status.get("players") or [], config)
    if page:
        names = [common.isolate(n) for n in names]
    st = status.get("state") if type(status.get("state")) is dict else None
    text, fouls = last_words(status, names)
    notices = []
    warnings = []
    for w in status.get("warnings") or []:
        w = str(w)
        said = None
        try:
            said = g.warning_words(w, st, names)
        except (KeyError, TypeError, ValueError, IndexError):
            said = None
        kind, line = said or common.warning_in_words(w)
        (notices if kind == "notice" else warnings).append(line)
    note = str(status.get("note") or "")
    try:
        notices = g.more_notices(notices, st, names, note)
        note_words = g.note_words(note, st, names)
    except (KeyError, TypeError, ValueError, IndexError):
        note_words = ""
    return {"last": text, "last_fouls": fouls, "note": note_words, "notices": notices,
            "warnings": warnings}


def view(status, table=None, scoring=True, why=None):
    """The board's state result as a dict to draw: see the module doc. `scoring` False (with
    `why`) marks a board that is not keeping the score now (no connection, service view)."""
    status = status or {}
    game = status.get("game")
    g = games.get(game)
    st = status.get("state")
    players = status.get("players") or []
    config = status.get("config") if type(status.get("config")) is dict else {}
    out = {"table": table, "game": game, "game_no": status.get("game_no"),
           "game_name": g.game_name(config) if game else "", "race": g.race(config) if config
           else "", "scoring": bool(scoring), "why": why or "", "rows": [], "headline": "",
           "unit": "", "on_move": "", "last": "", "last_fouls": [], "note": "", "notices": [],
           "warnings": [], "seq": status.get("last_seq"), "winner": None, "kind": "generic",
           "gauge": gauge_words(status, short=True)}
    out.update(words(status, page=True))
    screen = status.get("screen") or []
    if scoring and screen and str(screen[0]).startswith("SERVICE"):
        out["scoring"] = False
        out["why"] = "service view on the board"
    if type(st) is not dict:
        out["headline"] = "no game in progress"
        return out
    names = g.side_names(players, config)
    try:
        rows, out["headline"], out["unit"] = g.rows(st, names, config)
        out["kind"] = g.fragment
    except (KeyError, TypeError, ValueError, IndexError):
        # A state this game's module does not know (another firmware): shown from its shape.
        rows, out["headline"], out["unit"] = common.HostGame.rows(g, st, names, config)
    nxt = st.get("next")
    winner = st.get("winner")
    for i, r in enumerate(rows):
        r["on_move"] = winner is None and nxt == i
        r["winner"] = winner == i
    out["rows"] = rows
    names = [common.isolate(r["name"]) for r in rows]
    if winner is not None:
        out["winner"] = winner
        out["on_move"] = "draw" if winner == "draw" else "winner: %s" % (
            names[winner] if type(winner) is int and 0 <= winner < len(names) else winner)
    elif type(nxt) is int and 0 <= nxt < len(names):
        out["on_move"] = "on move: %s%s" % (names[nxt],
                                            ", ball in hand" if st.get("ball_in_hand") else "")
    elif "next" in st:
        out["on_move"] = "waiting for the start"
    else:  # a game with no one on move (hands scored as they end)
        out["on_move"] = "in play"
    return out
