"""What every game's host module shares: the base class, names, words, the shot timing of traces.

A game's host module (chalk/games/<game>.py) holds one subclass of HostGame carrying everything
host-side that is that game's: its name and race in words, each action described in words, its
fouls, its sides' names as the board shows them, what staff should do about its warnings, its
rows on the pages and in `chalk watch`, its scoresheet and CSV, its statistics, its random games
and its trace builder. Generic code (views, watch, sheet, export, stats, randomgame, traces) asks
the game (chalk.games.get(id)) and never tests which game it is: the model is python-chess's
variants, one class per variant carrying all that differs.

The defaults here are what a game with nothing of its own gets: rows and lines worked out from
the shape of its state (the match-log contract: a list with one number per side is a score,
`next` is on move, `winner` the winner), so an unknown game is still shown.
"""

import json
import re
import unicodedata

from chalk.text import printable

# Lists in a state that hold one score per player or side, most telling first.
SCORE_KEYS = ("scores", "totals", "counts", "big", "left", "points")

# -- names -----------------------------------------------------------------------------------


def entry(players, i, default):
    """Side i's name from a header's players: a name, a pair of names (joined with " & "), a
    {"name": ...} object, or `default` when none was given."""
    p = players[i] if i < len(players) else None
    if isinstance(p, list):
        p = " & ".join(str(x) for x in p if x not in (None, ""))
    elif isinstance(p, dict):
        p = p.get("name")
    return str(p) if p not in (None, "") else default


def given(players, i):
    """True if side i's name was given (not filled in from the game's defaults)."""
    return entry(players, i, None) is not None


def alternate_names(players, k, default="P%d"):
    """Names of k sides from players named one by one for fewer sides (four names, two sides:
    side i is players i, i+k, ...), else one entry a side."""
    if k and len(players) > k and len(players) % k == 0 and all(
            isinstance(p, str) and p for p in players):
        return [" & ".join(players[j] for j in range(i, len(players), k)) for i in range(k)]
    return [entry(players, i, default % (i + 1)) for i in range(max(len(players), k))]


_ISOLATE = set("R AL AN RLE RLO LRE LRO PDF RLI LRI FSI PDI NSM".split())


def isolate(name):
    """A name that could reorder the text around it (right-to-left letters, bidi controls),
    wrapped in Unicode isolates (FSI ... PDI), so a sentence with it still reads in order."""
    if any(unicodedata.bidirectional(c) in _ISOLATE for c in name):
        return "\u2068" + name + "\u2069"
    return name


# -- words -----------------------------------------------------------------------------------

def and_list(items, sep=", "):
    """"1", "1 and 2", "1, 2 and C"."""
    items = [str(x) for x in items]
    if len(items) <= 1:
        return "".join(items)
    return sep.join(items[:-1]) + " and " + items[-1]


def verb(who, one, many):
    """The verb for a side's name: a pair ("Ann & Cy") takes the plural."""
    return many if " & " in who else one


def plural(n, one, many=None):
    return "%d %s" % (n, one if n == 1 else (many or one + "s"))


def ordinal_set(n):
    return "set %d" % n


def codes_in_words(codes, words):
    """Foul codes in words (an unknown code as it is)."""
    return [words.get(c, str(c)) for c in codes]


_FAULT = re.compile(r"^(btn|pin|peg|key|pocket|colour)\.(\S+) (stuck|chatter)$")
_REFUSED = re.compile(r"^((?:[A-Z][A-Z0-9]*-\d+)|LOG) (.+)$")
_HEAP_LOW = re.compile(r"^heap low: (\d+)K free, (\d+)K block$")  # docs/serial-protocol.md


