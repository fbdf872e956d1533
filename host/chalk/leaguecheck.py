"""The one place where the league asks whether a match log holds (docs/league.md).

check_log(text, keys) gives a Verdict: the grade (one of GRADES), whether the game is finished
(its end record signed by the board), the board and game number the header claims, the link
to the board's previous game when the header carries one, the reasons in words, the signer,
the signed end's chain head (the game's identity: two logs with the same end head are the same
game), and what the game gave (the final state replayed through the rules).

Everything else in the league (filing, the per-board game sequence, standings) reads only a
Verdict, so a richer verify (board-held keys, graded verdicts, chains of games) changes
`_verify` here and nothing else. Grades a future verify may add are kept as they come and are
never counted (leaguerank.COUNTABLE decides what counts).
"""

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from chalk import verify
from chalk.errors import ChalkError
from scoreboard import matchlog
from scoreboard.rules import RuleError

GRADES = ("ok-finished", "ok-in-progress", "legacy", "broken", "unreadable", "unsigned",
          "unknown-key")
AUTHENTIC = ("ok-finished", "ok-in-progress", "legacy")  # the board signed what is there
WORDS = {
    "ok-finished": "verified: finished and signed by the board",
    "ok-in-progress": "verified, but not finished: the board's signature stops before the end",
    "legacy": "verified with a legacy key (the pub holds this board's key)",
    "broken": "does not verify: a record was changed, removed or added, or the rules refuse it",
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
    predecessor: str = None
    reasons: list = field(default_factory=list)
    signer: str = None
    end_head: str = None
    header: dict = None
    result: dict = None  # leaguecheck.result(): winner, scores, sets, abandoned

    def words(self):
        return WORDS.get(self.grade, "verdict %s" % self.grade)


def _verify(path, keys):
    """Today's verify (chalk.verify: chain, HMAC signature, replay) as (grade, reasons,
    signer). The switch to a verify with graded verdicts is this function."""
    summary, problems, signer = verify.verify_log(str(path), keys)
    code = verify.exit_code(problems)
    kinds = {p.kind for p in problems}
    reasons = ["%s: %s" % (p.where, p.text) for p in problems]
    if code == verify.EXIT_BROKEN:
        return "broken", reasons, None
    if code == verify.EXIT_UNKNOWN_KEY:
        return "unknown-key", reasons, None
    if "legacy" in kinds:
        return "legacy", reasons, signer
    if code == verify.EXIT_UNSIGNED:
        return ("ok-in-progress" if signer is not None else "unsigned"), reasons, signer
    return "ok", reasons, signer


def check_log(text, keys):
    """Verify one match log (its text, as a venue sent it) against the league's key store."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_LOG:
        return Verdict("unreadable", reasons=["the log is larger than %d MB" % (
            MAX_LOG // (1024 * 1024))])
    with tempfile.TemporaryDirectory(prefix="chalk-league-") as d:
        path = Path(d) / "game.jsonl"
        try:
            path.write_text(text, encoding="utf-8")
        except UnicodeEncodeError:
            return Verdict("unreadable", reasons=["the log is not UTF-8 text"])
        try:
            grade, reasons, signer = _verify(path, keys)
            chained, _summary = verify.read_log(str(path))
        except ChalkError as e:
            return Verdict("unreadable", reasons=[e.message.replace(str(path), "the log")])
    header = chained.header
    end = chained.end
    if grade == "ok":
        grade = "ok-finished" if end is not None else "ok-in-progress"
    v = Verdict(grade, reasons=reasons, signer=signer, header=header)
    v.device = header.get("device") if type(header.get("device")) is str else None
    v.game_no = header.get("game_no") if type(header.get("game_no")) is int else None
    for k in ("prev", "predecessor"):
        if type(header.get(k)) is str:
            v.predecessor = header[k]
    if end is not None and isinstance(end[1], dict) and type(end[1].get("head")) is str:
        v.end_head = end[1]["head"]
    v.finished = grade in ("ok-finished", "legacy") and v.end_head is not None
    if grade in AUTHENTIC:
        v.result = result(header, [rec for _seq, rec in chained.actions],
                          end[1] if end else None)
    return v


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
