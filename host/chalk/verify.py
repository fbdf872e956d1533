"""Check archived games and match logs: the hash chain, the board's signature, the rules, and
the chain of games of each board (docs/league.md, docs/match-log.md).

Per game:

- **the chain**: every record's link is recomputed from the header on (SHA-256 over the link
  before it and the record's canonical bytes) and compared with the link kept beside it (in the
  archive, or on the log's line); seqs follow one another with no hole, repeat or change of
  order, up to the end record;
- **the signature**: the board signed a chain head; the head must be the link of the record
  at its seq, and the signature must hold under the key the key store keeps for that board: a
  board key (ECDSA P-256, the board holds the private half) or a legacy key (HMAC, made on the
  host: the pub holds it);
- **the rules**: the actions are replayed through scoreboard.rules on CPython; each state the
  board reported (archive) must be the replay's, and the winner in the end record (and in the
  archive's games table) must be the one the replay gives.

A game is **finished** only when the board's signature covers its end record; one whose
signature stops earlier is **in progress, signed up to seq N**, whatever else it carries. When
the key store knows the board, a game with no chain or no signature is **broken** (stripped),
not unsigned. Over a set of games (several logs, or an archive), each board's games must form
one chain: no game missing from the sequence, none given twice, no two games naming the same
predecessor (check_set).

The grades, their exit codes (docs/league.md, from worst): broken 1, the set of games does not
hold together 7, unreadable 2, unknown key 4, unsigned 3, legacy 6, in progress 5, finished 0.

For other programs (a league's automatic checks): verdict_of_log(), verdict_of_records() and
check_set() take a log or records and a KeyStore and return Verdicts; nothing here prints.
"""

import hashlib
import json
from collections import namedtuple

from chalk import chainhost
from chalk.errors import ChalkError
from chalk.store import load_cell
from scoreboard import chain, matchlog
from scoreboard.rules import RuleError

EXIT_OK = 0
EXIT_BROKEN = 1
EXIT_UNREADABLE = 2
EXIT_UNSIGNED = 3
EXIT_UNKNOWN_KEY = 4
EXIT_IN_PROGRESS = 5
EXIT_LEGACY = 6
EXIT_SEQUENCE = 7

# A game's grade, by name (the names `chalk verify`'s library, the league's records and pages
# and a venue's MQTT messages all use), and its exit code.
GRADES = {"ok-finished": EXIT_OK, "ok-in-progress": EXIT_IN_PROGRESS, "legacy": EXIT_LEGACY,
          "unsigned": EXIT_UNSIGNED, "unknown-key": EXIT_UNKNOWN_KEY,
          "unreadable": EXIT_UNREADABLE, "broken": EXIT_BROKEN}
AUTHENTIC = ("ok-finished", "ok-in-progress", "legacy")  # grades whose signature holds
# Worst first: the exit code of several games is that of the worst.
_WORST = (EXIT_BROKEN, EXIT_SEQUENCE, EXIT_UNREADABLE, EXIT_UNKNOWN_KEY, EXIT_UNSIGNED,
          EXIT_LEGACY, EXIT_IN_PROGRESS, EXIT_OK)

# Problem kinds. These mean the records were changed, removed, added or stripped:
BROKEN = ("link", "signature", "replay", "state", "archive", "stripped", "added")
UNSIGNED = "unsigned"
UNKNOWN_KEY = "unknown_key"
UNCOVERED = "not_covered"  # records or keys no signature covers (yet): said, not an error

Difference = namedtuple("Difference", "game seq expected reported")
Difference.__doc__ = """A state the board reported that the replay does not give: game id,
seq, what the replay gives (a state dict, or the rules' refusal as text) and what the board
reported (a state dict, or a note)."""

Problem = namedtuple("Problem", "kind seq where text")
Problem.__doc__ = """One thing that does not hold: its kind (BROKEN, UNSIGNED, UNKNOWN_KEY,
UNCOVERED), the seq of the record (None for the game as a whole), where it is ("seq 12",
"line 5 (seq 12)") and what is wrong."""

Verdict = namedtuple("Verdict", "grade code finished seq last end_seq device game game_no prev "
                     "kid key reasons problems first head links source")
Verdict.__doc__ = """What one game is worth to a league. grade: ok-finished, ok-in-progress,
legacy, unsigned, unknown-key, unreadable or broken (GRADES); code: its exit code; finished: the
board's signature covers the end record; seq: the seq the signature covers up to (None: none
holds); last: the last record's seq; end_seq: the end record's seq, if the records have one;
device, game (its id), game_no, prev (the header's {"game_no", "seq", "link"} of the board's
game before, or None): as the header says them; kid: the key that signed, key: its kind ("board"
or "legacy"); reasons: one line per problem; problems: the Problem list; first, head: the links
(hex) of the first and last records, links: {seq: link hex}; source: the file or archived game
id."""

Result = namedtuple("Result", "game actions compared differences problems signer verdict")
Result.__doc__ = """One archived game checked. game: the games() row; actions: how many;
compared: reported states compared; differences: Difference list; problems: Problem list;
signer: the key id that signed it, when the signature holds; verdict: its Verdict."""

