"""Check archived games and match logs: the hash chain, the board's signature, the rules.

Three checks, each naming the first record that does not hold:

- **the chain** (docs/match-log.md): every record's link is recomputed from the header on
  (SHA-256 over the link before it and the record's canonical bytes) and compared with the
  link kept beside it (in the archive, or on the log's line); seqs must follow one another with
  no hole, repeat or change of order, up to the end record;
- **the signature**: the board signed its chain head (at the end record, or when asked) with
  HMAC-SHA256 under its own key; the head must be the link of the last record, and the
  signature must hold under the key the key store keeps for that board (chalk keys);
- **the rules**: the actions are replayed through scoreboard.rules on CPython; each state the
  board reported (archive) must be the replay's, and the winner in the end record (and in the
  archive's games table) must be the one the replay gives.

Outcomes, from worst: a record that does not hold (exit 1), an unknown key (exit 4), no
signature or records the signature does not cover (exit 3), all good (exit 0). docs/cli.md.
"""

import hashlib
import json
from collections import namedtuple

from chalk import chainhost
from chalk.archive import load_cell
from chalk.errors import ChalkError
from scoreboard import chain, matchlog
from scoreboard.rules import RuleError

EXIT_BROKEN = 1
EXIT_UNREADABLE = 2
EXIT_UNSIGNED = 3
EXIT_UNKNOWN_KEY = 4

# Problem kinds: what failed. The first five mean the records were changed (or damaged).
BROKEN = ("link", "signature", "replay", "state", "archive")
UNSIGNED = "unsigned"
UNKNOWN_KEY = "unknown_key"

Difference = namedtuple("Difference", "game seq expected reported")
Difference.__doc__ = """A state the board reported that the replay does not give: game id,
seq, what the replay gives (a state dict, or the rules' refusal as text) and what the board
reported (a state dict, or a note)."""

Problem = namedtuple("Problem", "kind seq where text")
Problem.__doc__ = """One thing that does not hold: its kind (BROKEN, UNSIGNED, UNKNOWN_KEY), the
seq of the record (None for the game as a whole), where it is ("seq 12", "line 5 (seq 12)") and
what is wrong."""

Result = namedtuple("Result", "game actions compared differences problems signer")
Result.__doc__ = """One game checked. game: the games() row (or the log's summary); actions:
how many; compared: reported states compared; differences: Difference list; problems: Problem
list; signer: the key id that signed it, when the signature holds."""


def _hex(b):
    return chain.hexlify(b) if b is not None else None


class Chained:
    """A game as records: what check() needs, from the archive or from a match log.

    header: the header payload as the board journaled it; header_seq: its seq; actions:
    [(seq, rec)] with rec a `rec` payload (seq, t, a, ...); end: (seq, payload) or None;
    signed: {"seq", "head", "sig", "kid"} or None; links: {seq: link hex or None} as kept
    beside the records (None: nothing kept to compare); where(seq): how to name a record."""

    def __init__(self, header, header_seq, actions, end=None, signed=None, links=None,
                 where=None):
        self.header = header
        self.header_seq = header_seq
        self.actions = actions
        self.end = end
        self.signed = signed
        self.links = links
        self.where = where or (lambda seq: "seq %s" % seq)


def check(c, keys, problems):
    """Check a Chained game: the chain, the signature, the replay. Appends to `problems`;
    returns (states by seq from the replay, the signing key id if the signature holds)."""
    where = c.where
    stored = c.links

    # -- the chain --------------------------------------------------------------------------
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

    # -- the signature ----------------------------------------------------------------------
    signer = _check_signature(c, keys, links, last, problems)

    # -- the rules --------------------------------------------------------------------------
    states = {}
    try:
        rules = matchlog.new_game(c.header)
    except (matchlog.LineError, AttributeError) as e:
        problems.append(Problem("replay", c.header_seq, where(c.header_seq),
                                "no game can be played from this header: %s" % e))
        return states, signer
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
    return states, signer


