"""The venue's outbox: what `chalk serve` still has to get to the league, kept in the archive.

Every finished game (an end record archived) is queued once, as its whole match log with its
chain (chalk.export.jsonl, exactly the bytes sent), and sent again until the league
acknowledges it; a dispute a venue raises waits here the same way. A game is dropped (its
payload cleared, its row kept so it is never queued again) once every league awaited has
acknowledged it, naming the SHA-256 of what it received. Nothing here lives in memory only: a
restarted server, a broker away for the night, a bridge down, all end with the outbox sent.

The table is `outbox` in the venue's archive (schema in chalk/archive.py, docs/mqtt.md).
"""

import hashlib
import json
import time

from chalk.errors import ChalkError
from chalk.store import now_iso

MAX_NOTE = 500
# A finished game waits this long for the board's signature of its end (it comes a moment
# after the end record, or when the board is plugged in again) before it is sent without it.
SIGN_WAIT_S = 3600


def sha256(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Outbox:
    """The outbox of an open (writable) Archive. `leagues`: the league ids whose acks are
    awaited before a message is dropped (empty: the first ack from any league)."""

    def __init__(self, archive, leagues=()):
        self.archive = archive
        self.leagues = tuple(leagues)

    def _q(self, sql, args=()):
        return self.archive._q(sql, args)

    # -- filling -----------------------------------------------------------------------------
    def fill(self):
        """Queue every finished game not queued yet whose end the board has signed (or that
        waited SIGN_WAIT_S for it); returns [(outbox id, game row, problem)]."""
        from chalk import export

        rows = self._q("SELECT g.id FROM games g WHERE g.end_seq IS NOT NULL AND NOT EXISTS "
                       "(SELECT 1 FROM outbox o WHERE o.kind = 'game' AND o.game_id = g.id) "
                       "ORDER BY g.id LIMIT 200")
        out = []
        for (gid,) in rows:
            game = self.archive.game(gid)
            if not self._signed_or_late(game):
                continue  # the board signs its end a moment later: the log goes with it
            problem = payload = digest = None
            try:
                payload = export.jsonl(self.archive, game)
                digest = sha256(payload)
            except ChalkError as e:  # a damaged game: said once, never sent half-made
                problem = e.message
            with self.archive.transaction() as db:
                cur = db.execute("INSERT OR IGNORE INTO outbox (kind, game_id, payload, sha256, "
                                 "queued, problem) VALUES ('game', ?, ?, ?, ?, ?)",
                                 (gid, payload, digest, now_iso(), problem))
                if cur.rowcount:
                    out.append((cur.lastrowid, game, problem))
        return out

    def _signed_or_late(self, game, now=None):
        """True when a finished game's log is whole for the league: its end signed by the board
        (its `sig` frame, or an end record that carries its signature, as older firmware's
        did), or from firmware that signs nothing (no "prev" in its header), or its end was
        archived SIGN_WAIT_S ago with no signature (a board that cannot sign: sent as it is,
        and the league does not count it)."""
        h = game["header"] if isinstance(game["header"], dict) else {}
        end = game["end"] if isinstance(game["end"], dict) else {}
        if "prev" not in h or "sig" in end:
            return True
        signed = self.archive.head(game["id"])
        if signed is not None and type(signed.get("seq")) is int and \
                signed["seq"] >= game["end_seq"]:
            return True
        from datetime import datetime, timezone

        try:
            ended = datetime.strptime(game["finished"], "%Y-%m-%dT%H:%M:%SZ").replace(
                tzinfo=timezone.utc).timestamp()
        except (TypeError, ValueError):
            return True
        return (time.time() if now is None else now) - ended >= SIGN_WAIT_S

    def add_dispute(self, game_id, note, venue, token=None):
        """Queue a dispute of an archived, finished game (its id in this archive)."""
        note = check_note(note)
        game = self.archive.game(game_id)
        if game["end_seq"] is None:
            raise ChalkError("game %d has not ended: only a finished game reaches the league, "
                             "so only a finished game can be disputed" % game["id"],
                             "dispute it once the next game has started on that table")
        row = self._q("SELECT sha256 FROM outbox WHERE kind = 'game' AND game_id = ?",
                      (game["id"],))
        body = {"v": 1, "venue": venue, "game": {
            "device": game["device"], "game_no": game["game_no"],
            "sha256": row[0][0] if row else None}, "note": note, "raised": now_iso()}
        if token:
            body["token"] = token
        payload = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
        with self.archive.transaction() as db:
            cur = db.execute("INSERT INTO outbox (kind, game_id, payload, sha256, queued) "
                             "VALUES ('dispute', ?, ?, ?, ?)",
                             (game["id"], payload, sha256(payload), now_iso()))
            return cur.lastrowid

    # -- sending -----------------------------------------------------------------------------
    def due(self, resend, limit=20, now=None):
        """Messages to send now: never sent, or sent `resend` seconds ago and not acked.
        [(id, kind, payload)]."""
        now = time.time() if now is None else now
        return self._q("SELECT id, kind, payload FROM outbox WHERE acked IS NULL AND payload IS "
                       "NOT NULL AND (sent_at IS NULL OR sent_at <= ?) ORDER BY id LIMIT ?",
                       (now - resend, limit))

    def sent(self, ids, now=None):
        if not ids:
            return
        now = time.time() if now is None else now
        with self.archive.transaction() as db:
            db.executemany("UPDATE outbox SET sent_at = ?, tries = tries + 1 WHERE id = ?",
                           [(now, i) for i in ids])

    def resend_all(self):
        """Make every message not acknowledged due now (the league or the bridge is back)."""
        with self.archive.transaction() as db:
            return db.execute("UPDATE outbox SET sent_at = NULL WHERE acked IS NULL AND "
                              "payload IS NOT NULL AND sent_at IS NOT NULL").rowcount

    def ack(self, msg_id, digest, league, answer):
        """An ack for message `msg_id`: kept if it names what was sent (its SHA-256). Returns
        (kind, game_id, dropped) or None when it does not match a message waiting."""
        rows = self._q("SELECT kind, game_id, sha256, answer, acked FROM outbox WHERE id = ?",
                       (msg_id,))
        if not rows or rows[0][2] is None or rows[0][2] != digest:
            return None
        kind, gid, _sha, old, acked = rows[0]
        answers = {}
        try:
            answers = json.loads(old) if old else {}
        except ValueError:
            pass
        answers[str(league)] = answer
        done = acked is not None or not self.leagues or all(x in answers for x in self.leagues)
        with self.archive.transaction() as db:
            if done:
                db.execute("UPDATE outbox SET answer = ?, acked = COALESCE(acked, ?), "
                           "payload = NULL WHERE id = ?",
                           (json.dumps(answers, ensure_ascii=False), now_iso(), msg_id))
            else:
                db.execute("UPDATE outbox SET answer = ? WHERE id = ?",
                           (json.dumps(answers, ensure_ascii=False), msg_id))
        return kind, gid, done

    def counts(self):
        rows = self._q("SELECT kind, acked IS NOT NULL, problem IS NOT NULL, COUNT(*) FROM "
                       "outbox GROUP BY 1, 2, 3")
        out = {"waiting": 0, "acknowledged": 0, "unsendable": 0}
        for _kind, acked, problem, n in rows:
            out["unsendable" if problem else "acknowledged" if acked else "waiting"] += n
        return out


def check_note(note):
    if type(note) is not str or not note.strip():
        raise ChalkError("a dispute needs a note saying what is wrong",
                         "e.g. --note \"the pin was reset before the shot\"")
    if len(note) > MAX_NOTE:
        raise ChalkError("a dispute note is at most %d characters (this one has %d)"
                         % (MAX_NOTE, len(note)))
    try:
        note.encode("utf-8")
    except UnicodeEncodeError:
        raise ChalkError("the note is not text (a lone surrogate or undecodable byte)",
                         "type it again in a UTF-8 terminal")
    return note.strip()


def queue_dispute(db_path, game_id, note, settings):
    """Queue a dispute from outside the publisher (the API, `chalk dispute`): its own
    connection to the archive. Returns the outbox id."""
    from chalk.store import Archive

    if settings is None or not settings.venue:
        raise ChalkError("this venue does not publish to a league (no MQTT venue id)",
                         "start chalk serve with --mqtt-config FILE or --mqtt-venue NAME")
    with Archive(db_path, create=False, readonly=False) as db:
        return Outbox(db).add_dispute(game_id, note, settings.venue, settings.league_token)


async def api_dispute(request, venue, db_path, may_control):
    """POST /api/disputes {"game": ID, "note": TEXT} on `chalk serve`: control, as for a new
    game or an undo (the host itself, or the control token)."""
    import asyncio

    from starlette.responses import JSONResponse

    why = may_control(request)
    if why:
        return JSONResponse({"error": why, "hint": "send Authorization: Bearer TOKEN "
                             "(chalk serve's control token)"}, status_code=403)
    try:
        body = json.loads(await request.body() or b"{}")
    except (ValueError, RecursionError) as e:
        return JSONResponse({"error": "the request body is not JSON: %s" % str(e)[:80]},
                            status_code=400)
    if type(body) is not dict or type(body.get("game")) is not int or \
            type(body.get("note")) is not str:
        return JSONResponse({"error": 'give {"game": ID, "note": TEXT} (the game\'s id in '
                             'this venue\'s archive, `chalk games`)'}, status_code=400)
    settings = getattr(venue, "mqtt_settings", None)
    try:
        mid = await asyncio.get_running_loop().run_in_executor(
            None, queue_dispute, db_path, body["game"], body["note"], settings)
    except ChalkError as e:
        return JSONResponse({"error": e.message, "hint": e.hint}, status_code=409)
    return JSONResponse({"result": {"outbox": mid, "game": body["game"],
                                    "queued": True}})