def line_words(kind, ident):
    """A sensor line's name in words: pin.C -> "pin C's switch", btn.done -> "the done
    button", peg.0.3.2 -> "peg hole 2 of bed 3 (A)"."""
    if kind == "btn":
        return "the %s button" % ident.replace("_", " ")
    if kind == "pin":
        return "pin %s's switch" % ident
    if kind == "peg":
        bits = ident.split(".")
        if len(bits) == 3:
            side = "AB"[int(bits[0])] if bits[0] in ("0", "1") else bits[0]
            return "peg hole %s of bed %s (%s)" % (bits[2], bits[1], side)
        return "peg hole %s" % ident
    if kind == "key":
        return "the scorepad's %s key" % ident
    if kind == "pocket":
        return "pocket %s's beam" % ident
    return "the colour sensor of pocket %s" % ident


def warning_in_words(text):
    """A board warning no game claims, in words: ("notice", text) for what staff should do
    (a stuck or chattering sensor), ("warning", text) otherwise (a refusal with its rule id)."""
    m = _FAULT.match(text)
    if m:
        kind, ident, what = m.groups()
        where = line_words(kind, ident)
        where = where[0].upper() + where[1:]
        if what == "stuck":
            return "notice", "%s is stuck: it is ignored until it works again; check it " \
                             "and its wiring" % where
        return "notice", "%s chatters (flickers on and off): it is ignored until it works " \
                         "again; check it and its wiring" % where
    m = _REFUSED.match(text)
    if m:
        rule, reason = m.groups()
        if rule == "LOG":
            return "warning", "refused: %s" % reason
        return "warning", "refused (%s): %s" % (rule, reason)
    m = _HEAP_LOW.match(text)
    if m:
        return "notice", "Heap low: the board is short of memory (%s KB free, largest block " \
                         "%s KB). It keeps the score, but may refuse long requests; restart " \
                         "the board after this game if it stays" % m.groups()
    if text.startswith("journal"):
        return "warning", "the board's journal: %s" % text[len("journal"):].lstrip(": ")
    return "warning", text


def delta(before, after, key):
    """after[key][i] - before[key][i] per side, or None without a state before."""
    if before is None:
        return None
    return [a - b for a, b in zip(after[key], before[key])]


def won(before, after):
    """The side that won with this action (None if the game was already won or goes on)."""
    w = after.get("winner")
    if w is None or (before is not None and before.get("winner") == w):
        return None
    return w


# -- the base class --------------------------------------------------------------------------