SetProblem = namedtuple("SetProblem", "device kind game_no text")
SetProblem.__doc__ = """Something wrong with a board's chain of games in a set: kind "missing"
(games left out of the sequence), "repeated" (a game given twice) or "fork" (two games with
one number or one predecessor: a board rewound, or a clone)."""

OUTSIDE = ("the archive's own times (when each game was archived and finished) are this "
           "computer's clock, outside every signature; the board's \"started\" and \"ended\" "
           "are inside")


def _hex(b):
    return chain.hexlify(b) if b is not None else None


class Chained:
    """A game as records: what check() needs, from the archive, a match log or the link.

    header: the header payload as the board journaled it; header_seq: its seq; actions:
    [(seq, rec)] with rec a `rec` payload (seq, t, a, ...); end: (seq, payload) or None;
    signed: {"seq", "head", "sig", "kid"} or None; links: {seq: link hex or None} as kept
    beside the records (None: nothing kept to compare); where(seq): how to name a record;
    chained: the game came with its chain (a match log without "chain" did not); added: header
    keys given beside the header the board journaled (a log's chain.added)."""

    def __init__(self, header, header_seq, actions, end=None, signed=None, links=None,
                 where=None, chained=True, added=()):
        self.header = header
        self.header_seq = header_seq
        self.actions = actions
        self.end = end
        self.signed = signed
        self.links = links
        self.where = where or (lambda seq: "seq %s" % seq)
        self.chained = chained
        self.added = list(added)


def check(c, keys, problems):
    """Check a Chained game: the chain, the signature, the replay. Appends to `problems`;
    returns (states by seq from the replay, what the signature covers: a dict with "kid",
    "key", "seq", "links" {seq: link bytes}, "last")."""
    where = c.where
    links = {}
    last = c.header_seq
    if c.chained:
        links, last = _chain(c, problems)
    else:
        last = max([c.header_seq] + [s for s, _r in c.actions])
    info = _judge(c, keys, links, last, problems)
    info["links"] = links
    info["last"] = last

    # -- the rules --------------------------------------------------------------------------
    states = {}
    try:
        rules = matchlog.new_game(c.header)
    except (matchlog.LineError, AttributeError) as e:
        problems.append(Problem("replay", c.header_seq, where(c.header_seq),
                                "no game can be played from this header: %s" % e))
        return states, info
    states[c.header_seq] = rules.state()
    refused = False
    for seq, rec in c.actions:
        try:
            states[seq] = rules.apply(matchlog.strip_meta(rec))
        except (RuleError, AttributeError, TypeError, KeyError, ValueError) as e:
            problems.append(Problem("replay", seq, where(seq), "the rules refuse this action: "
                                    "%s" % e))
            refused = True
            break
    if c.end is not None and not refused:
        outcome = rules.outcome()
        want = outcome["winner"] if outcome else None
        got = c.end[1].get("winner")
        if got != want:
            problems.append(Problem("replay", c.end[0], where(c.end[0]),
                                    "the end record says winner %s, the replay of the actions "
                                    "gives %s" % (_j(got), _j(want))))
    return states, info


def _chain(c, problems):
    where = c.where
    stored = c.links
    first_bad = [None]

    def note_link(seq, link, what):
        if stored is None or first_bad[0] is not None:
            return
        kept = stored.get(seq, "absent")
        if kept == "absent":
            first_bad[0] = seq
            problems.append(Problem("link", seq, where(seq), "no chain link kept for this %s: "
                                    "it was inserted after the board sent it" % what))
        elif kept != _hex(link):
            first_bad[0] = seq
            problems.append(Problem("link", seq, where(seq), "the chain link does not hold: "
                                    "this %s was changed (its link was made from other "
                                    "bytes)" % what))

    links = {}
    try:
        link = chain.step(chain.ZERO, chain.record(c.header_seq, "H", c.header))
    except chain.CanonError as e:
        link = None
        problems.append(Problem("link", c.header_seq, where(c.header_seq),
                                "the header cannot be chained: %s" % e))
    links[c.header_seq] = link
    note_link(c.header_seq, link, "header")
    prev = c.header_seq
    order_bad = False
    records = [(seq, rec, "action") for seq, rec in c.actions]
    if c.end is not None:
        records.append((c.end[0], {"seq": c.end[0], "type": "E", "end": c.end[1]}, "end record"))
    for seq, rec, what in records:
        if not order_bad and seq != prev + 1:
            order_bad = True
            if seq <= prev:
                text = "seq %d after seq %d: a record repeated or out of order" % (seq, prev)
            else:
                text = ("seq %d follows seq %d: record%s %s missing (the board numbers a game's "
                        "records one by one)" % (seq, prev, "" if seq == prev + 2 else "s",
                                                 _range(prev + 1, seq - 1)))
            problems.append(Problem("link", seq, where(seq), text))
        prev = max(prev, seq)
        if link is not None:
            try:
                link = chain.step(link, chainhost.of_rec(rec))
            except chain.CanonError as e:
                problems.append(Problem("link", seq, where(seq), "cannot be chained: %s" % e))
                link = None
        links[seq] = link
        note_link(seq, link, what)
    last = records[-1][0] if records else c.header_seq
    return links, last


