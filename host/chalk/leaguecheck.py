"""The one place where the league asks whether a match log holds (docs/league.md).

check_log(text, keys) gives a Verdict, from the verify library (chalk.verify: the chain, the
board's signature, a replay through the rules, verdict_of_log's checks): the grade (one of
GRADES, verify's names), whether the game is finished (its end record signed by the board),
the board and game number the header claims, the board's game before it (the header's
"prev": its number, last seq and link), the reasons in words, the signing key and its kind,
the links of the first and last records (the game's identity in its board's chain of games:
two logs with the same signed end are the same game), and what the game gave (the final state
replayed through the rules).

Everything else in the league (filing, the boards' chains of games, standings) reads only a
Verdict; sequences() asks verify.check_set about the chains of games with light verdicts made
from what the league archive keeps of each (chain_facts / light).
"""

from dataclasses import dataclass, field

from chalk import verify
from chalk.errors import ChalkError
from scoreboard import matchlog
from scoreboard.rules import RuleError

GRADES = tuple(verify.GRADES)
AUTHENTIC = verify.AUTHENTIC  # the board (or, legacy, a key the pub holds) signed what is there
COUNTABLE = ("ok-finished", "legacy")  # what may count, finished and by the league's rules
WORDS = {
    "ok-finished": "verified: finished and signed by the board",
    "ok-in-progress": "verified, but not finished: the board's signature stops before the end",
    "legacy": "verified with a legacy key (the pub holds this board's key)",
    "broken": "does not verify: a record was changed, removed or added, the signature was "
              "stripped or is another key's, or the rules refuse it",
    "unreadable": "not a match log that can be read",
    "unsigned": "not signed by the board",
    "unknown-key": "signed by a key the league does not hold (board not enrolled?)",
}
MAX_LOG = 4 * 1024 * 1024  # bytes; a finished game of 10,000 actions is about 1 MB


@dataclass
class Verdict:
    grade: str
    finished: bool = False
    device: str = None
    game_no: int = None
    predecessor: str = None  # the link (hex) of the board's game before, as the header says
    reasons: list = field(default_factory=list)
    signer: str = None  # the key id that signed, when the signature holds
    end_head: str = None  # the chain head the board signed at the game's end
    header: dict = None
    result: dict = None  # leaguecheck.result(): winner, scores, sets, abandoned
    chain: dict = None  # chain_facts(): what verify.check_set needs of this game

    def words(self):
        return WORDS.get(self.grade, "verdict %s" % self.grade)


def check_log(text, keys):
    """Verify one match log (its text, as a venue sent it) against the league's key store."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_LOG:
        return Verdict("unreadable", reasons=["the log is larger than %d MB" % (
            MAX_LOG // (1024 * 1024))])
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return Verdict("unreadable", reasons=["the log is not UTF-8 text"])
    try:
        c, _summary = verify.read_log(text.splitlines(), "the log")
    except ChalkError as e:
        return Verdict("unreadable", reasons=[e.message])
    problems = []
    _states, info = verify.check(c, keys, problems)
    v = verify.verdict(c, problems, info, "the log")
    out = Verdict(v.grade, finished=v.finished, device=v.device, game_no=v.game_no,
                  reasons=["%s: %s" % (p.where, p.text) for p in v.problems], signer=v.kid,
                  header=c.header,
                  chain=chain_facts(v, c.header_seq))
    if v.prev is not None:
        out.predecessor = v.prev["link"]
    if v.finished:
        out.end_head = v.head
    if v.grade in AUTHENTIC:
        out.result = result(c.header, [rec for _seq, rec in c.actions],
                            c.end[1] if c.end else None)
    return out


def chain_facts(v, header_seq):
    """What the league keeps of a verify Verdict for the boards' chains of games: the seq its
    signature covers, its header's and last record's seqs and links, its end's seq, the key."""
    return {"seq": v.seq, "header_seq": header_seq, "first": v.first, "last": v.last,
            "head": v.head, "end_seq": v.end_seq, "prev": v.prev, "kid": v.kid, "key": v.key}


def light(grade, device, game_no, facts, source):
    """A verify.Verdict of a filed game, from its kept chain facts, for verify.check_set (its
    links: the first and last records' only)."""
    f = facts or {}
    links = {}
    if f.get("header_seq") is not None:
        links[f["header_seq"]] = f.get("first")
    if f.get("last") is not None:
        links[f["last"]] = f.get("head")
    finished = f.get("seq") is not None and f.get("seq") == f.get("end_seq")
    return verify.Verdict(grade, verify.GRADES.get(grade, verify.EXIT_BROKEN), finished,
                          f.get("seq"), f.get("last"), f.get("end_seq"),
                          device, None, game_no, f.get("prev"), f.get("kid"), f.get("key"), [],
                          [], f.get("first"), f.get("head"), links, source)


def result(header, actions, end):
    """What a game gave: the final state replayed through the rules, each side's score, sets
    (games that have them), the winner (a side, "draw", or None) and whether it was abandoned
    (ended with no winner)."""
    from chalk import views

    try:
        game = matchlog.new_game(header)
        for rec in actions:
            game.apply(matchlog.strip_meta(rec))
    except (matchlog.LineError, RuleError, AttributeError, TypeError, KeyError,
            ValueError) as e:
        return {"error": str(e)}
    state = game.state()
    outcome = game.outcome()
    scores = views.score(header.get("game"), state)
    sets = state.get("sets") if type(state.get("sets")) is list else None
    winner = outcome["winner"] if outcome else None
    return {"state": state, "winner": winner, "scores": scores, "sets": sets,
            "sides": max(len(scores), len(sets or []), 2),
            "abandoned": winner is None and end is not None}
