"""The follower: archive a board by the link protocol (docs/archive.md, docs/serial-protocol.md).

Records come from two places: the board's live `rec` frames, and the `journal` command that
streams every record after a seq. `Follower` joins them: it resyncs from the last seq held
whenever it may have missed something (a lost frame, a reboot, a cut cable, a restart of this
program), so the archive ends with every record once; it acknowledges what can be rotated out
and keeps the board's signatures. The file it fills is chalk/store.py; the wire, chalk/link.py.
"""

import time

from chalk.errors import ChalkError
from chalk.link import BAUD, BoardError, BoardLink, NoReply, open_port, resolve_port
from chalk.store import ArchiveError, JournalMismatch, _check, _clip, _dumps, _kind, _small
from scoreboard import matchlog


def _say(text):
    print(text, flush=True)


class ShortOfMemory(ChalkError):
    """The board kept refusing the journal for want of memory (or answered it no more while it
    sent frames), though asked for less and less: this connection stops (docs/archive.md).
    Every record archived is kept; a board restarted has its heap whole again."""


class Follower:
    """Archive a board: connect, resync from the last seq held, then take live frames; after a
    lost connection, reconnect with backoff and resync. `once`: resync and return.

    archive: an Archive; port: as for --port (None: $CHALK_PORT, else auto); say: where progress
    lines go; stop: a threading.Event that ends the loop; idle: seconds without a frame before
    the board is asked whether it is still there (and how far its journal is); reply: seconds to
    wait for a reply; backoff: (first, longest) wait between reconnections."""

    def __init__(self, archive, port=None, once=False, say=_say, stop=None, idle=2.0,
                 reply=3.0, backoff=(0.25, 5.0), baud=None):
        self.archive = archive
        self.port = port
        self.once = once
        self.say = say or (lambda text: None)
        self.stop = stop
        self.idle = idle
        self.reply = reply
        self.backoff = backoff
        self.baud = baud
        self.board_id = None
        self.device = None
        self.counts = {"sessions": 0, "resyncs": 0, "records": 0, "actions": 0, "skipped": 0,
                       "acks": 0, "gaps": 0, "lost": 0, "restarts": 0, "corrupt": 0,
                       "unreadable": 0}
        self._pending = {}  # seq -> state payload whose record is not held yet
        self._signed_at = None  # the last seq held when the board last signed its head
        self._kid = None  # the board's own key (hello "kid"): it signs every game's end
        self._asked = {}  # game_no (None: the game in progress) -> (seq, when) of a pending sign
        self._gone_ends = set()  # finished games the board can no longer sign (rotated out)
        self._end_ok = True  # the board takes `sign` with a game_no (older firmware does not)
        # Good records that came ahead of a missing one (a noisy line): stored once the
        # records before them are, kept across reconnections to the same board.
        self._buffer = {}
        self._bad = {}  # seq (or ("frame", n)) -> why: records the archive cannot take
        self._want_ok = True  # the board takes journal's "want" (older firmware does not)
        self._block_ok = True  # ... and "block" (the size of its packed frames)
        self._block = _BLOCK_MAX
        # The largest block the board has room for: lowered when it refuses a journal round for
        # want of memory, whole again when it restarts (its heap whole again).
        self._room = _BLOCK_MAX
        self._short_said = False  # "short of memory" said, and no record came since
        self._state_asked = (None, 0)  # (seq, times) its state was asked for at quiet moments
        self._refused_said = None  # the optional request whose refusal was said last
        self._quiet_said = False  # "no reply ...; retrying" said, and not taken back yet
        self._coding = None  # (port, link.coding): the line's coding, across reconnections
        self._heard_damage = False  # the last connection heard the board, damaged
        self._last_error = None
        self._up = False  # this connection got as far as a hello

    def _stopped(self):
        return self.stop is not None and self.stop.is_set()

    def _sleep(self, seconds):
        if self.stop is not None:
            self.stop.wait(seconds)
        else:
            time.sleep(seconds)

    def run(self):
        """Follow until stopped (or, with once, until resynced). Returns the counts."""
        delay = self.backoff[0]
        quiet_since = time.monotonic()
        while not self._stopped():
            self._up = False
            try:
                port = resolve_port(self.port)
                self._session(port)
                return self.counts
            except (ArchiveError, JournalMismatch):
                raise
            except ChalkError as e:
                if self._up:
                    quiet_since = time.monotonic()
                # --once gives up at once on a board that is not there (no such port, not a
                # board); a noisy line that swallowed the replies gets ONCE_PATIENCE seconds.
                if self.once and (not isinstance(e, NoReply)
                                  or time.monotonic() - quiet_since > ONCE_PATIENCE):
                    raise
                if self._up or self._heard_damage:  # it was working, or is there: soon again
                    delay = self.backoff[0]
                self._heard_damage = False
                text = e.message + ("; " + e.hint if e.hint and "busy" in e.message else "")
                if isinstance(e, ShortOfMemory):
                    # The board's heap will not be whole again soon: asked again after the
                    # longest pause, and said once until a record comes (the figures in the
                    # line may differ each time).
                    delay = self.backoff[1]
                    if not self._short_said:
                        self.say("%s; retrying" % text)
                    self._short_said = True
                    self._last_error = text
                elif text != self._last_error:
                    self.say("%s; retrying" % text)
                    self._last_error = text
                self._sleep(delay)
                delay = min(delay * 2, self.backoff[1])
        return self.counts

    # -- one connection ----------------------------------------------------------------------
    def _session(self, port):
        ser = open_port(port, self.baud or BAUD)
        link = BoardLink(ser, port)
        if self._coding is not None and self._coding[0] == port:
            # The same port again: the line is as noisy as it was, and the board still codes
            # its frames as it was asked to (it does not know the host reconnected).
            link.coding = self._coding[1]
        self._coding = (port, getattr(link, "coding", None))
        try:
            info = self._hello(link)
            self._up = True
            self.counts["sessions"] += 1
            first = self.board_id is None
            self._board(info, port)
            if (self._last_error is not None or not first) and not self._short_said:
                self.say("connected to %s on %s again" % (self.device, port))
            self._last_error = None
            self._set_clock(link)
            self._sync(link)
            if self.once:
                return
            self._live(link)
        finally:
            self._tally(link)
            link.close()

    def _hello(self, link):
        """The board's hello. On a line so noisy that frames come damaged (the board is there),
        asked again a couple of times on this connection: meanwhile the link asks the board for
        coded frames (docs/serial-protocol.md), which get through."""
        for tries in range(_HELLO_TRIES):
            try:
                return link.hello(self.reply, self._retries())
            except NoReply:
                st = link.stats()
                if tries + 1 >= _HELLO_TRIES or not (st["corrupt"] or st["repaired"]):
                    raise
                self._heard_damage = True

    def _tally(self, link):
        st = link.stats()
        for k in ("lost", "restarts", "corrupt"):
            self.counts[k] += st[k]

    def _board(self, info, port):
        device = info.get("device")
        if self.device is not None and device != self.device:
            self.say("another board on %s: %s (was %s)" % (port, device, self.device))
            self._pending = {}
            self._buffer = {}
        self.board_id = self.archive.board(info)
        self.device = device
        self._kid = info.get("kid") if type(info.get("kid")) is str else None
        held = self.archive.last_seq(self.board_id)
        self._check_journal(info, held, port)
        if self.counts["sessions"] == 1:
            self.say("board %s (%s, %s) on %s: archive %s holds seq %d, the board is at %d"
                     % (device, info.get("board"), info.get("game"), port, self.archive.path,
                        held, info["last_seq"] if _small(info.get("last_seq")) else 0))

    def _check_journal(self, info, held, port):
        last = info.get("last_seq")
        if type(last) is int and last < held:
            raise JournalMismatch(
                "the board %s on %s is at journal seq %d, but the archive %s holds its records "
                "up to seq %d: its journal was erased or replaced" % (
                    info.get("device"), port, last, self.archive.path, held),
                "nothing was archived or acknowledged; the archive will not mix two journals "
                "of one board: archive this one into another file with --db")

    def _set_clock(self, link):
        # Game headers get a "started" time only from a board whose clock was set.
        try:
            self._ask(link, "clock", {"ms": int(time.time() * 1000)})
        except (BoardError, NoReply):
            pass  # an older firmware without a clock (or a noisy line): no "started" then

    # -- resync ------------------------------------------------------------------------------
    def _sync(self, link):
        """Catch up with the board's journal, then record its state now (the last record's
        state frame may have been lost) and acknowledge what can be rotated out."""
        self.counts["resyncs"] += 1
        touched = []
        for _ in range(10):
            others = self._catch_up(link, touched)
            # Frames met on the way (live records after the stream, states, warnings) are
            # taken as if they came now; one that shows a new loss means another round.
            if not any([self._frame(link, f, syncing=True) for f in others]):
                break
        for gid in touched:
            self._report_game(gid)
        if not touched:
            self.say("up to date at seq %d" % self.archive.last_seq(self.board_id))
        now = self._optional(link, "state")
        snap = []
        if _small(now.get("last_seq"), 1) and type(now.get("state")) is dict:
            snap = [{"seq": now["last_seq"], "state": now["state"]}]
        # A state still ahead of what is held belongs to an action made meanwhile, whose own
        # rec and state frames are on their way.
        self.archive.add_states(self.board_id, list(self._pending.values()) + snap)
        self._pending = {}
        self._ack(link)
        self._sign(link, every=True)
        if self.once:
            self._await_signatures(link)

    def _optional(self, link, cmd):
        """A request whose answer only adds to the archive (a state snapshot): on a noisy line
        a long reply may not get through whole; then it is done without ({}). Its refusal is
        said once, until it is answered again."""
        try:
            got = link.request(cmd, timeout=min(self.reply, 1.0),
                               retries=max(2, int(min(self.reply, 1.0) / _RESEND)))
        except NoReply:
            return {}
        except BoardError as e:  # (a board short of memory for a long reply, say)
            if self._refused_said != cmd:
                self.say("the board did not give its %s: %s" % (cmd, e.message))
            self._refused_said = cmd
            return {}
        self._refused_said = None
        return got

    def _sign(self, link, every=False):
        """Ask the board to sign its chain head as it is now, and the end of any finished game
        whose signature did not come, and keep them (verify then covers every record held).
        The board signs between its scans: a reply {"pending": true} means the signature
        follows in a `sig` frame (taken by _frame); it is not asked again for a while. One
        request a call (the live frames come first), or with `every` all that are due."""
        now = time.monotonic()
        if self._kid is not None and self._end_ok:
            for game_no, _seq in self._unsigned():
                if game_no in self._gone_ends:
                    continue
                asked = self._asked.get(game_no)
                if asked is not None and now - asked[1] < _SIGN_WAIT:
                    continue
                try:
                    res = self._ask(link, "sign", {"game_no": game_no})
                except BoardError as e:
                    if e.reason == "args":
                        self._end_ok = False  # older firmware: it signs its ends in them
                    elif "busy" not in e.message:
                        self._gone_ends.add(game_no)  # rotated out: it cannot sign it now
                    break
                except NoReply:
                    return  # a noisy line: asked again at the next quiet moment
                self._asked[game_no] = (None, now)
                if not res.get("pending"):
                    self.archive.set_head(self.board_id, res)
                if not every:
                    return  # one request per quiet moment: the live frames come first
        held = self.archive.last_seq(self.board_id)
        if self._signed_at != held and self._head_kept(held):
            self._signed_at = held  # signed already (by an earlier run of the archiver)
        if self._signed_at == held:
            return
        asked = self._asked.get(None)
        if asked is not None and asked[0] == held and now - asked[1] < _SIGN_WAIT:
            return  # its `sig` frame is on its way
        if asked is not None and not every and now - asked[1] < _HEAD_EVERY:
            return  # a signature costs an ESP32 a second of work: not several a second
        try:
            res = self._ask(link, "sign")
        except BoardError:
            return  # older firmware without a key, or a board busy signing: later
        except NoReply:
            return  # a noisy line: asked again at the next quiet moment
        self._asked[None] = (held, now)
        if res.get("pending"):
            return
        self.archive.set_head(self.board_id, res)
        if res.get("seq") == held:
            self._signed_at = held

    def _head_kept(self, held):
        """True if the archive keeps the board's signature of its chain up to seq `held`."""
        if not held:
            return False
        g = self.archive.game_before(self.board_id, held + 1)
        h = self.archive.head(g[0]) if g is not None else None
        return h is not None and h.get("seq") == held

    def _unsigned(self):
        return [g for g in self.archive.unsigned_ends(self.board_id)
                if g[0] not in self._gone_ends]

    def _await_signatures(self, link, wait=None, stop=True):
        """`once`, or stopping: the signatures asked for come in `sig` frames a moment later
        (the board makes them between its scans): take them, asking for the rest, until every
        end and the head held are signed, or nothing came for `wait` seconds (_SIGN_WAIT).
        Then acknowledge what their signatures free."""
        if self._kid is None:
            return
        wait = _SIGN_WAIT if wait is None else wait
        try:
            self._awaiting(link, wait, stop, time.monotonic())
        except ChalkError:
            if not stop:
                return  # stopping anyway: what came is kept
            raise

    def _awaiting(self, link, wait, stop, quiet):
        while not (stop and self._stopped()) and time.monotonic() - quiet < wait:
            held = self.archive.last_seq(self.board_id)
            if not self._unsigned() and self._signed_at == held:
                break
            self._sign(link, every=True)
            f = link.poll(0.2)
            if f is not None:
                quiet = time.monotonic()
                self._frame(link, f, syncing=True)
        self._ack(link)

    def _signature(self, link, payload, syncing):
        """A `sig` frame: the board signed a head (a game's end, or the head it was asked
        for)."""
        kept = self.archive.set_head(self.board_id, payload)
        held = self.archive.last_seq(self.board_id)
        if payload.get("seq") == held and (kept or self._head_kept(held)):
            self._signed_at = held  # (a head signed again: the one kept already)
        if kept:
            if not syncing:
                self._ack(link)  # an end now signed: its game may go from the board

    def _silent(self, link, e):
        """The board did not answer (a cut cable, or a line too noisy for a while): said once."""
        if not self._quiet_said:
            self._quiet_said = True
            self.say("%s; retrying" % e.message)

    def _heard(self, link):
        if self._quiet_said:
            self._quiet_said = False
            self.say("the board on %s answers again" % link.port)

    def _retries(self):
        return max(2, int(self.reply / _RESEND))

    def _ask(self, link, cmd, args=None, progress=(), until=None):
        """A request, resent often within the reply time: on a noisy line each try is a new
        chance for the command and its reply to get through whole (the board answers a
        repeat of a state-changing command from its last reply, never twice)."""
        return link.request(cmd, args, timeout=self.reply, retries=self._retries(),
                            progress=progress, until=until)

    def _flush(self, touched, gone=(), gone_until=0):
        """Store the records held back that now follow on from the last seq held, stepping
        over seqs the board no longer has as a gap: those in `gone`, every seq up to
        `gone_until` not here, and the records it sent that the archive cannot take (said
        once, in _unreadable). Returns the last seq held. Bounded by the records held back,
        whatever seqs a board claims."""
        held = self.archive.last_seq(self.board_id)
        run = []
        s = held
        for k in sorted(k for k in self._buffer if k > held):
            if k != s + 1 and not (k - 1 <= gone_until or (
                    k - s - 1 <= 2 * _WANT_BITS and all(
                        x in gone or x in self._bad for x in range(s + 1, k)))):
                break
            run.append(self._buffer[k])
            s = k
        if run and _kind(run[0]) != "H" and self.archive.game_before(self.board_id,
                                                                        run[0]["seq"]) is None:
            # Actions whose game header the archive could not take (said above): they belong to
            # no game here, so they are stepped over with it.
            orphans = []
            for r in run:
                if _kind(r) == "H":
                    break
                orphans.append(r["seq"])
            for seq in orphans:
                self._buffer.pop(seq, None)
                self._bad[seq] = "its game's header could not be taken"
            self.say("seqs %d..%d belong to a game whose header the archive could not take: "
                     "skipped" % (orphans[0], orphans[-1]))
            return self._flush(touched, gone, gone_until)
        if run:
            prev = held
            for r in run:
                if r["seq"] != prev + 1:
                    self.counts["gaps"] += 1
                    unread = [x for x in range(prev + 1, min(r["seq"], prev + 4))
                              if x in self._bad]
                    self.say("seqs %d..%d are %s: the archive has a gap there" % (
                        prev + 1, r["seq"] - 1, "records the board sent that the archive "
                        "cannot take (above)" if unread else "no longer on the board (rotated "
                        "out, or lost to damage)"))
                prev = r["seq"]
            res = self.archive.ingest(self.board_id, run, resync=True)
            self._took(res, touched)
            held = res.last
        for k in [k for k in self._buffer if k <= held]:
            del self._buffer[k]  # stored meanwhile (a record is stored once, by its seq)
        for k in [k for k in self._bad if type(k) is int and k <= held]:
            del self._bad[k]
        return held

    def _unreadable(self, f, why):
        """A frame from the board the archive cannot take: said once, in one line naming the
        board and the frame; its seq (if it has one) is stepped over as a gap."""
        seq = f.payload.get("seq") if isinstance(f.payload, dict) else None
        key = seq if _small(seq, 1) else ("frame", f.n)
        if key in self._bad:
            return
        if _small(seq, 1):
            self._bad[seq] = why
        elif len(self._bad) > 1000:
            return  # a board sending nothing but nonsense: said often enough
        else:
            self._bad[key] = why
        self.counts["unreadable"] += 1
        self.say("the board %s sent a record the archive cannot take, frame %d: %s; skipped"
                 % (self.device, f.n, why))

    def _catch_up(self, link, touched):
        """Fetch every record after the last seq held. Records are exactly-once by seq, so
        every good one that arrives is kept, whatever its order (self._buffer), and stored as
        soon as it follows on from what is held. While records are missing below one already
        here, a round asks the board for exactly those (journal "want", a bitmap of seqs);
        otherwise for everything after the last seq held; until a whole stream to the board's
        end has come. A round with no reply is asked again after a growing pause; several in a
        row end the connection (run() starts it again, without end; the records kept so far
        stay kept).

        Never the same thing for ever: a round the board refuses for want of memory, or
        _STALE_ROUNDS rounds in which its frames come, none damaged, but no record, make the next
        rounds ask for less (_less: smaller blocks, fewer records a round, plain frames); any
        new record takes that back. After _LESS_MAX such steps without a record the connection
        stops with one line saying what is wrong and what to do (ShortOfMemory). Returns the
        other frames met on the way."""
        others = []
        silent = 0
        nonsense = 0
        pause = _RESEND
        less = 0  # times asked for less since the last new record
        stale = 0  # rounds since then (or since the last ask for less) with frames, no record
        refusal = None  # the board's last refusal for want of memory (a BoardError)
        while not self._stopped():
            held = self._flush(touched)
            later = [s for s in self._buffer if s > held]
            args = {"after": held}
            wanted = []
            window = None
            coded = _coded(link)
            span = max(_SPAN_LEAST, _WANT_BITS >> less)  # records a round asks for, at most
            if later and self._want_ok and min(later) <= held + _WANT_BITS and \
                    (not coded or less):
                # (a hole wider than a bitmap: the whole rest, judged by its count, instead)
                top = min(max(later), held + span)
                wanted = [s for s in range(held + 1, top)
                          if s not in self._buffer and s not in self._bad]
                args["want"] = "%x" % sum(1 << (s - held - 1) for s in wanted)
            elif less and self._want_ok:
                # Asking for less: the next `span` records only, not the whole rest (the
                # stream stops past the highest bit of `want`).
                window = held + span
                args["want"] = "%x" % ((1 << span) - 1)
            # On a line noisy enough for coded frames, commands stay short (each byte of one
            # is a chance to lose it: the host's commands are not coded) and the board
            # streams the rest again instead: its frames get through. A board short of
            # memory is asked for smaller blocks all the same.
            if self._block_ok and (not coded or less or self._room < _BLOCK_MAX):
                args["block"] = int(min(self._block, self._room))
            result = None
            refused = None
            until = _all_here(wanted, self._buffer) if wanted else None
            frames_before = link.stats()["frames"]
            damage_before = _damage(link)
            try:
                if wanted:
                    # Short rounds: what came meanwhile is not asked for again in the next.
                    result = link.request("journal", args, timeout=_WANT_ROUND, retries=2,
                                          progress=("rec",), until=until)
                else:
                    result = self._ask(link, "journal", args, progress=("rec",))
            except BoardError as e:
                if _short(e):
                    refused = e  # the records that came before it are taken below
                elif e.reason == "args" and "block" in args and "block" in e.message:
                    self._block_ok = False  # older firmware: its own block size
                    continue
                elif e.reason != "args" or "want" not in args:
                    raise
                else:
                    self._want_ok = False  # older firmware: the whole rest, every round
                    continue
            except NoReply as e:
                if link.stats()["frames"] == frames_before:
                    silent += 1  # not a frame: the board may be gone
                    self._silent(link, e)
                    if silent >= 6:
                        raise
                else:
                    silent = 0
            bad_here = 0
            arrived = 0
            new = 0
            for f in _drain(link):
                if f.type != "rec":
                    others.append(f)
                    continue
                arrived += 1
                seq = f.payload.get("seq")
                why = _check(f.payload)
                if why is not None:
                    self._unreadable(f, why)
                    bad_here += 1  # it came: the stream's count holds it
                elif seq > held and seq not in self._buffer:
                    self._buffer[seq] = f.payload
                    new += 1
            heard = link.stats()["frames"] != frames_before
            if heard:
                self._heard(link)
            if refused is not None:
                # The board had no room for the block asked (records or not before it): never
                # more than half of it again, until it restarts.
                self._room = max(_BLOCK_MIN, min(self._room, args.get("block", _BLOCK_MAX) // 2))
                self._block = min(self._block, self._room)
            if new:
                less = stale = 0  # it goes on: as much is asked for again
                refusal = None
                self._short_said = False
            elif refused is not None or (heard and not bad_here
                                         and _damage(link) == damage_before):
                # No record: refused for want of memory, or frames but no answer (or one
                # whose records did not come) on a line that damaged none of them (a noisy
                # line's lost records are its noise, not the board's heap: plain frames would
                # fare worse there). Asked for less, then given up.
                stale += 1
                if refused is not None or stale >= _STALE_ROUNDS:
                    stale = 0
                    less += 1
                    if refused is not None and (refusal is None or _heap(refused)):
                        refusal = refused  # (the latest that tells the heap's figures)
                    if less > _LESS_MAX:
                        raise self._short_of_memory(link, refusal, less - 1)
                    self._less(link, less, refused)
            if refused is not None:
                pause = _RESEND
                continue  # (the board answered: asked again at once, for less)
            self._adapt(link, arrived, result, wanted)
            if result is None:
                if wanted and any(s in self._buffer for s in wanted):
                    pause = _RESEND
                    continue  # some (or all) of it came: ask for what is still missing
                self._sleep(pause)
                pause = min(pause * 2, 2.0)
                continue
            silent = 0
            pause = _RESEND
            # Judged on the records here by seq, never on frames: `count` is the stream's
            # frames, and one `r` frame carries a run of records (protocol 2); `records` is
            # how many records the board sent (a board without it sends one frame a record).
            last = result.get("last", held)
            count = result.get("records", result.get("count", 0))
            if not _small(last) or not _small(count):
                nonsense += 1
                if nonsense == 1:
                    self.say("the board %s answered journal with nonsense (%s); asking again"
                             % (self.device, _clip(result)))
                if nonsense >= 3:
                    return others  # what follows on is stored; the rest waits for a sane reply
                self._sleep(pause)
                continue
            bad = [s for s in self._bad if type(s) is int and held < s <= last]
            if wanted:
                got = [s for s in wanted if s in self._buffer or s in self._bad]
                if len(got) + bad_here >= count:
                    # All it sent came: a wanted seq it did not send is no longer on the board.
                    self._flush(touched, gone=set(wanted) - set(got))
                continue
            got = [s for s in self._buffer if held < s <= last]
            if len(got) + len(bad) + bad_here < count:
                continue  # frames lost on the way: the next round asks for what is missing
            # The whole stream came: a seq in it that did not is one the board no longer has
            # (rotated out, or lost to damage), stored as a gap.
            before = self.archive.last_seq(self.board_id)
            now = self._flush(touched, gone_until=last)
            if window is not None and last >= window:
                continue  # a window of the journal, whole: the next one
            if not [s for s in self._buffer if s > last]:
                return others
            if now == before and not [s for s in self._buffer if now < s <= last + 1]:
                return others  # nothing here follows on: what came is ahead of the board's end
        return others

    def _less(self, link, less, refused):
        """The next rounds ask the board for less (`less`: how many times since the last new
        record): smaller blocks (half the one it refused for want of memory: _catch_up; else
        half the last), fewer records a round (_catch_up's span), and from the second time
        after a refusal, or the fourth without one, plain frames instead of coded ones (a
        code's table and each coded frame's parity take the board's heap; a code is asked for
        again after fec.HOLD_S)."""
        if refused is None:
            self._block = max(_BLOCK_MIN, self._block / 2)
        if _coded(link) and (less >= 4 or (refused is not None and less >= 2)):
            link.coding.hold()  # the board is asked for plain frames with the next request

    def _short_of_memory(self, link, refusal, times):
        """The one line that ends a connection to a board the journal gets nowhere with."""
        held = self.archive.last_seq(self.board_id)
        if refusal is not None:
            heap = _heap(refusal)
            figures = []
            if "block" in heap:
                figures.append("largest block %d KB" % (heap["block"] // 1024))
            if "free" in heap:
                figures.append("%d KB free" % (heap["free"] // 1024))
            what = "is short of memory for its journal%s" % (
                " (%s)" % ", ".join(figures) if figures else "")
        else:
            what = "sends frames but no longer answers its journal (short of memory?)"
        return ShortOfMemory(
            "the board %s on %s %s: no record came though asked for less %d times; restart "
            "the board (power cycle it) to archive the rest" % (self.device, link.port, what,
                                                               times),
            "every record up to seq %d is archived and kept; the archive goes on from there "
            "once the board has room" % held)

    def _adapt(self, link, arrived, result, wanted):
        """The block size of the next round (as serial file transfers adapt theirs, ZMODEM and
        Kermit): halved when frames of this one were lost, half as large again when it came
        whole. A lost frame of a smaller block loses fewer records, and a small frame gets
        through a noisy line more often; a clean line gets large blocks back within rounds,
        up to what the board has room for (self._room)."""
        sent = result.get("records") if isinstance(result, dict) else None
        if not _small(sent):
            sent = len(wanted) if wanted and result is None and arrived else None
        if not sent:
            return
        if _coded(link):
            self._block = self._room  # coded frames: a lost one is rare, and not for its size
        elif arrived < sent:
            self._block = max(_BLOCK_MIN, self._block / 2)
        else:
            self._block = min(self._room, self._block * 1.5)

    def _took(self, res, touched):
        self._count(res)
        for gid in res.games:
            if gid not in touched:
                touched.append(gid)

    def _ack(self, link):
        seq = self.archive.ack_due(self.board_id)
        if seq is None:
            return
        if self._kid is not None:
            # A game goes from the board only once its end signature is held: the board can
            # sign only what it still holds.
            for game_no, header_seq in self.archive.unsigned_ends(self.board_id):
                if game_no not in self._gone_ends:
                    seq = min(seq, header_seq - 1)
                    break
            if seq <= (self.archive.board_info(self.board_id) or {}).get("acked", 0):
                return
        try:
            res = self._ask(link, "ack", {"seq": seq})
        except BoardError as e:
            self.say("the board refused the ack of seq %d: %s" % (seq, e.message))
            return
        self.archive.set_acked(self.board_id, seq)
        self.counts["acks"] += 1
        rotated = res.get("rotated") or []
        if rotated:
            self.say("acknowledged up to seq %d: the board rotated out game%s %s" % (
                seq, "" if len(rotated) == 1 else "s", ", ".join(str(n) for n in rotated)))

    def _count(self, res):
        self.counts["records"] += res.stored
        self.counts["actions"] += res.actions
        self.counts["skipped"] += res.skipped

    def _report(self, res, rec):
        if not res.stored:
            return
        g = res.games[-1] if res.games else None
        kind = _kind(rec)
        if kind == "A":
            self.say("game %s seq %d: %s" % (g, rec["seq"], _dumps(matchlog.strip_meta(rec))))
        elif kind == "H":
            self.say("game %s: new game #%s (seq %d)" % (g, rec["header"].get("game_no"),
                                                         rec["seq"]))
        else:
            self.say("game %s: ended, winner %s (seq %d)" % (g, _winner_text(rec["end"]),
                                                             rec["seq"]))

    def _report_game(self, gid):
        g = self.archive.game(gid)
        end = ""
        if g["end_seq"] is not None:
            end = ", ended, winner %s" % _winner_text(g["end"])
        self.say("game %d (%s #%s on %s): %d actions archived, up to seq %s%s" % (
            gid, g["game"], g["game_no"], g["device"], g["actions"],
            g["last_seq"] if g["last_seq"] is not None else g["seq"], end))

    # -- live --------------------------------------------------------------------------------
    tick = 0.2  # the longest wait for a frame before _between runs again

    def _between(self, link):
        """Called between frames while live: `chalk serve` passes its clients' commands here."""

    def _live(self, link):
        base = link.stats()
        quiet = time.monotonic()
        unanswered = 0
        while not self._stopped():
            self._between(link)
            f = link.poll(self.tick)
            st = link.stats()
            need = st["lost"] > base["lost"] or st["restarts"] > base["restarts"]
            if f is None:
                if not need and time.monotonic() - quiet < self.idle:
                    # A quiet moment after the board spoke: have it sign what is held (a no-op
                    # when its head was signed at the last seq held already).
                    self._sign(link)
                if not need and time.monotonic() - quiet >= self.idle:
                    # Silence: is the board still there, and did we miss anything? On a noisy
                    # line the reply may not come whole: only several silences in a row end
                    # the connection (and run() starts it again).
                    try:
                        info = link.hello(self.reply, self._retries())
                    except NoReply as e:
                        self._silent(link, e)
                        unanswered += 1
                        if unanswered >= 3:
                            raise
                        quiet = time.monotonic()
                        continue
                    unanswered = 0
                    if info.get("device") != self.device:
                        raise ChalkError("the board on %s changed" % link.port)
                    held = self.archive.last_seq(self.board_id)
                    self._check_journal(info, held, link.port)
                    last = info.get("last_seq")
                    need = _small(last) and last > held
                    asked = self._state_asked[1] if self._state_asked[0] == held else 0
                    if not need and held and not self.archive.has_state(self.board_id, held) \
                            and asked < _STATE_ASKS:
                        # The state frame of the last action was lost on the wire: ask (a few
                        # times for one seq: a board short of memory for the reply, or a line
                        # too noisy for it, is not asked at every quiet moment for ever).
                        self._state_asked = (held, asked + 1)
                        now = self._optional(link, "state")
                        if now.get("last_seq") == held and type(now.get("state")) is dict:
                            self.archive.add_states(self.board_id,
                                                    [{"seq": held, "state": now["state"]}])
                    quiet = time.monotonic()
            else:
                quiet = time.monotonic()
                self._heard(link)
                need = self._frame(link, f) or need
            if need:
                self._sync(link)
                base = link.stats()
        # Stopped (a service manager, Ctrl-C): the signatures on their way are waited for a
        # moment, so what is held ends signed as far as the board has signed it.
        self._await_signatures(link, _STOP_WAIT, stop=False)

    def _frame(self, link, f, syncing=False):
        """Take one unsolicited frame; True when a resync is needed."""
        if f.type == "rec":
            rec = f.payload
            why = _check(rec)
            if why is not None:
                self._unreadable(f, why)
                return True  # a resync steps over it (a gap) once the records after it come
            res = self.archive.ingest(self.board_id, [rec])
            if res.gap is not None:
                # Ahead of a record lost on the way: kept, stored once the ones before it are.
                self._buffer.setdefault(rec["seq"], rec)
                return True
            self._count(res)
            self._report(res, rec)
            if self._buffer:
                self._flush([])
            if _kind(rec) == "H" and not syncing:
                self._ack(link)
            return False
        if f.type == "state":
            seq = f.payload.get("seq")
            if not _small(seq, 1) or type(f.payload.get("state")) is not dict:
                return False
            if seq > self.archive.last_seq(self.board_id):
                self._pending[seq] = f.payload  # its record was lost on the way
                return True
            self.archive.add_states(self.board_id, [f.payload])
            return False
        if f.type == "boot":
            if f.payload.get("device") not in (None, self.device):
                raise ChalkError("another board started on %s" % link.port)
            # Its last_seq is the journal at that boot, which may be older than records already
            # held (a boot frame still queued behind our hello): check the journal as it is now.
            self.say("the board restarted (journal at seq %s)" % f.payload.get("last_seq"))
            self._room = _BLOCK_MAX  # its heap whole again
            self._check_journal(link.hello(self.reply, self._retries()),
                                self.archive.last_seq(self.board_id), link.port)
            return True
        if f.type == "warn":
            self.say("board warns: %s" % _dumps(f.payload))
        if f.type == "sig":
            self._signature(link, f.payload, syncing)
        return False


_RESEND = 0.4  # seconds between resends of a request to the board
_HELLO_TRIES = 3  # hellos on one connection while the board's frames come damaged
ONCE_PATIENCE = 30.0  # seconds `--once` goes on asking a board whose replies a noisy line loses
_BLOCK_MAX = 360  # bytes of packed records an `r` frame carries at most (pack.Block.LIMIT)
_BLOCK_MIN = 24  # a few records a frame: on the noisiest line each still gets through
_SIGN_WAIT = 15.0  # seconds a pending signature is waited for before it is asked for again
_HEAD_EVERY = 1.0  # seconds at least between two signatures asked for a game in progress
_STOP_WAIT = 3.0  # seconds a stopping archiver waits for the signatures on their way
_WANT_BITS = 256  # the most records one journal round may ask for by seq
_SPAN_LEAST = 8  # the fewest records a round asks a board short of memory for
_STALE_ROUNDS = 5  # clean rounds with frames from the board but no record before asking for less


def _damage(link):
    """Lines the link found damaged or not frames so far: a round that met one was noisy."""
    counts = link.stats()
    return counts.get("corrupt", 0) + counts.get("noise", 0) + counts.get("lost", 0)
_LESS_MAX = 6  # times asked for less, no record coming, before the connection stops
_STATE_ASKS = 3  # times the state of the last record is asked for at quiet moments
_WANT_ROUND = 0.45  # seconds of a round asking for missing records (sent 3 times in it)


def _all_here(wanted, buffer):
    """A request's `until`: every record asked for is here (queued or held back), so the
    reply (its count) is not needed."""
    wanted = set(wanted)

    def until(queue):
        here = {f.payload.get("seq") for f in queue if f.type == "rec"}
        return all(s in here or s in buffer for s in wanted)
    return until


def _short(e):
    """True for a board's refusal for want of memory (`heap` beside it; firmware before it, or
    a board with no room even for that, says so in words only)."""
    return e.reason == "refused" and (isinstance(e.payload.get("heap"), dict)
                                      or "short of memory" in e.message)


def _heap(e):
    """The heap's figures a refusal for want of memory tells ({} if none)."""
    heap = e.payload.get("heap")
    return {k: v for k, v in heap.items() if _small(v)} if isinstance(heap, dict) else {}


def _coded(link):
    """True when the board sends coded frames (a noisy line: docs/serial-protocol.md)."""
    return getattr(getattr(link, "coding", None), "board", None) is not None


def _drain(link):
    """The unsolicited frames already received, without waiting for more."""
    out = []
    while True:
        f = link.poll(0)
        if f is None:
            return out
        out.append(f)


def _winner_text(end):
    w = (end or {}).get("winner")
    if w is None:
        return "none" + (" (abandoned)" if (end or {}).get("abandoned") else "")
    return str(w)