class HostGame:
    """One game on the host. A subclass sets the class attributes and overrides what differs;
    everything here is the default, worked out from the state's shape."""

    id = None  # the game id, as in a match log header
    name = None  # in words, for the pages ("Shove ha'penny")
    sheet_name = None  # the scoresheet's title word ("shove ha'penny")
    defaults = ("P1", "P2")  # side names when none were given, as the board shows them
    fragment = "generic"  # which card the pages draw ("generic": rows; a card of its own: its id)
    turnless = None  # any side may score next: what comes next in words ("hand")
    waiting = "the first action"  # what the game waits for before it starts (watch)
    fouls = {}  # foul code -> words (with the rule id)
    figures = ()  # (key, label) of its per-player figures in the statistics
    tables = {}  # `chalk stats ID --csv --of NAME`: name -> method name giving that CSV
    random_config = None  # randomgame: the config of a random game
    random_opening = None  # its opening action (None: the first action opens the game)
    bench = ({}, 0.5)  # make bench: (config, accuracy) of a 500-action random game
    long_bench = ({}, 0.5)  # the same for a 10,000-action one
    # make bench's board and archive sections: (config, accuracy) of a 1,000-action game of the
    # games they measure one by one (their board config is named after the game); None: not
    board_bench = None
    sample = None  # bench/make_samples.py: random_match keywords of the bundled sample
    keypad = False  # scored on a scorepad: its sample trace is keys typed (traces.keypad)

    def __init__(self):
        self._rules = {}  # config -> a rules instance, to check records with (valid())

    # -- names -----------------------------------------------------------------------------
    def game_name(self, config=None):
        return self.name or str(self.id)

    def default_names(self, config=None):
        return list(self.defaults)

    def side_names(self, players, config=None):
        """Each side's name as the board shows it (the default when none was given)."""
        players = players or []
        return [entry(players, i, d) for i, d in enumerate(self.default_names(config))]

    def named(self, players, config=None):
        """Per side: was a name given (a person, for the statistics)?"""
        players = players or []
        return [given(players, i) for i in range(len(self.default_names(config)))]

    # -- words -----------------------------------------------------------------------------
    def race(self, config):
        """What the game is played to, in words ("to 60, best of 3 sets"), or ""."""
        return ""

    def foul_words(self, codes):
        return codes_in_words(codes, self.fouls)

    def describe(self, rec, before, after, names, config):
        """The action in words with the players' names, worked out from the state before it
        (None when not known) and after it: (text, [fouls in words]). ValueError for an
        action that is not this game's."""
        raise ValueError("not an action of %s: %r" % (self.id, rec.get("a")))

    def valid(self, rec, config):
        """True if `rec` is in the game's vocabulary (its rules can encode it): a record from
        a board is said in words only then."""
        from scoreboard.rules import ConfigError, RuleError, rules_for

        key = json.dumps(config, sort_keys=True, default=str)
        rules = self._rules.get(key)
        if rules is None:
            try:
                rules = rules_for(self.id)(config if type(config) is dict else {})
            except ConfigError:
                return False
            if len(self._rules) > 16:
                self._rules.clear()
            self._rules[key] = rules
        if rec.get("a") not in rules.ACTIONS:
            return False
        try:
            rules.encode(rec)
        except (RuleError, KeyError, TypeError, ValueError, IndexError):
            return False
        return True

    def parse_last(self, text, state):
        """The action a board's own short text of its latest action stands for (a board
        whose state reply does not carry the action itself), or None. The text is never shown
        as it is: what it stands for is said in words."""
        if text == "undo":
            return {"a": "undo"}
        try:
            rec = json.loads(text or "")  # a short record whole (a long one is cut)
        except ValueError:
            return None
        return rec if type(rec) is dict and type(rec.get("a")) is str else None

    def note_words(self, note, state, names):
        """The board's note (what is being entered now) in words, or "" (a prompt of the
        board's own stays on the board)."""
        return ""

    def warning_words(self, text, state, names):
        """A board warning of this game's in words: ("notice"|"warning", text), or None."""
        return None

    def more_notices(self, notices, state, names, note):
        """Notices worked out from the whole status (e.g. why a button is ignored)."""
        return notices

    # -- the pages -------------------------------------------------------------------------
    def rows(self, st, names, config):
        """(rows, headline, unit): one row per side (name, score, detail; the fragment's data),
        the game's headline (set, turn, hand) and what the score counts."""
        lists = per_side(st, len(names))
        rows = []
        for i in range(max(len(names), 2 if lists else 0)):
            rows.append({"name": names[i] if i < len(names) else "P%d" % (i + 1),
                         "score": str(lists[0][1][i]) if lists and i < len(lists[0][1]) else "",
                         "detail": "  ".join("%s %s" % (k, v[i]) for k, v in lists[1:]
                                             if i < len(v))})
        return rows, headline(st), (lists[0][0] if lists else "")

    # -- chalk watch -----------------------------------------------------------------------
    def watch_rows(self, st, names):
        """(where, rows): the headline's addition ("set 1") and the score's lines."""
        return "", ["  %s: %s" % (k, st[k]) for k in sorted(st)]

    def watch_score(self, st, names):
        """The score on one line, for logs and pipes."""
        return " ".join("%s=%s" % (k, st[k]) for k in sorted(st))

    # -- the scoresheet --------------------------------------------------------------------
    def sheet_lines(self, head, steps, names, config):
        """The sheet's title, column line and one line per step; steps are
        (line_no, record, before, after, words)."""
        from scoreboard import matchlog

        yield "%s  %s" % (head.get("game"), json.dumps(config or {}))
        for n, rec, _before, after, words in steps:
            yield "%4d  %s  ->  %s  %s" % (n, matchlog.dumps(matchlog.strip_meta(rec)),
                                           matchlog.dumps(after), words)

    def sheet_result(self, state, names, config):
        from scoreboard import matchlog

        return "final: %s" % matchlog.dumps(state)

    # -- CSV (chalk export -f csv) ---------------------------------------------------------
    csv_columns = ["seq", "time", "t_ms", "action", "record", "state"]

    def csv_rows(self, head, steps, names, config):
        from scoreboard import matchlog

        for _n, rec, _before, after in steps:
            yield [rec["seq"], clock(rec.get("t", 0)), rec.get("t", 0), rec.get("a"),
                   matchlog.dumps(matchlog.strip_meta(rec)), matchlog.dumps(after)]

    # -- statistics ------------------------------------------------------------------------
    def score(self, st):
        """Each side's score as one number, for charts."""
        if not st:
            return []
        lists = per_side(st, 0)
        return list(lists[0][1]) if lists else []

    def short_score(self, st):
        """How an unfinished game stands, for `chalk games` ("set 1 0-3"), or ""."""
        return ""

    def side_counts(self, kept, final, side, config):
        """This side's counts in one game (summed over games; figure() makes them figures)."""
        return {}

    def figure(self, key, counts):
        """One figure of a player's summed counts (None when it cannot be worked out)."""
        return None

    def game_extra(self, kept, final, names, config):
        """One game's own statistics: extra keys for the game page, `charts` ([(title, svg)])
        and `figures` ([(label, [value per side])])."""
        return {}

    # -- random games and traces -----------------------------------------------------------
    def random_action(self, rng, state, accuracy):
        raise NotImplementedError("no random player for %s" % self.id)

    def trace(self, tr, head, actions):
        raise ValueError("no sensor trace builder for %s" % self.id)