def _signed(c, problems):
    """The signed head to judge the game by: the one at the highest seq of those it carries
    (older firmware put its signature in the end record)."""
    signed = c.signed
    end_signed = None
    if c.end is not None and isinstance(c.end[1], dict) and "head" in c.end[1]:
        e = c.end[1]
        end_signed = {"seq": c.end[0], "head": e.get("head"), "sig": e.get("sig"),
                      "kid": e.get("kid")}
    if signed is None:
        return end_signed
    if end_signed is None:
        return signed
    if signed.get("seq") == end_signed["seq"]:
        if signed != end_signed:
            problems.append(Problem("signature", c.end[0], c.where(c.end[0]),
                                    "the signed head kept for the game is not the end "
                                    "record's"))
        return end_signed
    return end_signed if type(signed.get("seq")) is int and signed["seq"] < end_signed["seq"] \
        else signed


def _judge(c, keys, links, last, problems):
    """The signature: appends what does not hold; returns {"kid", "key", "seq"} of what it
    covers (all None when nothing holds)."""
    out = {"kid": None, "key": None, "seq": None}
    where = c.where
    device = c.header.get("device") if type(c.header.get("device")) is str else None
    game_no = c.header.get("game_no")
    knows = keys.knows(device) if keys is not None and device else None
    if knows == "board":
        bk = keys.board_key(device)
        known = " (board %s signs every game with its own key %s, kept in the key store since " \
            "%s)" % (device, bk["kid"] if bk else "?", (bk or {}).get("added") or "?")
    else:
        known = ""

    def strip(text):
        # Stripping is breaking when the board is known to sign: a board-held key signs
        # every game, and firmware with a legacy key signed every end.
        if knows == "board" or (knows == "legacy" and c.end is not None and c.chained):
            problems.append(Problem("stripped", None, "game", text + (
                known or " (board %s is known by a legacy key, and its firmware signed every "
                "game's end)" % device) + ": stripped, or never the board's"))
        else:
            problems.append(Problem(UNSIGNED, None, "game", text + (
                "; board %s is known only by a legacy key, so a game without a signature "
                "cannot be told from one stripped of it" % device if knows == "legacy" else
                ": it cannot be checked against any board")))

    if not c.chained:
        strip("no \"chain\" in the header (a log exported before chains, or by another tool)")
        return out
    s = _signed(c, problems)
    if s is None or s.get("sig") is None:
        strip("no signature of the board" if s is None else
              "the chain head at seq %s carries no signature (older firmware deployed without "
              "a key)" % s.get("seq"))
        return out
    seq, head, sig, kid = s.get("seq"), s.get("head"), s.get("sig"), s.get("kid")
    at = where(seq) if type(seq) is int else "game"
    bad = None
    if type(seq) is not int:
        bad = "the signed head's seq is not a number: %s" % chainhost.describe(seq)
    elif not chainhost.is_hex(head, 64):
        bad = "the signed head is not 64 hex digits: %s" % chainhost.describe(head)
    elif not chainhost.is_hex(kid, 16):
        bad = "the signing key's id is not 16 hex digits: %s" % chainhost.describe(kid)
    elif not (chainhost.is_hex(sig, 128) or chainhost.is_hex(sig, 64)):
        bad = ("the signature is not 128 hex digits (a board key's) nor 64 (a legacy key's): "
               "%s" % chainhost.describe(sig))
    if bad is not None:
        problems.append(Problem("signature", seq if type(seq) is int else None, at, bad))
        return out
    if seq > last:
        problems.append(Problem("link", seq, at, "the board signed the chain up to seq %d, but "
                                "the records end at seq %d: records were removed" % (seq, last)))
        return out
    if seq not in links:
        problems.append(Problem("link", seq, at, "the board signed the chain at seq %d, which "
                                "is not among the records" % seq))
        return out
    if links[seq] is None or _hex(links[seq]) != head:
        problems.append(Problem("link", seq, at, "the chain recomputed from the records does "
                                "not reach the head the board signed at seq %d: a record up to "
                                "there was changed" % seq))
        return out
    entry = keys.find(kid) if keys is not None else None
    if entry is None:
        if knows == "board":
            problems.append(Problem("signature", seq, at, "signed with key %s, which is not "
                                    "board %s's%s: a forgery, or the board has a new key "
                                    "(enrol it again: `chalk keys enrol --replace %s`)" % (
                                        kid, device, known, keys.board_key(device)["kid"])))
        else:
            problems.append(Problem(UNKNOWN_KEY, seq, at, "signed with key %s%s, which the key "
                                    "store does not hold: enrol the board over USB (`chalk "
                                    "keys enrol`) or import its key from a file the league "
                                    "signed (`chalk keys import FILE`)" % (
                                        kid, " of board %s" % device if device else "")))
        return out
    if entry["kind"] == "league":
        problems.append(Problem("signature", seq, at, "signed with league key %s (%s), not a "
                                "board's" % (kid, entry["name"])))
        return out
    if entry.get("device") not in (None, device):
        problems.append(Problem("signature", seq, at, "signed with the key of board %s, but "
                                "the header names board %s" % (entry["device"], device)))
        return out
    link = links[seq]
    if entry["kind"] == "board":
        if not chainhost.is_hex(sig, 128):
            problems.append(Problem("signature", seq, at, "a board key signs with 128 hex "
                                    "digits; this signature under board key %s has 64 (a "
                                    "legacy one)" % kid))
            return out
        ok = chainhost.head_ok(entry["pub"], device or "", seq, link, sig)
    else:
        bk = [e for e in keys.for_device(device) if e["kind"] == "board"] if device else []
        since = min([e.get("since") or 0 for e in bk]) if bk else None
        if since is not None and type(game_no) is int and game_no >= since:
            problems.append(Problem("signature", seq, at, "game %d claims a legacy signature "
                                    "(key %s, which the pub holds), but board %s signs its "
                                    "games with its own key from game %d on: downgraded" % (
                                        game_no, kid, device, since)))
            return out
        ok = chainhost.legacy_ok(bytes.fromhex(entry["key"]), device or "", seq, link, sig)
    if not ok:
        problems.append(Problem("signature", seq, at, "the signature does not hold under key "
                                "%s: the records or the signature were changed" % kid))
        return out
    out.update(kid=kid, key=entry["kind"], seq=seq)
    if "replaced" in entry:
        problems.append(Problem(UNCOVERED, None, "game", "key %s was replaced by %s on %s: what "
                                "it signed before that still stands" % (
                                    kid, entry.get("replaced_by"), entry["replaced"])))
    if c.added:
        kind = "added" if entry["kind"] == "board" else UNCOVERED
        problems.append(Problem(kind, c.header_seq, where(c.header_seq), "header key%s %s %s "
                                "not in the board's chain (added after it signed)" % (
                                    "" if len(c.added) == 1 else "s", ", ".join(
                                        chainhost.describe(k, 20) if type(k) is not str else k
                                        for k in c.added),
                                    "is" if len(c.added) == 1 else "are")))
    if seq < last:
        if c.end is not None and seq < c.end[0]:
            text = ("the end record (seq %d) is not signed: in progress, signed up to seq %d; "
                    "records %s are not covered yet" % (c.end[0], seq, _range(seq + 1, last)))
        else:
            text = ("records %s are after the last signed head (seq %d): not covered by a "
                    "signature yet" % (_range(seq + 1, last), seq))
        problems.append(Problem(UNCOVERED, seq + 1, where(seq + 1), text))
    return out


