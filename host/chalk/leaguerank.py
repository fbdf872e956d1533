"""What the league's rules make of the games filed: each game's standing (counted, pending,
voided, not counted, and why, in words), the boards' game sequences (missing, repeated and
forked games), the standings with their tie-breaks, results by round and venue, players'
records, and the same as CSV (docs/league.md). Pure functions of the league config and the
archive's rows: the pages, the commands and the MQTT standings all read these.
"""

import csv
import io
from collections import defaultdict
from dataclasses import dataclass, field

from chalk import verify
from chalk.leaguecheck import AUTHENTIC, COUNTABLE, WORDS, light
from chalk.leagueconf import norm, parse_time

COUNTED, PENDING, VOIDED, NOT_COUNTED = "counted", "pending", "voided", "not counted"


@dataclass
class Assessed:
    """One filed game as the league sees it."""
    id: int
    game: dict  # the leaguedb row
    status: str
    why: str  # in words, for the pages
    venue: str = None
    round: object = None  # leagueconf.Round
    when: object = None  # aware datetime
    sides: list = field(default_factory=list)  # [[player names as the league spells them]]
    entrants: list = field(default_factory=list)  # per side: player (or team) name
    winner: object = None  # side index, "draw", None
    scores: list = field(default_factory=list)
    sets: list = None
    disputes: list = field(default_factory=list)

    def result_text(self):
        if self.winner == "draw":
            return "draw"
        if type(self.winner) is int and self.winner < len(self.entrants):
            return "won by %s" % self.entrants[self.winner]
        return "no result"

    def score_text(self):
        if self.sets:
            return "sets " + "-".join(str(x) for x in self.sets)
        return "-".join(str(x) for x in self.scores)


def sides_of(players, n):
    """Players named one by one sit on sides: with more names than sides (four names, two
    sides: a partnership game) side i is players i, i+n, ... (as views.side_names)."""
    if n and len(players) > n and len(players) % n == 0:
        return [[players[j] for j in range(i, len(players), n)] for i in range(n)]
    return [[p] for p in players]


def assess(league, games, disputes):
    """Every filed game's standing, in filing order."""
    by_game = defaultdict(list)
    for d in disputes:
        by_game[d["game_id"]].append(d)
    out = []
    for g in games:
        out.append(_assess(league, g, by_game.get(g["id"], [])))
    return out


def _assess(L, g, disputes):
    a = Assessed(g["id"], g, NOT_COUNTED, "", venue=g["venue"], disputes=disputes)
    v = g["verdict"] or {"grade": "unreadable", "finished": False}
    grade = v["grade"]
    r = g["result"] or {}
    a.when = parse_time(g["started"]) or parse_time(g["received"])
    players = [str(p) if not isinstance(p, list) else " & ".join(map(str, p))
               for p in g["players"]]
    if r.get("scores") is not None:
        a.scores = list(r.get("scores") or [])
        a.sets = r.get("sets")
        a.winner = r.get("winner")
    n = r.get("sides") or 2
    a.sides = sides_of(players, n)
    a.entrants = [" & ".join(s) for s in a.sides]

    def no(why, status=NOT_COUNTED):
        a.status, a.why = status, why
        return a
    if grade not in COUNTABLE:
        if grade == "ok-in-progress":
            return no("not finished: the board signed no end (a log cut short?)")
        return no(WORDS.get(grade, "verdict: %s" % grade))
    if grade == "legacy" and L.legacy == "refuse":
        return no("signed with a legacy key, which this league does not accept")
    if not v.get("finished"):
        return no("not finished: the board signed no end")
    if "error" in r or not r:
        return no("the rules cannot replay it: %s" % r.get("error", "no result"))
    if r.get("abandoned"):
        return no("abandoned: the game ended with no winner")
    board = L.boards.get(g["device"])
    if board is None:
        return no("board %s is not enrolled in the league" % g["device"])
    if board["venue"] != g["venue"]:
        return no("board %s is enrolled at %s, but this came from %s" % (
            g["device"], L.venues.get(board["venue"], {}).get("name", board["venue"]),
            g["venue"]))
    if g["game_no"] is None or g["game_no"] < board["from_game"]:
        return no("game #%s is from before the board joined the league (from game #%d)"
                  % (g["game_no"], board["from_game"]))
    if g["game"] != L.game:
        return no("not a league game: it is %s, the league plays %s" % (g["game"], L.game))
    cfg = g["config"] if isinstance(g.get("config"), dict) else {}
    for k, want in sorted(L.config.items()):
        if cfg.get(k) != want:
            return no("not a league game: played with %s %s, the league plays %s" % (
                k.replace("_", " "), cfg.get(k), want))
    if len(players) < n:
        return no("not a league game: the players are not named")
    names = []
    for side in a.sides:
        known = [L.entrant(p) for p in side]
        if None in known:
            stranger = side[known.index(None)]
            return no("not a league game: %s is not a player of the league" % stranger)
        names.append(known)
    a.sides = names
    if L.mode == "teams":
        teams = []
        for side in names:
            ts = {L.team_of[norm(p)] for p in side}
            if len(ts) != 1:
                return no("not a league game: %s play for different teams" % " and ".join(side))
            teams.append(ts.pop())
        if len(teams) != 2 or teams[0] == teams[1]:
            return no("not a league game: a match is between two teams (%s)" % ", ".join(teams))
        a.entrants = teams
    else:
        a.entrants = [" & ".join(s) for s in names]
        flat = [p for s in names for p in s]
        if len(set(flat)) != len(flat):
            return no("not a league game: a player is on both sides")
    a.round = L.round_of(a.when) if a.when else None
    if a.round is None:
        return no("played outside the season's rounds (%s)" % (
            a.when.astimezone(L.tz).strftime("%Y-%m-%d %H:%M") if a.when else "no date"))
    voided = [d for d in disputes if d["resolution"] and d["resolution"]["outcome"] == "voided"]
    if voided:
        return no("voided by the league: %s" % voided[-1]["resolution"]["note"], VOIDED)
    open_ = [d for d in disputes if d["resolution"] is None]
    if open_:
        d = open_[0]
        return no("pending: disputed by %s: %s" % (_by(L, d["by"]), d["note"]), PENDING)
    a.status = COUNTED
    accepted = [d for d in disputes if d["resolution"]]
    a.why = "counted" + (" (dispute resolved: %s)" % accepted[-1]["resolution"]["note"]
                         if accepted else "")
    return a