class PinTable(HostGame):
    """What the pin tables (five pins, seven pins) share on the host: a break and a void shot in
    words, and their play as the table's switches and buttons see it (the break, a shot then
    confirm, undo as a long press; docs/scoring-at-the-table.md). A subclass says the rest of a
    shot in words (shot_words) and presses what its shot's own (trace_shot)."""

    void_words = "%s: shot void, nothing counts"  # a void shot (as FP-17): %s the shooter
    pins_words = staticmethod(lambda pins: " ".join(pins or ()))  # its pins in words

    def describe(self, rec, before, after, names, config):
        a = rec.get("a")
        p = rec.get("player")
        if a == "break":
            return "%s breaks" % names[p], []
        if a != "shot":
            return HostGame.describe(self, rec, before, after, names, config)
        if rec.get("void"):
            text = self.void_words % names[p]
            if rec.get("struck"):
                text += " (the switches had counted %s)" % self.pins_words(rec["struck"])
            return text, []
        return self.shot_words(rec, before, after, names, config)

    def shot_words(self, rec, before, after, names, config):
        """describe() of a shot that is not void."""
        raise NotImplementedError

    def trace(self, tr, head, actions):
        from scoreboard.rules import new_game

        game = new_game(head["game"], head.get("config"))
        for action in actions:
            game.apply(action)  # the log must be legal: a refused action stops here
            a = action["a"]
            if a == "break":
                if action["player"] != 0:
                    tr.press("break")
                tr.press("confirm")
            elif a == "shot":
                self.trace_shot(tr, action)
                tr.press("confirm")
                tr.wait(500)
            elif a == "undo":
                tr.long_press("confirm")
            else:
                raise ValueError("no trace for %s action %r" % (self.id, a))

    def trace_shot(self, tr, action):
        """What the table sees of one shot before the confirm that ends it."""
        raise NotImplementedError