def _range(a, b):
    return "seq %d" % a if a == b else "seqs %d..%d" % (a, b)


def _j(v):
    return json.dumps(v)


def verdict(c, problems, info, source=None, differences=()):
    """The Verdict of a game checked by check()."""
    kinds = {p.kind for p in problems}
    finished = (info["seq"] is not None and c.end is not None and info["seq"] == c.end[0])
    if differences or kinds & set(BROKEN):
        grade = "broken"
    elif UNKNOWN_KEY in kinds:
        grade = "unknown-key"
    elif UNSIGNED in kinds:
        grade = "unsigned"
    elif info["key"] == "legacy":
        grade = "legacy"
    elif finished:
        grade = "ok-finished"
    else:
        grade = "ok-in-progress"
    links = {s: _hex(v) for s, v in info.get("links", {}).items()}
    last = info.get("last", c.header_seq)
    prev = c.header.get("prev")
    if not (isinstance(prev, dict) and type(prev.get("game_no")) is int
            and type(prev.get("seq")) is int and chainhost.is_hex(prev.get("link"), 64)):
        prev = None
    device = c.header.get("device")
    game = c.header.get("game")
    game_no = c.header.get("game_no")
    return Verdict(grade, GRADES[grade], finished, info["seq"], last,
                   c.end[0] if c.end is not None else None,
                   device if type(device) is str else None, game if type(game) is str else None,
                   game_no if type(game_no) is int else None, prev, info["kid"], info["key"],
                   [p.text for p in problems], list(problems), links.get(c.header_seq),
                   links.get(last), links, source)


def unreadable(source, text):
    """The Verdict of something that cannot be read as a game at all."""
    p = Problem("unreadable", None, "file", text)
    return Verdict("unreadable", EXIT_UNREADABLE, False, None, None, None, None, None, None,
                   None, None, None, [text], [p], None, None, {}, source)


# -- the archive ---------------------------------------------------------------------------------