def _by(L, by):
    if by == "league":
        return "the league"
    return L.venues.get(by, {}).get("name", by)


# -- the boards' game sequences -----------------------------------------------------------------

def sequences(league, games):
    """What the boards' chains of games show: [{"kind": missing|forked|repeated, "device",
    "game_no", "text", "games": [ids]}]. Only finished games the board signed take part (a
    forgery claims nothing). Forks and repeats come from the chain of games each header
    carries ("prev": the board's game before, verify.check_set): two games with one number or
    one predecessor, a game that follows another than the one held (a board rewound or
    cloned). Missing games from the boards' numbering, from the first game that counts."""
    claims = defaultdict(list)
    for g in games:
        v = g["verdict"] or {}
        if v.get("grade") in AUTHENTIC and v.get("finished") and g["device"] and \
                type(g["game_no"]) is int:
            claims[g["device"]].append(g)
    out = []

    def where(device):
        board = league.boards.get(device)
        if not board:
            return ""
        return " (%s)" % league.venues.get(board["venue"], {}).get("name", board["venue"])

    lights = [light(g["verdict"]["grade"], d, g["game_no"], g["verdict"]["chain"],
                    "game %d" % g["id"])
              for d, gs in claims.items() for g in gs if g["verdict"].get("chain")]
    for p in verify.check_set(lights):
        if p.kind == "missing":
            continue  # below, from the first game of the board that counts
        text = p.text
        lead = "board %s: " % p.device
        if text.startswith(lead):
            text = "board %s%s: %s" % (p.device, where(p.device), text[len(lead):])
        out.append({"kind": "forked" if p.kind == "fork" else p.kind, "device": p.device,
                    "game_no": p.game_no, "text": text,
                    "games": [g["id"] for g in claims[p.device] if g["game_no"] == p.game_no]})
    for device in sorted(claims):
        board = league.boards.get(device)
        nos = {g["game_no"] for g in claims[device]}
        if board is None or not nos:
            continue
        missing = [n for n in range(board["from_game"], max(nos)) if n not in nos]
        for run in _runs(missing):
            text = "#%d" % run[0] if len(run) == 1 else "#%d-#%d" % (run[0], run[-1])
            out.append({"kind": "missing", "device": device, "game_no": run[0],
                        "games": [], "text": "board %s%s: game%s %s not received, though a "
                        "later game of that board was: hidden, or not sent yet" % (
                            device, where(device), "" if len(run) == 1 else "s", text)})
    return out