def _check_signature(c, keys, links, last, problems):
    where = c.where
    signed = c.signed
    end_signed = None
    if c.end is not None and type(c.end[1].get("head")) is str:
        end_signed = {"seq": c.end[0], "head": c.end[1]["head"], "sig": c.end[1].get("sig"),
                      "kid": c.end[1].get("kid")}
    if end_signed is not None:
        if signed is not None and signed != end_signed:
            problems.append(Problem("signature", c.end[0], where(c.end[0]),
                                    "the signed head kept for the game is not the end "
                                    "record's"))
        signed = end_signed
    if signed is None:
        problems.append(Problem(UNSIGNED, None, "game", "no signed chain head: the board "
                                "signed nothing (a board without a key, or older firmware) or "
                                "the signature was removed"))
        return None
    seq = signed.get("seq")
    if type(seq) is not int:
        problems.append(Problem("signature", None, "game", "the signed head has no seq"))
        return None
    if seq > last:
        problems.append(Problem("link", seq, where(seq), "the board signed the chain up to "
                                "seq %d, but the records end at seq %d: records were removed"
                                % (seq, last)))
        return None
    if seq not in links:
        problems.append(Problem("link", seq, where(seq), "the board signed the chain at seq "
                                "%d, which is not among the records" % seq))
        return None
    if c.end is not None and seq != c.end[0]:
        problems.append(Problem("signature", c.end[0], where(c.end[0]), "the game ended at seq "
                                "%d but its signature is at seq %d" % (c.end[0], seq)))
    if links[seq] is None or _hex(links[seq]) != signed.get("head"):
        problems.append(Problem("link", seq, where(seq), "the chain recomputed from the records "
                                "does not reach the head the board signed at seq %d: a record "
                                "up to there was changed" % seq))
        return None
    sig, kid = signed.get("sig"), signed.get("kid")
    if sig is None:
        problems.append(Problem(UNSIGNED, seq, where(seq), "the chain head at seq %d carries no "
                                "signature: the board has no key (deploy it with `chalk "
                                "deploy`)" % seq))
        return None
    key = keys.key(kid) if keys is not None and type(kid) is str else None
    if key is None:
        device = c.header.get("device")
        problems.append(Problem(UNKNOWN_KEY, seq, where(seq), "signed with key %s%s, which the "
                                "key store does not hold: import that board's key (`chalk keys "
                                "import FILE`)" % (kid, " of board %s" % device if device
                                                   else "")))
        return None
    entry = keys.find(kid)
    device = c.header.get("device")
    if entry.get("device") not in (None, device):
        problems.append(Problem("signature", seq, where(seq), "signed with the key of board %s, "
                                "but the header names board %s" % (entry["device"], device)))
        return None
    if not chainhost.check_sig(key, device or "", seq, links[seq], sig):
        problems.append(Problem("signature", seq, where(seq), "the signature does not hold "
                                "under key %s: the records or the signature were changed" % kid))
        return None
    if seq < last:
        problems.append(Problem(UNSIGNED, seq + 1, where(seq + 1), "records %s are after the "
                                "last signed head (seq %d): not covered by a signature yet"
                                % (_range(seq + 1, last), seq)))
    return kid


def _range(a, b):
    return "seq %d" % a if a == b else "seqs %d..%d" % (a, b)


def _j(v):
    return json.dumps(v)


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
    if game.get("damaged"):  # a header or end cell that is not JSON any more
        problems.append(Problem("archive", game["seq"], "seq %d" % game["seq"],
                                "the %s cell is damaged (not JSON)"
                                % " and ".join(game["damaged"])))
        return Result(game, len(rows), 0, diffs, problems, None)
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
    c = Chained(header, game["seq"], actions, end, archive.head(gid),
                {s: v[0] for s, v in kept.items()})
    if type(header) is not dict:
        problems.append(Problem("archive", game["seq"], "seq %d" % game["seq"],
                                "the header is not a JSON object"))
        return Result(game, len(rows), 0, diffs, problems, None)
    states, signer = check(c, keys, problems)
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
        elif any(p.kind == "replay" for p in problems):
            pass  # after an action the rules refuse nothing can be compared
    for p in problems:
        if p.kind == "replay" and p.seq in reported and p.seq != (end or (None,))[0]:
            diffs.append(Difference(gid, p.seq, "refused: %s" % p.text.split(": ", 1)[-1],
                                    reported.get(p.seq)))
    return Result(game, len(rows), compared, diffs, problems, signer)


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

def read_log(path):
    """A match log file as (Chained, summary dict); ChalkError (exit 2) if it cannot be read
    as a chained log at all."""
    name = str(path)
    try:
        if name == "-":
            import sys

            lines = sys.stdin.read().splitlines()
        else:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
    except FileNotFoundError:
        raise ChalkError("no match log %s" % name, code=EXIT_UNREADABLE)
    except (OSError, UnicodeDecodeError) as e:
        raise ChalkError("cannot read %s: %s" % (name, getattr(e, "strerror", None) or e),
                         code=EXIT_UNREADABLE)
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
    payload = {k: v for k, v in head.items() if k != "chain"}
    if isinstance(info, dict):
        added = info.get("added") if isinstance(info.get("added"), list) else []
        payload = {k: v for k, v in payload.items() if k not in added}
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

    c = Chained(payload, header_seq, actions, end, signed, links, where)
    summary = {"path": name, "game": head.get("game"), "device": head.get("device"),
               "game_no": head.get("game_no"), "chained": links is not None}
    return c, summary