def verify_game(archive, game, keys=None, board_last=None):
    """Check one archived game (a games() row); returns Result. `board_last`: the board's last
    seq held, when this is the board's newest game (records missing at its end show)."""
    gid = game["id"]
    reported = archive.states(gid)
    kept = archive.links(gid)
    problems = []
    diffs = []
    rows = archive.actions(gid)
    actions = []
    none = {"kid": None, "key": None, "seq": None}
    if game.get("damaged"):  # a header or end cell that is not JSON any more
        problems.append(Problem("archive", game["seq"], "seq %d" % game["seq"],
                                "the %s cell is damaged (not JSON)"
                                % " and ".join(game["damaged"])))
        c = Chained({}, game["seq"], [])
        return Result(game, len(rows), 0, diffs, problems, None,
                      verdict(c, problems, none, gid))
    for seq, t, line in rows:
        rec = load_cell(line)
        if type(rec) is not dict or rec.get("seq") != seq or rec.get("t") != t:
            problems.append(Problem("archive", seq, "seq %d" % seq, "the actions row does not "
                                    "hold a match-log line for seq %d at t %s: %s"
                                    % (seq, t, _clip(str(line)))))
            continue
        actions.append((seq, rec))
    header = game["header"]
    end = (game["end_seq"], game["end"]) if game["end_seq"] is not None else None
    if type(header) is not dict:
        problems.append(Problem("archive", game["seq"], "seq %d" % game["seq"],
                                "the header is not a JSON object"))
        c = Chained({}, game["seq"], [])
        return Result(game, len(rows), 0, diffs, problems, None,
                      verdict(c, problems, none, gid))
    c = Chained(header, game["seq"], actions, end, archive.head(gid),
                {s: v[0] for s, v in kept.items()})
    states, info = check(c, keys, problems)
    # What the games and boards tables say must be what the chained records say.
    for col, key in (("game", "game"), ("game_no", "game_no"), ("started", "started")):
        if game[col] != header.get(key):
            problems.append(Problem("archive", game["seq"], "seq %d" % game["seq"],
                                    "the games table says %s %s, the header %s"
                                    % (col, _j(game[col]), _j(header.get(key)))))
    if header.get("device") is not None and header["device"] != game["device"]:
        problems.append(Problem("archive", game["seq"], "seq %d" % game["seq"],
                                "the boards table says device %s, the header %s"
                                % (_j(game["device"]), _j(header["device"]))))
    if end is not None:
        w = end[1].get("winner") if isinstance(end[1], dict) else None
        if game["winner"] != (w if type(w) is int else None):
            problems.append(Problem("archive", end[0], "seq %d" % end[0],
                                    "the games table says winner %s, the end record %s"
                                    % (_j(game["winner"]), _j(w))))
    records = {game["seq"]} | {s for s, _r in actions} | ({end[0]} if end else set())
    for seq in sorted(set(kept) - records):
        problems.append(Problem("archive", seq, "seq %d" % seq, "record seq %d is gone: its "
                                "chain link is kept, the record was deleted" % seq))
    last = max(records)
    if board_last is not None and board_last > last and end is None:
        problems.append(Problem("archive", last + 1, "seq %d" % (last + 1), "the archive held "
                                "the board's records up to seq %d; %s are gone"
                                % (board_last, _range(last + 1, board_last))))
    # States: each kept one is the replay's, and none was deleted or changed since stored.
    compared = 0
    for seq, (_link, digest) in sorted(kept.items()):
        if digest is not None and seq not in reported:
            problems.append(Problem("state", seq, "seq %d" % seq, "the state the board "
                                    "reported after seq %d was deleted" % seq))
    for seq in sorted(reported):
        st = reported[seq]
        digest = kept.get(seq, (None, None))[1]
        if digest is not None and hashlib.sha256(_canon(st)).hexdigest() != digest:
            problems.append(Problem("state", seq, "seq %d" % seq, "the state stored for seq %d "
                                    "was changed since the board reported it" % seq))
        if seq in states:
            compared += 1
            if st != states[seq]:
                diffs.append(Difference(gid, seq, states[seq], st))
    for p in problems:
        if p.kind == "replay" and p.seq in reported and p.seq != (end or (None,))[0]:
            diffs.append(Difference(gid, p.seq, "refused: %s" % p.text.split(": ", 1)[-1],
                                    reported.get(p.seq)))
    v = verdict(c, problems, info, gid, diffs)
    return Result(game, len(rows), compared, diffs, problems,
                  info["kid"] if v.seq is not None else None, v)


def _canon(state):
    try:
        return chain.canon(state)
    except chain.CanonError:
        return json.dumps(state, separators=(",", ":"), sort_keys=True,
                          ensure_ascii=False).encode()


def _clip(text, width=60):
    text = str(text)
    return text if len(text) <= width else text[:width - 3] + "..."


def verify(archive, ids=None, keys=None):
    """Check the games with these ids (None: every game); a list of Result."""
    games = [archive.game(i) for i in ids] if ids else archive.games()
    newest = {}
    for g in archive.games():
        newest[g["board_id"]] = g["id"]
    out = []
    for g in games:
        board_last = None
        if newest.get(g["board_id"]) == g["id"]:
            board_last = (archive.board_info(g["board_id"]) or {}).get("last_seq")
        out.append(verify_game(archive, g, keys, board_last))
    return out


# -- a match log on its own ----------------------------------------------------------------------

def _lines_of(source):
    """The text lines of a log: a path ("-": stdin), or text, or lines. ChalkError (exit 2)
    if it cannot be read. A UTF-8 byte order mark first is accepted (docs/match-log.md)."""
    if isinstance(source, (list, tuple)):
        lines = list(source)
        if lines and isinstance(lines[0], str) and lines[0].startswith("\ufeff"):
            lines[0] = lines[0][1:]
        return lines
    name = str(source)
    try:
        if name == "-":
            import sys

            data = sys.stdin.buffer.read()
        else:
            with open(source, "rb") as f:
                data = f.read()
        text = data.decode("utf-8-sig")
    except FileNotFoundError:
        raise ChalkError("no match log %s" % name, code=EXIT_UNREADABLE)
    except IsADirectoryError:
        raise ChalkError("%s is a directory, not a match log" % name, code=EXIT_UNREADABLE)
    except UnicodeDecodeError as e:
        raise ChalkError("%s is not UTF-8 text (byte %d)" % (name, e.start),
                         code=EXIT_UNREADABLE)
    except OSError as e:
        raise ChalkError("cannot read %s: %s" % (name, e.strerror or e), code=EXIT_UNREADABLE)
    return text.splitlines()