def _runs(numbers):
    runs = []
    for n in numbers:
        if runs and runs[-1][-1] == n - 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return runs


# -- standings ------------------------------------------------------------------------------

def _blank():
    return {"played": 0, "won": 0, "drawn": 0, "lost": 0, "points": 0, "legs_for": 0,
            "legs_against": 0, "sets_for": 0, "sets_against": 0, "score_for": 0,
            "score_against": 0, "pending": 0}


def _other(values, i):
    others = [x for j, x in enumerate(values) if j != i]
    return max(others) if others else 0


def _num(x):
    try:
        return float(x) if "." in str(x) else int(x)
    except (TypeError, ValueError):
        return 0


def standings(league, assessed):
    """The table: [{"pos", "name", "played", "won", ..., "points"}], best first. Pending
    games are counted apart (`pending`), never in the points."""
    P = league.points
    rows = {}
    names = list(league.teams) if league.mode == "teams" else list(league.players.values())
    for n in names:
        rows[n] = _blank()
    counted = [a for a in assessed if a.status == COUNTED]
    def units(a, i):  # who a side's result goes to: its players, or its team
        return a.sides[i] if league.mode == "players" else [a.entrants[i]]
    for a in assessed:
        if a.status == PENDING:
            for i in range(len(a.entrants)):
                for who in units(a, i):
                    if who in rows:
                        rows[who]["pending"] += 1
    results = []  # (the units of each side, winner)
    for a in counted:
        scores = [_num(x) for x in a.scores]
        for i in range(len(a.entrants)):
            for u in units(a, i):
                r = rows[u]
                if a.sets:
                    r["sets_for"] += a.sets[i]
                    r["sets_against"] += _other(a.sets, i)
                if scores:
                    r["score_for"] += scores[i] if i < len(scores) else 0
                    r["score_against"] += _other(scores, i)
                r["legs_for"] += 1 if a.winner == i else 0
                r["legs_against"] += 1 if a.winner not in (i, "draw") else 0
    if league.mode == "players":
        for a in counted:
            results.append(([units(a, i) for i in range(len(a.entrants))], a.winner))
    else:
        matches = _matches(counted)
        for key in sorted(matches, key=lambda k: (k[0], sorted(k[1]))):
            legs = matches[key]
            t0, t1 = sorted(key[1])
            w = 0 if legs[t0] > legs[t1] else 1 if legs[t1] > legs[t0] else "draw"
            results.append(([[t0], [t1]], w))
    for sides, w in results:
        for i, side in enumerate(sides):
            for u in side:
                r = rows[u]
                r["played"] += 1
                if w == "draw":
                    r["drawn"] += 1
                    r["points"] += P["draw"]
                elif w == i:
                    r["won"] += 1
                    r["points"] += P["win"]
                else:
                    r["lost"] += 1
                    r["points"] += P["loss"]
    for r in rows.values():
        r["legs_difference"] = r["legs_for"] - r["legs_against"]
        r["sets_difference"] = r["sets_for"] - r["sets_against"]
        r["score_difference"] = r["score_for"] - r["score_against"]
        r["wins"] = r["won"]
    keys = {n: [rows[n]["points"]] for n in rows}
    for tb in league.tie_breaks:
        groups = defaultdict(list)
        for n in rows:
            groups[tuple(keys[n])].append(n)
        for group in groups.values():
            if tb == "head_to_head":
                h2h = _head_to_head(P, results, set(group))
                for n in group:
                    keys[n].append(h2h.get(n, 0) if len(group) > 1 else 0)
            else:
                for n in group:
                    keys[n].append(rows[n][tb])
    order = sorted(rows, key=lambda n: ([-k for k in keys[n]], norm(n)))
    out = []
    pos = 0
    for i, n in enumerate(order):
        if i == 0 or keys[n] != keys[order[i - 1]]:
            pos = i + 1
        shared = (i > 0 and keys[n] == keys[order[i - 1]]) or (
            i + 1 < len(order) and keys[n] == keys[order[i + 1]])
        out.append(dict(rows[n], pos=pos, shared=shared, name=n))
    return out


def _matches(counted):
    """Team matches: (round name, {team, team}) -> {team: legs won}."""
    m = {}
    for a in counted:
        legs = m.setdefault((a.round.name, frozenset(a.entrants)), {t: 0 for t in a.entrants})
        if type(a.winner) is int:
            legs[a.entrants[a.winner]] += 1
    return m


