"""What a scoreboard shows of a game, worked out from the board's state dict alone.

view() turns a board's `state` result (docs/serial-protocol.md) into a plain dict the web page,
`chalk stats` and the plots draw: one row per player or side (name, score, a detail line, on
move, winner), the game's headline (set, turn, hand), who is on move, the last action and the
warnings. Shove ha'penny and five-pins get views of their own (beds, sets, ball in hand); any
other game is shown from its state's shape (the match-log contract: a list with one number per
player is a score, `next` is on move, `winner` the winner), so a new game shows without a change
here.
"""

# Lists in a state that hold one score per player or side, most telling first.
SCORE_KEYS = ("scores", "totals", "counts", "big", "left", "points")


def player_name(players, i, default):
    p = players[i] if i < len(players) else None
    if type(p) is list:
        return " & ".join(str(x) for x in p)
    return str(p) if p else default


def _is_num(x):
    return type(x) in (int, float)


def _per_side(st, n_players):
    """The state's per-player lists of numbers: [(key, list)], SCORE_KEYS first."""
    lists = []
    for k in sorted(st):
        v = st[k]
        if type(v) is list and len(v) >= 2 and all(_is_num(x) for x in v) and (
                not n_players or len(v) == n_players or n_players < 2):
            lists.append((k, v))
    lists.sort(key=lambda kv: (SCORE_KEYS.index(kv[0]) if kv[0] in SCORE_KEYS
                               else len(SCORE_KEYS), kv[0]))
    return lists


def score(game, st):
    """Each side's score as one number, for charts and statistics: shove ha'penny the marks
    chalked, five-pins the points of the set in play, any other game its per-side list."""
    if not st:
        return []
    if game == "shove-hapenny":
        return [sum(b) for b in st["beds"]]
    lists = _per_side(st, 0)
    return list(lists[0][1]) if lists else []


def side_names(players, k):
    """Names of k sides. Players named one by one for fewer sides (four names, two sides: a
    partnership game such as texas-42) sit alternately: side i is players i, i+k, ..."""
    if k and len(players) > k and len(players) % k == 0:
        return [" & ".join(player_name(players, j, "P%d" % (j + 1))
                           for j in range(i, len(players), k)) for i in range(k)]
    return [player_name(players, i, "P%d" % (i + 1)) for i in range(max(len(players), k))]


def _rows_generic(st, players):
    # Lists as long as the players first; if none is (four names for two sides), any list.
    lists = _per_side(st, len(players)) or _per_side(st, 0)
    names = side_names(players, len(lists[0][1]) if lists else 0)
    rows = []
    for i in range(max(len(names), 2 if lists else 0)):
        rows.append({"name": names[i] if i < len(names) else "P%d" % (i + 1),
                     "score": str(lists[0][1][i]) if lists and i < len(lists[0][1]) else "",
                     "detail": "  ".join("%s %s" % (k, v[i]) for k, v in lists[1:]
                                         if i < len(v))})
    return rows, (lists[0][0] if lists else "")


def _headline_generic(st):
    bits = []
    for k in ("set", "turns", "hands", "round", "frame"):
        if _is_num(st.get(k)):
            bits.append("%s %s" % (k.rstrip("s") if k != "set" else k, st[k]))
    return ", ".join(bits)


def _five_pins(st, players):
    rows = []
    for p in (0, 1):
        rows.append({"name": player_name(players, p, "P%d" % (p + 1)),
                     "score": str(st["scores"][p]),
                     "detail": "sets %d" % st["sets"][p],
                     "sets": st["sets"][p]})
    return rows, "set %d" % st["set"], "points"


def _shove(st, players):
    rows = []
    for side in (0, 1):
        beds = st["beds"][side]
        rows.append({"name": player_name(players, side, "AB"[side]),
                     "score": str(sum(beds)),
                     "detail": "misses the next turn" if st["skip"][side] else "",
                     "beds": list(beds)})
    return rows, "turn %d" % st["turns"], "marks"


def view(status, table=None, scoring=True, why=None):
    """The board's state result as a dict to draw: see the module doc. `scoring` False (with
    `why`) marks a board that is not keeping the score now (no connection, service view)."""
    status = status or {}
    game = status.get("game")
    st = status.get("state")
    players = status.get("players") or []
    out = {"table": table, "game": game, "game_no": status.get("game_no"),
           "scoring": bool(scoring), "why": why or "", "rows": [], "headline": "",
           "unit": "", "on_move": "", "last": str(status.get("last") or ""),
           "note": str(status.get("note") or ""),
           "warnings": [str(w) for w in status.get("warnings") or []],
           "seq": status.get("last_seq"), "winner": None, "kind": "generic"}
    screen = status.get("screen") or []
    if scoring and screen and str(screen[0]).startswith("SERVICE"):
        out["scoring"] = False
        out["why"] = "service view on the board"
    if type(st) is not dict:
        out["headline"] = "no game in progress"
        return out
    if game == "five-pins" and "scores" in st:
        rows, out["headline"], out["unit"] = _five_pins(st, players)
        out["kind"] = game
    elif game == "shove-hapenny" and "beds" in st:
        rows, out["headline"], out["unit"] = _shove(st, players)
        out["kind"] = game
    else:
        rows, out["unit"] = _rows_generic(st, players)
        out["headline"] = _headline_generic(st)
    nxt = st.get("next")
    winner = st.get("winner")
    for i, r in enumerate(rows):
        r["on_move"] = winner is None and nxt == i
        r["winner"] = winner == i
    out["rows"] = rows
    names = [r["name"] for r in rows]
    if winner is not None:
        out["winner"] = winner
        out["on_move"] = "draw" if winner == "draw" else "winner: %s" % (
            names[winner] if type(winner) is int and winner < len(names) else winner)
    elif type(nxt) is int and nxt < len(names):
        out["on_move"] = "on move: %s%s" % (names[nxt],
                                            ", ball in hand" if st.get("ball_in_hand") else "")
    elif "next" in st:
        out["on_move"] = "waiting for the start"
    else:  # a game with no one on move (hands scored as they end)
        out["on_move"] = "in play"
    return out