def read_log(path, name=None):
    """A match log (a path, "-" for stdin, or a list of lines) as (Chained, summary dict);
    ChalkError (exit 2) if it cannot be read as a log at all."""
    lines = _lines_of(path)
    name = name or (str(path) if not isinstance(path, (list, tuple)) else "the log")
    numbered = [(i + 1, ln) for i, ln in enumerate(lines) if ln.strip()]
    if not numbered:
        raise ChalkError("%s: empty match log: no header line" % name, code=EXIT_UNREADABLE)
    objs = []
    for n, ln in numbered:
        try:
            obj = json.loads(ln)
        except (ValueError, RecursionError):
            obj = None
        if type(obj) is not dict:
            raise ChalkError("%s:%d: not a JSON object: %s" % (name, n, _clip(ln)),
                             "`chalk replay %s` lists every unreadable line" % name,
                             code=EXIT_UNREADABLE)
        objs.append((n, obj))
    hn, head = objs[0]
    bad = matchlog.check_header(head)
    if bad:
        raise ChalkError("%s:%d: %s" % (name, hn, bad[0]), code=EXIT_UNREADABLE)
    info = head.get("chain")
    by_seq = {}
    links = None
    signed = end = None
    header_seq = 0
    added = []
    payload = {k: v for k, v in head.items() if k != "chain"}
    chained = "chain" in head
    if chained and not isinstance(info, dict):
        raise ChalkError("%s:%d: \"chain\" is %s, not an object" % (
            name, hn, chainhost.describe(info)), code=EXIT_UNREADABLE)
    if chained:
        added = info.get("added") if isinstance(info.get("added"), list) else []
        payload = {k: v for k, v in payload.items() if k not in added}
        added = [k for k in added if k in head]
        header_seq = info.get("seq") if type(info.get("seq")) is int else 0
        links = {header_seq: info.get("link")}
        if isinstance(info.get("end"), dict):
            e = info["end"]
            if type(e.get("seq")) is int and isinstance(e.get("end"), dict):
                end = (e["seq"], e["end"])
                links[e["seq"]] = e.get("link")
        if isinstance(info.get("signed"), dict):
            signed = {k: info["signed"].get(k) for k in ("seq", "head", "sig", "kid")}
    by_seq[header_seq] = hn
    actions = []
    for n, obj in objs[1:]:
        seq = obj.get("seq")
        if type(seq) is not int:
            raise ChalkError("%s:%d: \"seq\" must be an integer" % (name, n),
                             code=EXIT_UNREADABLE)
        rec = {k: v for k, v in obj.items() if k != "link"}
        if links is not None:
            # A repeated seq keeps its first line's link: the repeat is caught by the order.
            links.setdefault(seq, obj.get("link"))
            if seq in by_seq and obj.get("link") != links[seq]:
                links[seq] = None
        by_seq.setdefault(seq, n)
        actions.append((seq, rec))
    if end is not None:
        by_seq.setdefault(end[0], hn)

    def where(seq):
        n = by_seq.get(seq)
        if n is None:
            return "seq %s" % seq
        if n == hn and seq != header_seq:
            return "line %d (the header's end record, seq %s)" % (n, seq)
        return "line %d (seq %s)" % (n, seq)

    c = Chained(payload, header_seq, actions, end, signed, links, where, chained, added)
    summary = {"path": name, "game": head.get("game"), "device": head.get("device"),
               "game_no": head.get("game_no"), "chained": chained}
    return c, summary


def verdict_of_log(source, keys, name=None):
    """The Verdict of a match log: a path ("-": stdin), a text, or its lines. Never raises for
    what the log holds: an unreadable one is a Verdict of grade "unreadable"."""
    if isinstance(source, str) and "\n" in source:
        source = source.splitlines()
    label = name or (str(source) if not isinstance(source, (list, tuple)) else "the log")
    try:
        c, _summary = read_log(source, label)
    except ChalkError as e:
        return unreadable(label, e.message)
    problems = []
    _states, info = check(c, keys, problems)
    return verdict(c, problems, info, label)


def verdict_of_records(records, keys, signed=None, source=None):
    """The Verdict of a game as the board's link gives it: `records` its `rec` payloads (the
    header first, then its actions, then its end if it has one), `signed` a `sig` payload
    (the board's signed head) or None."""
    problems = []
    recs = [r for r in records if isinstance(r, dict)]
    head = recs[0] if recs else None
    if head is None or head.get("type") != "H" or not isinstance(head.get("header"), dict) \
            or type(head.get("seq")) is not int:
        return unreadable(source, "the records do not start with a game header")
    actions, end = [], None
    for r in recs[1:]:
        if type(r.get("seq")) is not int:
            return unreadable(source, "a record without a seq: %s" % _clip(_j(r)))
        if r.get("type") == "E" and isinstance(r.get("end"), dict):
            end = (r["seq"], r["end"])
        elif r.get("type") in (None, "A"):
            actions.append((r["seq"], r))
        else:
            return unreadable(source, "a record of an unknown type: %s" % _clip(_j(r)))
    if signed is not None:
        signed = {k: signed.get(k) for k in ("seq", "head", "sig", "kid")} \
            if isinstance(signed, dict) else {"seq": None}
    c = Chained(head["header"], head["seq"], actions, end, signed)
    _states, info = check(c, keys, problems)
    return verdict(c, problems, info, source)