def _head_to_head(P, results, group):
    pts = defaultdict(int)
    for sides, w in results:
        if not all(u in group for side in sides for u in side):
            continue
        for i, side in enumerate(sides):
            for u in side:
                pts[u] += P["draw"] if w == "draw" else P["win"] if w == i else P["loss"]
    return pts


# -- results, records ------------------------------------------------------------------------

def by_round(league, assessed):
    """[(round name, [(venue name, [Assessed])])], rounds in order, then games not in any."""
    order = [r.name for r in league.rounds] or ["Season"]
    grouped = defaultdict(lambda: defaultdict(list))
    for a in assessed:
        rname = a.round.name if a.round else "Not in a round"
        grouped[rname][league.venues.get(a.venue, {}).get("name", a.venue)].append(a)
    out = []
    for rname in order + ["Not in a round"]:
        if rname in grouped:
            venues = grouped[rname]
            out.append((rname, [(v, sorted(venues[v], key=lambda a: (a.when is None, a.when,
                                                                      a.id)))
                                for v in sorted(venues)]))
    return out


def record(league, assessed, name):
    """A player's (or team's) games: [(Assessed, side index, "won"|"lost"|"drawn"|...)]."""
    key = norm(name)
    out = []
    for a in assessed:
        for i, side in enumerate(a.sides):
            members = [norm(p) for p in side]
            team = a.entrants[i] if league.mode == "teams" and i < len(a.entrants) else None
            if key in members or (team is not None and norm(team) == key):
                if a.status != COUNTED:
                    outcome = a.status
                elif a.winner == "draw":
                    outcome = "drawn"
                else:
                    outcome = "won" if a.winner == i else "lost"
                out.append((a, i, outcome))
    return out


# -- CSV -----------------------------------------------------------------------------------

def _cell(v):
    """A CSV cell a spreadsheet will not run: formula-looking text is quoted as text."""
    s = "" if v is None else str(v)
    if s[:1] in ("=", "+", "-", "@", "\t", "\r") and not _is_number(s):
        s = "'" + s
    return "".join(c if c.isprintable() else "\\x%02x" % ord(c) for c in s)


def _is_number(s):
    try:
        float(s)
        return True
    except ValueError:
        return False


def _csv(header, rows):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for r in rows:
        w.writerow([_cell(x) for x in r])
    return buf.getvalue()


STANDINGS_COLUMNS = ["pos", "name", "played", "won", "drawn", "lost", "legs_difference",
                     "sets_difference", "score_difference", "pending", "points"]


def standings_csv(rows):
    return _csv(STANDINGS_COLUMNS, [["%d%s" % (r["pos"], "=" if r["shared"] else "")]
                                    + [r[k] for k in STANDINGS_COLUMNS[1:]] for r in rows])


RESULTS_COLUMNS = ["game", "round", "venue", "date", "board", "game_no", "side_1", "side_2",
                   "score", "result", "status", "why", "verdict"]


def results_csv(league, assessed):
    rows = []
    for a in assessed:
        g = a.game
        rows.append([a.id, a.round.name if a.round else "", league.venues.get(
            a.venue, {}).get("name", a.venue), a.when.astimezone(league.tz).strftime(
                "%Y-%m-%d %H:%M") if a.when else "", g["device"], g["game_no"],
            a.entrants[0] if a.entrants else "", a.entrants[1] if len(a.entrants) > 1 else "",
            a.score_text(), a.result_text(), a.status, a.why,
            (g["verdict"] or {}).get("grade", "")])
    return _csv(RESULTS_COLUMNS, rows)


MATCHES_COLUMNS = ["match", "round", "date", "venue", "player1", "player2", "scores_csv",
                   "winner"]


def matches_csv(league, assessed):
    """Counted results as a tournament tool imports them: one row per match, the scores in
    Challonge's scores_csv convention ("3-1" for one game; sets as "2-1"), player 1's first."""
    rows = []
    n = 0
    for a in assessed:
        if a.status != COUNTED or len(a.entrants) != 2:
            continue
        n += 1
        score = "-".join(str(x) for x in (a.sets if a.sets else a.scores))
        rows.append([n, a.round.name if a.round else "", a.when.astimezone(
            league.tz).strftime("%Y-%m-%d") if a.when else "",
            league.venues.get(a.venue, {}).get("name", a.venue), a.entrants[0],
            a.entrants[1], score, a.entrants[a.winner] if type(a.winner) is int else
            "draw" if a.winner == "draw" else ""])
    return _csv(MATCHES_COLUMNS, rows)