class Generic(HostGame):
    """A game the host has no module for: shown from its state's shape alone."""

    def __init__(self, game_id):
        self.id = game_id
        self.name = str(game_id) if game_id else "no game"
        self.sheet_name = self.name

    def side_names(self, players, config=None):
        return alternate_names(players or [], 2)

    def named(self, players, config=None):
        return [True] * len(self.side_names(players, config))

    def valid(self, rec, config):
        return type(rec.get("a")) is str

    def describe(self, rec, before, after, names, config):
        bits = []
        for k, v in sorted(rec.items()):
            if k in ("a", "seq", "t", "link"):
                continue
            if k in ("player", "side") and type(v) is int and 0 <= v < len(names):
                v = names[v]
            bits.append("%s %s" % (k, v if type(v) in (str, int) else json.dumps(v)))
        return ("%s%s" % (rec["a"], ": " + ", ".join(bits) if bits else "")), []


# -- shape-based helpers ---------------------------------------------------------------------

def is_num(x):
    return type(x) in (int, float)


def per_side(st, n_sides):
    """The state's per-side lists of numbers: [(key, list)], SCORE_KEYS first."""
    lists = []
    for k in sorted(st):
        v = st[k]
        if type(v) is list and len(v) >= 2 and all(is_num(x) for x in v) and (
                not n_sides or len(v) == n_sides or n_sides < 2):
            lists.append((k, v))
    lists.sort(key=lambda kv: (SCORE_KEYS.index(kv[0]) if kv[0] in SCORE_KEYS
                               else len(SCORE_KEYS), kv[0]))
    return lists


def headline(st):
    bits = []
    for k in ("set", "turns", "hands", "round", "frame"):
        if is_num(st.get(k)):
            bits.append("%s %s" % (k.rstrip("s") if k != "set" else k, st[k]))
    return ", ".join(bits)


def clock(ms):
    s = ms // 1000
    return "%d:%02d:%02d" % (s // 3600, s // 60 % 60, s % 60) if s >= 3600 else "%d:%02d" % (
        s // 60, s % 60)


def winner_name(names, w):
    return "" if w is None else ("draw" if w == "draw" else names[w])


def pad_names(names):
    """Names escaped for a terminal and padded to one width."""
    shown = [printable(n) for n in names]
    return shown, max([len(n) for n in shown] + [0])


# -- sensor traces ---------------------------------------------------------------------------

def strike(tr, down, pins, lining=(2000, 6000), settle=4500, then=None):
    """One shot at a pin table, as the tilt switches see it: the shooter lines up (a random
    pause), strikes; each pin knocked down leaves its base 0.3-1.2 s later (some land back on
    their spot and still count, FP-19); a standing pin may wobble without falling (FP-21);
    `then(t_strike)` adds what else the shot does (balls through pockets); the window settles
    `settle` ms after the strike. Random draws in this order, whatever the table."""
    tr.wait(tr.rng.randint(*lining))
    t0 = tr.t
    for p in down:
        back = tr.rng.random() < 0.3
        tr.pin_fall(p, t0 + tr.rng.randint(300, 1200), tr.rng.randint(60, 400) if back else 1500)
    standing = [p for p in pins if p not in down]
    if standing and tr.rng.random() < 0.5:
        tr.wobble(tr.rng.choice(standing), t0 + tr.rng.randint(200, 1500))
    if then is not None:
        then(t0)
    tr.t = t0 + settle


def foul_list(tr, fouls, codes):
    """Mark each foul on the table's foul list (docs/scoring-at-the-table.md): "foul" opens it
    and moves down, "confirm" marks the code under the cursor and closes it."""
    for code in fouls:
        for _ in range(codes.index(code) + 1):
            tr.press("foul")
        tr.press("confirm")


def keypad_trace(game, tr, head, actions):
    """A scorepad game's trace: the keys a scorer types for each action (docs/scorepad.md)."""
    from scoreboard.rules import new_game

    rules = new_game(head["game"], head.get("config"))
    for action in actions:
        rules.apply(action)  # the log must be legal: a refused action stops here
        if action["a"] != "undo":
            tr.wait(tr.rng.randint(4000, 15000))  # the hand (or the throw) is played
        tr.keys("D#" if action["a"] == "undo" else game.keys(action))