def verify_log(path, keys=None):
    """Check a match log file on its own; its Verdict (ChalkError, exit 2, if unreadable)."""
    c, _summary = read_log(path)
    problems = []
    _states, info = check(c, keys, problems)
    return verdict(c, problems, info, str(path))


# -- a board's chain of games ------------------------------------------------------------------

def check_set(verdicts):
    """What is wrong with each board's chain of games across a set of Verdicts (several logs,
    an archive): SetProblem list, per device in order. Only games whose signature holds take
    part (the others are not the board's word)."""
    out = []
    boards = {}
    for v in verdicts:
        if v.grade in AUTHENTIC and v.device and \
                v.game_no is not None:
            boards.setdefault(v.device, []).append(v)
    for device in sorted(boards):
        vs = boards[device]
        by_no = {}
        for v in vs:
            by_no.setdefault(v.game_no, []).append(v)
        games = {}  # (game_no, i) -> the verdicts of that one game
        for no in sorted(by_no):
            same = _one_game(by_no[no])
            for i, copies in enumerate(same):
                games[(no, i)] = copies
                if len(copies) > 1:
                    out.append(SetProblem(device, "repeated", no, "board %s: game %d is given "
                                          "%d times (%s)" % (device, no, len(copies), ", ".join(
                                              str(c.source) for c in copies))))
            if len(same) > 1:
                out.append(SetProblem(device, "fork", no, "board %s: %d different games are "
                                      "numbered %d (%s): the board was rewound or cloned" % (
                                          device, len(same), no, ", ".join(
                                              str(c[0].source) for c in same))))
        nos = sorted(by_no)
        for a, b in zip(nos, nos[1:]):
            if b > a + 1:
                out.append(SetProblem(device, "missing", a + 1, "board %s: %s missing from the "
                                      "sequence (games %d and %d are given)" % (
                                          device, "game %d is" % (a + 1) if b == a + 2 else
                                          "games %d..%d are" % (a + 1, b - 1), a, b)))
        claims = {}
        for (no, _first), copies in sorted(games.items(), key=lambda kv: kv[0][0]):
            v = copies[0]
            p = v.prev
            if p is None:
                continue
            claims.setdefault((p["game_no"], p["seq"], p["link"]), []).append(v)
            if p["game_no"] != no - 1:
                out.append(SetProblem(device, "fork", no, "board %s: game %d names game %d as "
                                      "the one before it (the board numbers its games one by "
                                      "one)" % (device, no, p["game_no"])))
                continue
            for pred in by_no.get(p["game_no"], []):
                if pred.last is None:
                    continue
                if pred.last == p["seq"] and pred.head != p["link"]:
                    text = ("game %d follows another game %d than the one given (%s): the "
                            "board was rewound or cloned" % (no, p["game_no"], pred.source))
                elif pred.last > p["seq"] and pred.links.get(p["seq"]) != p["link"]:
                    text = ("game %d follows another game %d than the one given (%s): the "
                            "board was rewound or cloned" % (no, p["game_no"], pred.source))
                elif pred.last > p["seq"]:
                    text = ("game %d (%s) goes on past seq %d, where game %d began: the board "
                            "was rewound" % (p["game_no"], pred.source, p["seq"], no))
                else:
                    continue  # given in progress, before it ended: nothing to compare
                out.append(SetProblem(device, "fork", no, "board %s: %s" % (device, text)))
                break
        for (pno, _seq, _link), vs2 in sorted(claims.items(), key=lambda kv: kv[0][0]):
            firsts = {v.first for v in vs2}
            if len(firsts) > 1:
                out.append(SetProblem(device, "fork", pno, "board %s: %d games claim game %d "
                                      "as the one before them (%s): the board was rewound or "
                                      "cloned" % (device, len(firsts), pno, ", ".join(
                                          sorted({"game %s (%s)" % (v.game_no, v.source)
                                                  for v in vs2})))))
    return out


def _one_game(vs):
    """The verdicts of one board's game number, grouped by the game each is: copies of one game
    share their first link, and each one's last link is the others' link at that seq (two logs
    of one game, one exported under way and one finished, agree where both go). Two games with
    one header (a board rewound, replaying with the same players and no clock) differ there."""
    groups = []
    for v in vs:
        for g in groups:
            if _same_game(g[0], v):
                g.append(v)
                break
        else:
            groups.append([v])
    return groups


def _same_game(a, b):
    if a.first != b.first:
        return False
    if a.last is None or b.last is None:
        return True
    short, long_ = (a, b) if a.last <= b.last else (b, a)
    if short.last == long_.last:
        return short.head == long_.head
    link = long_.links.get(short.last)
    if link is not None:
        return link == short.head
    # Only the ends are known (kept verdicts): two games that both ended at other seqs differ.
    return short.end_seq is None


def set_code(verdicts, set_problems=()):
    """The exit code of a set: its worst game's, or EXIT_SEQUENCE when its chains of games do
    not hold together and no game is broken."""
    codes = [v.code for v in verdicts] + ([EXIT_SEQUENCE] if set_problems else [])
    for c in _WORST:
        if c in codes:
            return c
    return EXIT_OK