def verify_log(path, keys=None):
    """Check a match log file on its own; returns (summary, problems, signer)."""
    c, summary = read_log(path)
    problems = []
    if c.links is None:
        problems.append(Problem(UNSIGNED, None, "line 1", "no \"chain\" in the header: a log "
                                "exported before chains, or by another tool; its records "
                                "cannot be checked against the board's signature"))
        _states, signer = _replay_only(c, problems)  # the rules still check it
        return summary, problems, signer
    _states, signer = check(c, keys, problems)
    return summary, problems, signer


def _replay_only(c, problems):
    try:
        rules = matchlog.new_game(c.header)
    except matchlog.LineError as e:
        problems.append(Problem("replay", None, "line 1", str(e)))
        return {}, None
    for seq, rec in c.actions:
        try:
            rules.apply(matchlog.strip_meta(rec))
        except (RuleError, AttributeError, TypeError, KeyError, ValueError) as e:
            problems.append(Problem("replay", seq, c.where(seq), "the rules refuse this action: "
                                    "%s" % e))
            break
    return {}, None


# -- reporting -----------------------------------------------------------------------------------

def _short(v):
    # Both sides with sorted keys, so a person can compare them by eye.
    return v if isinstance(v, str) else json.dumps(v, separators=(",", ":"), sort_keys=True)


def _chain_text(problems, signer):
    kinds = {p.kind for p in problems}
    if signer is not None and UNSIGNED not in kinds:
        return "signed (key %s)" % signer
    if UNKNOWN_KEY in kinds:
        return "signed by an unknown key"
    if signer is not None:
        return "signed in part (key %s)" % signer
    if any(k in BROKEN for k in kinds):
        return "does not hold"
    return "not signed"


def _what(differences, problems):
    n = len(differences) + len([p for p in problems if p.kind in BROKEN])
    if n:
        return "%d difference%s" % (n, "" if n == 1 else "s")
    if any(p.kind == UNKNOWN_KEY for p in problems):
        return "unknown key"
    if any(p.kind == UNSIGNED for p in problems):
        return "not signed"
    return "ok"


def report(results):
    """The lines a person reads: one per game, then one per difference and problem."""
    out = []
    for r in results:
        g = r.game
        out.append("game %d (%s #%s on %s): %d actions, %d reported states compared, chain %s: "
                   "%s" % (g["id"], g["game"], g["game_no"], g["device"], r.actions, r.compared,
                           _chain_text(r.problems, r.signer), _what(r.differences, r.problems)))
        for p in r.problems:
            out.append("  game %d %s: %s: %s" % (g["id"], p.where, p.kind.replace("_", " "),
                                                 p.text))
        for d in r.differences:
            out.append("  game %d seq %d: expected %s, reported %s" % (
                d.game, d.seq, _short(d.expected), _short(d.reported)))
    return out


def report_log(summary, problems, signer):
    out = ["%s (%s #%s on %s): chain %s: %s" % (
        summary["path"], summary["game"], summary["game_no"], summary["device"],
        _chain_text(problems, signer), _what([], problems))]
    for p in problems:
        out.append("  %s: %s: %s" % (p.where, p.kind.replace("_", " "), p.text))
    return out


def exit_code(problems, differences=()):
    kinds = {p.kind for p in problems}
    if differences or kinds & set(BROKEN):
        return EXIT_BROKEN
    if UNKNOWN_KEY in kinds:
        return EXIT_UNKNOWN_KEY
    if UNSIGNED in kinds:
        return EXIT_UNSIGNED
    return 0


def check_results(results):
    """ChalkError (with the exit code of the worst outcome) unless every game holds."""
    problems = [p for r in results for p in r.problems]
    diffs = [d for r in results for d in r.differences]
    code = exit_code(problems, diffs)
    if code == 0:
        return
    bad = [r for r in results if exit_code(r.problems, r.differences) == code]
    if code == EXIT_BROKEN:
        n = sum(len(r.differences) + len([p for p in r.problems if p.kind in BROKEN])
                for r in bad)
        raise ChalkError("%d difference%s between the archive and its chain, signatures or "
                         "rules in %d game%s" % (n, "" if n == 1 else "s", len(bad),
                                                 "" if len(bad) == 1 else "s"),
                         "a difference means an archive changed since it was stored, a "
                         "damaged journal on the board, or a board running other rules than "
                         "this chalk (`chalk deploy` updates it)")
    if code == EXIT_UNKNOWN_KEY:
        raise ChalkError("%d game%s signed by a key the key store does not hold"
                         % (len(bad), "" if len(bad) == 1 else "s"),
                         "import the board's key: `chalk keys import FILE` (the pub exports it "
                         "with `chalk keys export DEVICE`)", code=code)
    raise ChalkError("%d game%s not (wholly) signed by the board" % (
        len(bad), "" if len(bad) == 1 else "s"),
        "a board signs only once deployed with a key (`chalk deploy`); a game in progress is "
        "signed up to the last head `chalk archive` asked for", code=code)