# -- reporting -----------------------------------------------------------------------------------

def _short(v):
    # Both sides with sorted keys, so a person can compare them by eye.
    return v if isinstance(v, str) else json.dumps(v, separators=(",", ":"), sort_keys=True)


def grade_text(v):
    """The verdict in words, for a league secretary."""
    if v.grade == "ok-finished":
        return "FINISHED: signed at its end (seq %d) by board key %s" % (v.seq, v.kid)
    if v.grade == "ok-in-progress":
        return "IN PROGRESS: signed up to seq %d by board key %s, not finished" % (v.seq, v.kid)
    if v.grade == "legacy":
        return "LEGACY: signed by legacy key %s (the pub holds this key)%s" % (
            v.kid, ", finished" if v.finished else ", in progress, signed up to seq %d" % v.seq)
    return {"broken": "BROKEN", "unsigned": "NOT SIGNED", "unknown-key": "UNKNOWN KEY",
            "unreadable": "UNREADABLE"}[v.grade]


def report(results):
    """The lines a person reads: one per game, then one per difference and problem."""
    out = []
    for r in results:
        g = r.game
        out.append("game %d (%s #%s on %s): %d actions, %d reported states compared: %s" % (
            g["id"], g["game"], g["game_no"], g["device"], r.actions, r.compared,
            grade_text(r.verdict)))
        for p in r.problems:
            out.append("  game %d %s: %s: %s" % (g["id"], p.where, p.kind.replace("_", " "),
                                                 p.text))
        for d in r.differences:
            out.append("  game %d seq %d: expected %s, reported %s" % (
                d.game, d.seq, _short(d.expected), _short(d.reported)))
    return out


def report_log(v):
    """The lines of one log's Verdict."""
    if v.grade == "unreadable":
        return ["%s: %s: %s" % (v.source, grade_text(v), v.reasons[0])]
    out = ["%s (%s #%s on %s): %s" % (v.source, v.game, v.game_no, v.device, grade_text(v))]
    for p in v.problems:
        out.append("  %s: %s: %s" % (p.where, p.kind.replace("_", " "), p.text))
    return out


def report_set(problems):
    return ["set: %s: %s" % (p.kind, p.text) for p in problems]


def exit_code(problems, differences=()):
    """The exit code of one game's problems (without knowing its key kind or its end: use a
    Verdict's code where there is one)."""
    kinds = {p.kind for p in problems}
    if differences or kinds & set(BROKEN):
        return EXIT_BROKEN
    if UNKNOWN_KEY in kinds:
        return EXIT_UNKNOWN_KEY
    if UNSIGNED in kinds:
        return EXIT_UNSIGNED
    return EXIT_OK


HINTS = {
    EXIT_BROKEN: "a record was changed, removed, added or reordered since the board signed it, "
                 "a signature was stripped, a key claims another board, or the rules refuse "
                 "an action",
    EXIT_SEQUENCE: "a board's games do not form one chain: a game is missing from the "
                   "sequence, given twice, or two games claim one predecessor (a rewound or "
                   "cloned board)",
    EXIT_UNREADABLE: "a file is not a match log",
    EXIT_UNKNOWN_KEY: "enrol the board (`chalk keys enrol`) or import its key from a file the "
                      "league signed (`chalk keys import FILE`)",
    EXIT_UNSIGNED: "no signature, from a board the key store does not know: nothing ties it "
                   "to a board",
    EXIT_LEGACY: "signed by a legacy key made on the pub's computer: the pub could have "
                 "signed anything with it",
    EXIT_IN_PROGRESS: "the board's signature does not cover the game's end: not a result yet "
                      "(export it again once the board has signed its end)",
}


WORDS = {EXIT_BROKEN: "broken", EXIT_UNKNOWN_KEY: "signed by a key the key store does not "
         "hold", EXIT_UNSIGNED: "not signed", EXIT_LEGACY: "signed by a legacy key only",
         EXIT_IN_PROGRESS: "in progress (not signed at its end)", EXIT_UNREADABLE: "unreadable"}


def check_verdicts(verdicts, set_problems=(), what="game"):
    """ChalkError (with the exit code of the worst outcome) unless every game is finished
    and signed by a board key, and each board's chain of games holds. `what`: "game" or
    "match log", for the message."""
    code = set_code(verdicts, set_problems)
    if code == EXIT_OK:
        return
    if code == EXIT_SEQUENCE:
        n = len(set_problems)
        raise ChalkError("%d problem%s with the boards' chains of games" % (
            n, "" if n == 1 else "s"), HINTS[code], code=code)
    bad = [v for v in verdicts if v.code == code]
    if len(verdicts) == 1 and what != "game":
        raise ChalkError("%s: %s" % (bad[0].source, WORDS[code]), HINTS[code], code=code)
    raise ChalkError("%d %s%s of %d %s" % (len(bad), what, "" if len(bad) == 1 else "s",
                                          len(verdicts), WORDS[code]), HINTS[code], code=code)


def check_results(results, set_problems=()):
    """check_verdicts() of archived games' Results."""
    check_verdicts([r.verdict for r in results], set_problems)
