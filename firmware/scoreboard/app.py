# The scoreboard application: lines -> sensing -> referee -> journal -> rules -> display/link.
#
# One App per board. tick() is the whole loop body: read the lines, run the sensing layer (no
# allocation there), hand the input events to the game's referee, which proposes rule actions
# through submit(): checked by the rules, written to the journal (write-ahead), then applied,
# shown and mirrored to the host. At boot the journal is replayed, so a power cut loses at most
# the action in flight.

import gc
import time
from array import array

from . import chain, games, sense
from .display import Display, compose, generic_rows, short
from .journal import JournalError
from .referee import referee_for
from .rules import ConfigError, RuleError, rules_for

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

FIRMWARE_VERSION = "0.1.0"
_PEG_FAULT_BASE = 64  # FAULT ids of peg holes: 64 + side * 27 + bit (switch lines are < 30)
_KEY_FAULT_BASE = 128  # FAULT ids of keypad keys: 128 + key
_SAMPLES = const(32)  # changes the sampling timer notes before the loop runs the sensing layer
_RAM_BLOCKS = const(3)  # blocks of a game's codes kept in RAM (spill.SpilledCodes.RAM_BLOCKS)
_HEAP_CHECK_MS = const(30000)  # the heap is measured this often, between two scans
_HEAP_FIRST_MS = const(1000)  # ... and first this long after the app is made
_REST_MS = const(1000)  # the loop's look at a table at rest (App.rest_ms; serve caps it)
_NOT_ENDS = ("scan_ms", "peg_scan_ms", "watchdog_ms")  # timings that end no sensing timer
_WAIT_MS = const(50)  # ... while only a timer of the sensing layer runs
_LOOK_MS = const(20)  # ... and at the soonest, then (App.rest_ms)
_HEAP_LOW = const(8 * 1024)  # free heap below this, or a largest block below _BLOCK_LOW: low
_BLOCK_LOW = const(2 * 1024)
_NO_SERVICE = ("SERVICE VIEW", "no heap to show", "the lines now")


class App:
    def __init__(self, board, journal=None, emit=None, test_mode=None):
        self.board = board
        cfg = board.cfg
        self.cfg = cfg
        self.game_id = cfg["game"]
        self.clock = board.clock
        self.emit = emit or _nowhere  # emit(frame_type, payload): the link to the host
        self.test_mode = cfg["link"]["test_mode"] if test_mode is None else test_mode
        T = cfg["timings"]
        lines = board.lines
        names = lines.names
        self.nbtn = sum(1 for n in names if n.startswith("btn."))
        self.btn_names = [n[4:] for n in names[: self.nbtn]]
        self.btn_mask = (1 << self.nbtn) - 1
        self.ring = sense.EventRing(64)
        # A scorepad may have no button at all: its keypad does everything (the debouncers then
        # watch one line that never moves).
        self.buttons = sense.Buttons(max(1, self.nbtn), T["debounce_ms"], T["long_press_ms"],
                                     ring=self.ring, min_press_ms=T["min_press_ms"])
        # Chatter is judged on the edges the debouncer takes: contact bounce is not chatter.
        self.health = sense.LineHealth(max(1, lines.count), T["stuck_ms"], T["chatter_edges"],
                                       T["chatter_window_ms"], ring=self.ring,
                                       debounce_ms=T["debounce_ms"])
        self.keys = None
        if board.keypad is not None:
            self.keys = sense.Keypad(len(cfg["keypad"]["keys"]), T["debounce_ms"],
                                     T["stuck_ms"], ring=self.ring, fault_base=_KEY_FAULT_BASE)
        npins = sum(1 for n in names if n.startswith("pin."))
        self._pin_all = (1 << npins) - 1
        self.tilt = None
        self.pockets = None
        npk = sum(1 for n in names if n.startswith("pocket."))
        if npk:
            # Pocket beams follow the tilt pins in the line bitmap (sense/pockets.py).
            ps = cfg["pocket_sensing"]
            colour = 0
            for i, n in enumerate(n for n in names if n.startswith("pocket.")):
                if "colour" in cfg["pockets"][n[7:]]:
                    colour |= 1 << i
            from .sense.pockets import PocketCounter

            self.pockets = PocketCounter(npk, ps["min_ms"], ps["striker_ms"],
                                         ps["black_below"], ps["red_below"], colour,
                                         ring=self.ring)
            self._pk_shift = self.nbtn + npins
            self._pk_colour = colour
        self._npins = npins
        if npins:
            self.tilt = sense.TiltLatch(npins, T["min_fall_ms"], T["settle_ms"], ring=self.ring)
        # Every switch line has an edge interrupt: a tilt pin's fall or a ball's passage is
        # timed from its edges, and any change is sampled when it happens (start_sampling).
        self._stamped = hasattr(lines, "edge_ms")  # the hal gives each edge its own ms
        self._edge_cb = self._edge  # bound once: an interrupt must not allocate it
        lines.on_edge(self._edge_cb)
        self.grid = None
        self.peg_health = None
        self._pegbuf = array("i", [0, 0])
        if board.pegs is not None:
            self.grid = sense.PegGrid(T["peg_debounce_ms"], ring=self.ring)
            # Pegs legitimately stay in for a whole game: only chatter is a fault there.
            self.peg_health = (
                sense.LineHealth(27, 0, T["chatter_edges"], T["chatter_window_ms"],
                                 ring=self.ring, base=_PEG_FAULT_BASE),
                sense.LineHealth(27, 0, T["chatter_edges"], T["chatter_window_ms"],
                                 ring=self.ring, base=_PEG_FAULT_BASE + 27))
            self._peg_every = T["peg_scan_ms"]
            self._peg_last = None
        self._peg_quiet = False  # the peg layer waits for nothing with _peg_a, _peg_b (_quiet)
        self._peg_a = self._peg_b = 0
        self._ev = array("i", [0, 0, 0, 0])
        self._step = T["scan_ms"]
        # When a timer of the sensing layer can end, in ms after the latest change of an input
        # (each of them starts at one: a bounce, a press, a fall, a shot window settling, a
        # closing window's 2 x min_fall_ms): the loop sleeps until the next of these.
        ends = []
        for k in T:
            v = T[k]
            if k[-3:] == "_ms" and k not in _NOT_ENDS and v > 0:
                ends.append(v)
                ends.append(2 * v)
        ends.sort()
        self._ends = tuple(ends)
        self._s_change = 0  # the time of the latest change noted
        self._sampling = False  # the lines are sampled on their edges (start_sampling)
        self._sampler = None  # the board's timer sampling a keypad or pegs
        self._s_seen = 0  # the latest time the inputs were looked at
        # The ring of samples (start_sampling), made here while the heap is in one piece.
        self._s_t = array("i", bytes(4 * _SAMPLES))
        self._s_v = array("i", bytes(16 * _SAMPLES))  # raw, keys, side 0 pegs, side 1 pegs
        self._s_now = array("i", [0, 0, 0, 0])  # the inputs of the latest sample noted
        self._s_pegs = array("i", [0, 0])
        self._s_cb = self.sample  # bound once: the timer must not allocate it
        self._s_r = self._s_w = 0  # read by tick only / written by sample only
        self._s_lost = 0  # samples the ring had no room for
        self.woken = None  # wake.Woken: set when a sample notes a change (the loop's sleep ends)
        self._s_last = 0  # when the latest sample was taken
        self._p_raw = self._p_keys = 0  # the inputs of the latest sample tick() ran over
        self._idle = False  # the sensing layer waited for nothing after its last run
        # The gauge (status, chalk watch, the service view): the longest gap between two scans
        # (or samples) since boot, the longest step of the main loop (serve sets it), the heap.
        self.gap_ms = 0
        self.step_ms = 0
        self._scan_t = None
        self.heap = [None, None]  # free heap, largest block (bytes) at the last check
        self.heap_low = False  # the last check found the heap near its end
        # Ticks when the heap is checked next: the first a moment after the loop starts, not in
        # its first pass (a collection, with whatever the boot left the sensing layer to do).
        self._heap_due = self.clock.ticks_add(self.clock.ticks_ms(), _HEAP_FIRST_MS)
        self._heap_fresh = False  # collected for that check, measured from the next pass on
        self._heap_steps = None  # that measure, a probe a pass (heap_steps)
        self._long = 0  # buttons held past long_ms, acted on at release
        self.journal = journal or chain.ChainedJournal(board.storage.root)
        self.display = Display(board.display)
        self.referee = referee_for(self.game_id)(self)
        self.screen_part = games.part(self.game_id, "screen")  # the game's own screen rows
        self.game = None
        self.header = None
        self.last = None  # text of the last action, for the display
        # The latest action, the state list before it, the action an undo took back: status()
        self._last_rec = None
        self._last_s = None
        self._last_undid = None  # the code of the action the latest undo took back
        self._last_rules = None  # the rules that code is of
        self.error = None  # why the last proposed action was refused
        self.problems = list(board.problems)  # boot-time faults worth showing
        self.faults = {}  # line id -> "stuck" / "chatter"
        self.wall = None  # (epoch ms, ticks) once the host set the clock
        self.service = False
        self.recorder = None  # a record.Recorder while the host records line changes
        self.signer = None  # sign.Signer: the board's own key, loaded when first needed
        self.keyless = False  # the board has no key yet: the main loop has one made
        self.played = 0  # ticks of the host's last act or new (serve.py: the signer waits)
        self.keypad_games = None  # a scorepad's: the games it may switch to, read at boot
        self._t_base = 0
        self._t_boot = self.clock.ticks_ms()
        self._spill_failed = -1  # the game's length when a checkpoint could not be written
        self.dirty = True
        self._drawing = None  # the screen's redraw under way (_redraw): a part a pass

    # -- boot and games ----------------------------------------------------------------------
    def boot(self):
        """Resume the game in progress from the journal, or start a new one. Holding the undo
        button together with the first button (done / confirm) at power-on enters the service
        view (every line's level and edge count, for bring-up)."""
        raw = self.board.lines.read()
        names = self.btn_names
        if "undo" in names and raw & 1 and raw >> names.index("undo") & 1:
            self.service = True
        self.game = None
        self._resumable = True  # False: the journal's game cannot be played on here
        if self.keys is not None:  # read while the heap is whole, before the journal fills it
            self.keypad_games = games.with_sensor("keypad")
        from . import boardkey  # the board's own key: the chain of games, made at first boot

        boardkey.boot(self)
        try:
            res = self.journal.boot(self._resume_action)
        except MemoryError:
            raise  # the heap, not the journal: the game is not closed for it
        except Exception as e:
            # A journal this app cannot read (a record the chain or the rules' code refuse,
            # written by older firmware) never keeps the board from booting: its game in
            # progress is left on flash as it is, unfinished, and play goes on in a new one.
            res = self._unreadable(e)
        boardkey.booted(self)
        if self.game is not None and hasattr(self.game._codes, "store"):
            self.game._codes.store.verify = False  # the fold checked every slot
        for e in res.errors:
            self.problems.append("journal %s line %s: %s" % (e["file"], e["line"], e["error"]))
        if res.header is not None and self.game is None and self._resumable:
            self._resume_header(res.header)
        # The boot frame first: what the board sends after it is this boot's.
        self.emit("boot", self.hello())
        if self.game is None or not self._resumable:
            # Nothing to resume, or a game this board cannot go on with (another game, a config
            # or an action its rules refuse): that one is closed as abandoned, kept for the host,
            # and a new game starts, so play never stops at boot.
            self.new_game(abandoned=res.header is not None)
        self.referee.changed()
        self.refresh()  # the first screen whole, within the boot's own long step
        return res

    def _unreadable(self, e):
        from .journal import Resume

        gc.collect()
        no = self.journal.stop_open()
        if no is None:
            raise e  # not even the files could be read: no flash to play on
        self.game = None
        self.header = None
        self._t_base = 0
        res = Resume()
        res.last_seq = self.journal.last_seq()
        res.stopped.append(no)
        self.problems.append("journal game %d could not be read (%s): stopped, a new game "
                             "started" % (no, str(e)[:80]))
        return res

    def keypad_game(self, game):
        """True if this board can switch to `game`: a scorepad plays every game of the registry
        whose board is a keypad (its board.py), one at a time."""
        if self.keys is None or type(game) is not str:
            return False
        return game in self.keypad_games

    def _switch(self, game):
        if game != self.game_id:
            self.game_id = game
            self.referee = referee_for(game)(self)
            self.screen_part = games.part(game, "screen")

    def _resume_header(self, header):
        """Start the journal's game again from its header; False (and a problem shown) if this
        board cannot play it."""
        if header.get("game") != self.game_id and self.keypad_game(header.get("game")):
            self._switch(header["game"])
        if header.get("game") != self.game_id:
            self.problems.append("journal game %s is %s; this board plays %s: closed" % (
                header.get("game_no"), header.get("game"), self.game_id))
            self._resumable = False
            return False
        try:
            self._start(header)
        except ConfigError as e:
            self.problems.append("journal game %s: %s: closed" % (header.get("game_no"), e))
            self._resumable = False
            return False
        return True

    def _resume_action(self, action):
        if not self._resumable:
            return
        if self.game is None and not self._resume_header(self.journal.header()):
            return
        try:
            pending = self.game.prepare(action)
            self._keep_last(action, pending)
            self.game.push(pending)  # no state dict per action at boot
            self._checkpoint(True)  # at boot at once: the loop has not started
        except MemoryError:
            raise  # the heap, not the action: the game is not closed for it
        except Exception as e:  # a RuleError, or an action the rules' code cannot read
            # A journal written by other rules: actions appended after this one would be lost
            # at the next boot too, so this game is closed and a new one starts.
            self._resumable = False
            self.problems.append("journal action refused: %s: closed" % e)
            return
        t = action.get("t")
        if type(t) is int:
            self._t_base = t

    def _start(self, header):
        self.header = header
        self.game = rules_for(header["game"])(header.get("config") or {})
        self._t_boot = self.clock.ticks_ms()

    def new_game(self, config=None, players=None, game=None, abandoned=False):
        """End the game in progress (kept until the host has it) and start a new one; returns
        the new header's seq, or None if the journal refused to write (shown as an error)."""
        game = game or self.game_id
        if game != self.game_id and not self.keypad_game(game):
            raise ConfigError("this board plays %s, not %s" % (self.game_id, game))
        if config is None:
            if game != self.game_id:
                config = self.cfg["game_config"] if game == self.cfg["game"] else {}
            else:
                config = self.game.config if self.game is not None else self.cfg["game_config"]
        # Checked before anything is written; the header keeps it with the defaults filled in,
        # so a log says exactly what was played whatever the rules' defaults become.
        config = rules_for(game)(config).config
        if players is None:
            players = self.header.get("players", []) if self.header else []
        header = {"chalk": 1, "game": game, "config": config, "players": players,
                  "board": self.cfg["board"], "firmware": FIRMWARE_VERSION}
        if self.board.device_id is not None:
            header["device"] = self.board.device_id  # in the chain: a log names its board
        if self.wall is not None:
            header["started"] = self.iso_now()
        last = self.journal.last_seq()
        # (with the "prev" the journal adds: the board's game before, its seq and link)
        if not _fits("rec", {"seq": last + 2, "type": "H", "header": dict(
                header, game_no=99999, prev={"game_no": 99999, "seq": last, "link": "0" * 64})}):
            # Checked before the game in progress is ended: a header the link cannot send
            # would leave the host without the game (nine names of 40 characters, say).
            raise ConfigError("the game header does not fit in a frame: shorter names")
        try:
            if self.journal.game_no() is not None:  # a game is in progress
                outcome = self.game.outcome() if self.game is not None else None
                end = {"winner": outcome["winner"] if outcome else None}
                if abandoned:
                    end["abandoned"] = True
                from .boardkey import end_game

                end_game(self, end)  # journaled, sent, and signed between scans
                if self.game is not None and hasattr(self.game._codes, "store"):
                    self.game._codes.store.remove()  # the ended game's checkpoints
            no, seq = self.journal.new_game(header)
        except (OSError, JournalError) as e:
            # Flash full or failing: say so; a board with no game yet still shows one, which
            # cannot be journaled (every action will be refused with this error) until fixed.
            self.error = "journal: %s" % e
            self.emit("warn", {"warning": self.error})
            if self.game is None:
                self._start(header)
            self.dirty = True
            return None
        header["game_no"] = no
        self._t_base = 0
        self._switch(game)
        self._start(header)
        self.last = None
        self._last_rec = None
        self.error = None
        self.referee.changed()
        self.dirty = True
        self.emit("rec", {"seq": seq, "type": "H", "header": header})
        self.emit("state", {"seq": seq, "state": self.game.state()})
        return seq

    def signing(self):
        """The board's signer, loaded when first needed (boardkey.py)."""
        from .boardkey import signer

        return signer(self)

    # -- actions -----------------------------------------------------------------------------
    def t_now(self):
        """ms since the game started (continues across a reboot from the last journaled t)."""
        return self._t_base + self.clock.ticks_diff(self.clock.ticks_ms(), self._t_boot)

    def predict(self, action):
        """The state an action would give, or None (and the refusal shown) if refused."""
        try:
            return self.game.export(self.game.prepare(action)[1])
        except RuleError as e:
            self._refused(e)
            return None

    def submit(self, action, pending=None):
        """Check, journal, apply and publish one action. True if it was accepted. `pending`:
        what the rules' prepare() already gave for it (the host's command checked it first: an
        undo's state is not worked out twice)."""
        if pending is None:
            try:
                pending = self.game.prepare(action)
            except RuleError as e:
                self._refused(e)
                return False
        made = self.record(action)
        return made is not None and self.take(made, pending)

    def record(self, action):
        """The journal record of an action the rules took (prepare), as (record, its frame's
        form, its compact code or None); None if no frame could carry it (said on the screen
        and to the host). Nothing is written."""
        rec = dict(action)
        rec.pop("seq", None)  # the journal numbers records; a seq given in an action is not it
        rec["t"] = self.t_now()
        out = dict(rec)
        out["seq"] = self.journal.last_seq() + 1
        # One compact `a` frame when the record packs (pack.pack_action), else rec + state.
        # (Imported here: the link has it loaded on a board; the app alone need not hold it.)
        from . import pack

        code = pack.pack_action(self.game, out)
        if code is None and not _fits("rec", out):
            # Checked before anything is written: a record the link cannot send is never
            # journaled (the host could not archive it, and the board would say it did it).
            self.error = "action too long for a frame: not taken"
            self.emit("warn", {"warning": self.error})
            self.dirty = True
            return None
        return rec, out, code

    def take(self, made, pending, line=None):
        """Journal, apply and publish an action: `made` its record(), `pending` what the rules'
        prepare() gave for it against the state now; `line`: its journal line and chain link,
        worked out beforehand (journal.make, a step of its own). True if it was taken."""
        rec, out, code = made
        try:
            seq = self.journal.append(rec) if line is None else self.journal.append(rec, line)
        except (OSError, JournalError) as e:
            self.error = "journal: %s" % e
            self.emit("warn", {"warning": self.error})
            self.dirty = True
            return False
        out["seq"] = seq
        self._keep_last(out, pending)
        state = self.game.commit(pending)
        self.error = None
        self.last = short(self.screen_part, rec)
        try:
            if code is None:
                raise ValueError
            # (with its record: a link that makes the frame later sends that if it must)
            self.emit("a", {"seq": seq, "t": out["t"], "code": code, "state": state, "rec": out})
        except ValueError:  # no compact form (a state value with "," or a space): as JSON
            self.emit("rec", out)
            self.emit("state", {"seq": seq, "state": state})
        self.referee.changed()
        self.dirty = True
        return True

    def _keep_last(self, rec, pending):
        # The host says the latest action in words from what it did (status(): rec, before,
        # undid). Kept by reference (the state list it replaces is not copied); an undo's
        # action kept as its code, taken now, while the rules still hold it, and decoded (by
        # the same rules) only if status() asks.
        # (Attributes, not a tuple: a boot resumes thousands of actions allocating none.)
        game = self.game
        codes = game._codes
        self._last_undid = codes[-1] if pending[0] is None and len(codes) else None
        self._last_rules = game
        self._last_rec = rec
        self._last_s = game._s

    def _refused(self, e):
        self.error = "%s %s" % (e.rule, e.reason)
        self.emit("warn", {"refused": e.rule, "message": str(e)})
        self.dirty = True

    def taken(self, t):
        """When the board takes a press released at t: its release confirmed, min_press_ms on
        (the loop runs the sensing layer over its notes later, but judges them at their time)."""
        return self.clock.ticks_add(t, self.cfg["timings"]["min_press_ms"])

    def button(self, ident):
        return self.btn_names[ident] if 0 <= ident < self.nbtn else None

    # -- the loop ----------------------------------------------------------------------------
    def _edge(self, line):
        # Edge interrupt of a tilt line or a pocket beam: ints only (TiltLatch.note_edge and
        # PocketCounter.note_edge allocate nothing). The edge's own time when the hal knows it
        # (the simulated board replaying a trace: lines.edge_ms), else now (the board's handler
        # runs within a ms or so of its edge).
        lines = self.board.lines
        i = line - self.nbtn
        t = lines.edge_ms if self._stamped else -1
        if t < 0:
            t = self.clock.ticks_ms()
        v = lines.level(line)
        if i < 0:
            pass  # a button: its change is noted with the others' levels, below
        elif i < self._npins:
            self.tilt.note_edge(i, t, v)
        else:
            i -= self._npins
            colour = -1
            if v and self._pk_colour >> i & 1:
                colour = self.board.analog.read(i)  # what is in front of the sensor now
            self.pockets.note_edge(i, t, v, colour)
        if self._sampling:
            self.sample_lines(t)
        if self.recorder is not None:
            self.recorder.edge(t, line, v)

    def scan(self, t):
        """The sensing step: lines in, events into the ring. Allocates nothing."""
        raw = self.board.lines.read()
        pegs = False
        if self.grid is not None and (self._peg_last is None or self.clock.ticks_diff(
                t, self._peg_last) >= self._peg_every):
            self._peg_last = t
            self.board.pegs.scan_into(self._pegbuf)
            pegs = True
        self._process(t, raw, self.board.keypad.scan() if self.keys is not None else 0, pegs,
                      self.board.analog)

    # -- sampling ---------------------------------------------------------------------------
    # Once the main loop runs (start_sampling), the lines are sampled when they change: every
    # switch line has an edge interrupt (hal Lines.on_edge), whose handler runs between two
    # bytecodes of whatever the loop is doing and notes the lines in a preallocated ring;
    # lines that cannot interrupt (a scorepad's key matrix, the peg chain of a board with pegs)
    # are sampled by the board's timer (board.sampler) instead. tick() then runs the sensing
    # layer over those samples in order, as the scans would have seen them (the sample before
    # each change still saw the old levels), so a press or a passage during a long step of the
    # loop is never missed, and a table at rest costs the loop almost nothing: it sleeps.

    def start_sampling(self, callback=None):
        """Sample on edges (and by the board's timer, for a keypad or pegs) from now on.
        `callback`: what the timer calls instead of sample() (serve's stretch)."""
        now = self._s_now
        now[0] = self.board.lines.read()
        now[1] = self.board.keypad.scan() if self.keys is not None else 0
        now[2] = self._s_pegs[0] = self._pegbuf[0]
        now[3] = self._s_pegs[1] = self._pegbuf[1]
        self._s_peak = None
        if self.pockets is not None and self.board.analog is not None:
            self._s_peak = _Peaks(self.board.analog.count)
        self._p_raw = now[0]
        self._p_keys = now[1]
        self._s_prev = -1
        self._s_last = self._s_seen = self._s_change = self.clock.ticks_ms()
        self._sampling = True
        if self.pockets is not None:
            self.pockets.edges_only = True
        timer = getattr(self.board, "sampler", None)
        if timer is not None and (self.keys is not None or self.grid is not None):
            self._sampler = timer(self._step if self.keys is not None else self._peg_every,
                                  callback or self._s_cb)
        return True

    def stop_sampling(self):
        self._sampling = False
        if self.pockets is not None:
            self.pockets.edges_only = False
        if self._sampler is not None:
            self._sampler.deinit()
            self._sampler = None

    def sample(self, _arg=None):
        """Read every input (the lines, the keypad, the pegs when due, the colour of a broken
        beam) and note a change: the timer's callback, and the loop's own look at each pass.
        Allocates nothing."""
        board = self.board
        t = self.clock.ticks_ms()
        if self._sampler is not None:
            gap = self.clock.ticks_diff(t, self._s_last)
            if gap > self.gap_ms:
                self.gap_ms = gap  # the longest the timer went without sampling
            self._s_last = t
        pegs = self._s_pegs
        if self.grid is not None and (self._peg_last is None or self.clock.ticks_diff(
                t, self._peg_last) >= self._peg_every):
            self._peg_last = t
            board.pegs.scan_into(pegs)
        self._note(t, board.lines.read(),
                   board.keypad.scan() if self.keys is not None else 0)

    def sample_lines(self, t=-1):
        """The switch lines only, at t (an edge's own time; default now): an edge's handler, and
        the loop's look while a timer samples the keypad or the pegs, which it alone reads.
        Allocates nothing."""
        self._note(self.clock.ticks_ms() if t < 0 else t, self.board.lines.read(),
                   self._s_now[1])

    def _note(self, t, raw, keys):
        now = self._s_now
        pegs = self._s_pegs
        peak = self._s_peak
        if peak is not None:
            m = (raw >> self._pk_shift) & self._pk_colour
            i = 0
            while m:
                if m & 1:
                    peak.note(i, self.board.analog.read(i))
                m >>= 1
                i += 1
        if raw != now[0] or keys != now[1] or pegs[0] != now[2] or pegs[1] != now[3]:
            if self.woken is not None:
                self.woken.flag = 1
            self._s_change = t
            w = self._s_w
            nxt = w + 1 if w + 1 < _SAMPLES else 0
            if nxt == self._s_r:
                if self._s_lost < 0x3FFFFFFF:
                    self._s_lost += 1  # the loop is far behind: noted again at the next sample
            else:
                self._s_t[w] = t
                v = self._s_v
                k = 4 * w
                v[k] = raw
                v[k + 1] = keys
                v[k + 2] = pegs[0]
                v[k + 3] = pegs[1]
                now[0] = raw
                now[1] = keys
                now[2] = pegs[0]
                now[3] = pegs[1]
                self._s_w = nxt
        if self.clock.ticks_diff(t, self._s_seen) > 0:
            self._s_seen = t

    def rest_ms(self):
        """How long the loop may sleep before it looks again: 0 while something new was noted
        (or the screen is to be drawn); while a timer in the sensing layer runs (a bounce, a
        held press, a shot window settling), until the next moment one can end (_ends after
        the latest change, _LOOK_MS at the soonest: ends close together are judged at one look;
        past them all, _WAIT_MS, as micropython-async polls a switch: an end is judged at its
        time whatever the look's); _REST_MS when nothing waits at all.
        Edges are noted meanwhile by their handlers (and end the sleep: wake.py)."""
        if not (self._sampling and self._s_r == self._s_w and not self.dirty
                and self._drawing is None and not self._heap_fresh
                and (self.tilt is None or self.tilt._i_all == self.tilt._s_all)
                and (self.pockets is None or self.pockets._r_r == self.pockets._r_w)):
            return 0
        if self._idle:
            return _REST_MS
        gone = self.clock.ticks_diff(self.clock.ticks_ms(), self._s_change)
        for end in self._ends:
            if end >= gone:
                end = end - gone + 1
                return end if end > _LOOK_MS else _LOOK_MS
        return _WAIT_MS

    def _drain(self):
        """Run the sensing layer over the samples taken since the last tick. Allocates
        nothing."""
        step = self._step
        v = self._s_v
        r = self._s_r
        w = self._s_w
        prev = self._s_prev
        peak = self._s_peak
        while r != w:
            t = self._s_t[r]
            if prev >= 0 and self.clock.ticks_diff(t, prev) < 0:
                t = prev  # noted after a later look (an edge's handler that ran late): time
                # goes one way through the sensing layer
            k = 4 * r
            if prev >= 0 and self.clock.ticks_diff(t, prev) > step:
                # The sample before this change saw the old levels: the scan there first.
                self._process(self.clock.ticks_add(t, -step), self._p_raw, self._p_keys, False,
                              peak)
            self._pegbuf[0] = v[k + 2]
            self._pegbuf[1] = v[k + 3]
            self._p_raw = v[k]
            self._p_keys = v[k + 1]
            self._process(t, v[k], v[k + 1], self.grid is not None, peak)
            prev = t
            r = r + 1 if r + 1 < _SAMPLES else 0
            self._s_r = r
        t = self._s_seen
        if prev < 0 or self.clock.ticks_diff(t, prev) > 0:
            # Nothing changed since: the sensing layer runs only if something in it waits for
            # time to pass (a press held, a bounce, a shot window) or an edge came meanwhile;
            # an idle table costs the loop almost nothing.
            if not (self._idle and (self.tilt is None or self.tilt._i_all == self.tilt._s_all)
                    and (self.pockets is None or self.pockets._r_r == self.pockets._r_w)):
                self._process(t, self._p_raw, self._p_keys, self.grid is not None, peak)
                prev = t
        self._s_prev = prev

    def _process(self, t, raw, keys, pegs, analog):
        """The sensing layer over one scan's inputs (pegs: the peg buffer is fresh)."""
        rec = self.recorder
        if rec is not None:
            rec.scan(t, raw)
        self.health.tick(t, raw)
        if self.tilt is not None:
            self.tilt.tick(t, (raw >> self.nbtn) & self._pin_all)
        if self.pockets is not None:
            self.pockets.tick(t, raw >> self._pk_shift, analog)
        if pegs:
            buf = self._pegbuf
            a = buf[0]
            b = buf[1]
            if rec is not None:
                rec.pegs(t, 0, a, _PEG_FAULT_BASE)
                rec.pegs(t, 1, b, _PEG_FAULT_BASE + 27)
            # Pegs as they were, with nothing of theirs waiting (the peg layer said so in the
            # last _quiet): their ticks would do nothing, and are the scan's dearest part.
            if not (self._peg_quiet and a == self._peg_a and b == self._peg_b):
                self._peg_quiet = False
                self._peg_a = a
                self._peg_b = b
                self.peg_health[0].tick(t, a)
                self.peg_health[1].tick(t, b)
                self.grid.tick(t, a, b)
        if self.keys is not None:
            self.keys.tick(t, keys)
        # Buttons last: a press acts on what the sensors said in the same scan, so a shot
        # window settling (SHOT) or a peg settling (PEG) reaches the referee before the
        # "confirm"/"done" released in that scan, not after it (else the settled pins went to
        # the next shot, and a peg mismatch found by "done" was cleared by the PEG behind it).
        self.buttons.mute = self.health.faulty & self.btn_mask
        self.buttons.tick(t, raw & self.btn_mask)
        if self._sampling:
            self._idle = self._quiet(raw, keys)

    def _quiet(self, raw, keys):
        """True if no part of the sensing layer waits for time to pass with these inputs."""
        if not (self.buttons.quiet(raw & self.btn_mask) and self.health.quiet(raw)):
            return False
        if self.tilt is not None and not self.tilt.quiet((raw >> self.nbtn) & self._pin_all):
            return False
        if self.pockets is not None and not self.pockets.quiet(raw >> self._pk_shift):
            return False
        if self.grid is not None and not self._peg_quiet:
            a = self._pegbuf[0]
            b = self._pegbuf[1]
            if not (self.grid.quiet(a, b) and self.peg_health[0].quiet(a)
                    and self.peg_health[1].quiet(b)):
                return False
            self._peg_quiet = a == self._peg_a and b == self._peg_b
        return self.keys is None or self.keys.quiet(keys)

    def tick(self):
        """One pass of the main loop: sense (or the samples the timer took), referee, display."""
        if self._sampling:
            if self._sampler is None:
                self.sample()  # a look at every input: what no edge could tell
            else:
                self.sample_lines()
            self._drain()
        else:
            t = self.clock.ticks_ms()
            if self._scan_t is not None:
                gap = self.clock.ticks_diff(t, self._scan_t)
                if gap > self.gap_ms:
                    self.gap_ms = gap
            self._scan_t = t
            self.scan(t)
        ev = self._ev
        while self.ring.pop_into(ev):
            self.on_event(ev[0], ev[1], ev[2], ev[3])
        if self._drawing is not None or self.dirty or self.service:
            self._draw()  # a part of the redraw (the service view follows every line live)
        elif self.game is not None and getattr(self.game._codes, "_ram", len(
                self.game._codes._blocks) - 1) >= _RAM_BLOCKS:
            self._checkpoint(False)  # a checkpoint to flash: a step of its own, between scans
        else:
            t = self.clock.ticks_ms()
            if self.clock.ticks_diff(t, self._heap_due) >= 0:
                # The gauge, in steps of their own: the heap collected, then (from the next
                # pass on, which comes at once: rest_ms) measured a probe a pass.
                if not self._heap_fresh:
                    gc.collect()
                    self._heap_fresh = True
                    self._heap_steps = self.heap_steps(collect=False)
                else:
                    try:
                        next(self._heap_steps)  # type: ignore[arg-type]
                    except StopIteration:
                        self._heap_fresh = False
                        self._heap_steps = None
                        self._heap_due = self.clock.ticks_add(t, _HEAP_CHECK_MS)

    def check_heap(self, collect=True):
        """Measure the heap (gauge.py); near its end, say so on the screen and to the host, and
        keep fewer blocks of the game's codes in RAM (a checkpoint to flash, at once).
        `collect` False: the heap was collected just before (a step of its own)."""
        for _ in self.heap_steps(collect):
            pass

    def heap_steps(self, collect=True):
        """check_heap() a step at a time (a generator: the gauge's probes a step each)."""
        try:
            from . import gauge

            gauge.fresh[0] = not collect
            out = [None, None]
            for _ in gauge.measuring(out):
                yield
            free, block = out
        except MemoryError:
            # No room even to measure (the gauge's module, or its probe, found no block): that
            # is the answer. A gauge never stops the loop.
            gc.collect()
            free = gc.mem_free() if hasattr(gc, "mem_free") else 0
            block = 0
        self.heap[0] = free
        self.heap[1] = block
        if free is None:
            return
        low = free < _HEAP_LOW or block < _BLOCK_LOW
        if low and self.game is not None:
            codes = self.game._codes
            try:
                if not hasattr(codes, "store") and len(codes._blocks) > 1:
                    self._checkpoint(True, force=True)
                    codes = self.game._codes
                if hasattr(codes, "store") and codes.RAM_BLOCKS > 2:
                    codes.RAM_BLOCKS = 2
                    self._checkpoint(True)
            except MemoryError:
                # No room even to start the checkpoint file now: the game keeps its blocks in
                # RAM for the moment (tried again at the next check); said below, the loop
                # plays on.
                gc.collect()
        if low != self.heap_low:
            self.heap_low = low
            self.dirty = True
            self.emit("warn", {"warning": self.heap_warning() if low else "heap ok",
                               "heap": {"free": free, "block": block}})

    def heap_warning(self):
        return "heap low: %dK free, %dK block" % (self.heap[0] // 1024, self.heap[1] // 1024)

    def gauge(self):
        """The status reply's gauge: free heap, largest block, longest scan gap and step."""
        return {"mem_free": self.heap[0], "mem_block": self.heap[1], "gap_ms": self.gap_ms,
                "step_ms": self.step_ms, "lost": self._s_lost}

    def _checkpoint(self, booting, force=False):
        """Blocks of a long game's codes beyond the newest few go to its checkpoint file, so
        its RAM does not grow (spill.py): the file is made once the game needs it (or the heap
        runs low: `force`), and one block is written a call (at boot: all that are due)."""
        game = self.game
        if game is None:
            return
        codes = game._codes
        if (len(codes._blocks) <= _RAM_BLOCKS and not force) or len(game) == self._spill_failed:
            return
        if not hasattr(codes, "store"):
            no = (self.header or {}).get("game_no")
            if type(no) is not int:
                return
            from . import spill

            store = spill.attach(game, spill.path_for(self.journal.root, no))
            store.verify = booting  # boot folds the journal again: rewrite only what differs
        try:
            while game.spill() and booting:
                pass
        except OSError as e:
            self._spill_failed = len(game)  # tried again after the next action
            # Flash full: the block stays in RAM (the game's heap grows until it is fixed).
            msg = "checkpoint: %s; the game keeps its actions in RAM" % e
            if self.error != msg:
                self.error = msg
                self.emit("warn", {"warning": msg})
                self.dirty = True

    def on_event(self, kind, ident, value, t):
        if kind == sense.FAULT:
            name = self.line_name(ident)
            if value == sense.HEALTHY:
                self.faults.pop(name, None)
            else:
                self.faults[name] = "stuck" if value == sense.STUCK else "chatter"
                if ident < 30:
                    self._long &= ~(1 << ident)  # a jammed button's long press never acts
            self.emit("warn", {"line": name, "fault": self.faults.get(name, "ok")})
        if self.test_mode:
            self.emit("event", {"kind": sense.kind_name(kind), "id": ident, "value": value,
                                "t": t})
        if kind == sense.LONG:
            # A long press acts when the button is let go, not when long_ms has passed: a
            # button that jams (reported stuck after stuck_ms) then never undoes a score.
            self._long |= 1 << ident
            return
        if kind == sense.LINE and value == 0 and self._long >> ident & 1:
            self._long &= ~(1 << ident)
            kind = sense.LONG
        elif kind == sense.LINE or kind == sense.PIN_DOWN:
            self.dirty = True
            return  # shown live by the referee's status; no decision rests on them alone
        self.dirty = True
        if self.service:
            # Bring-up: presses only show on the service view; a long press of undo leaves it.
            if kind == sense.LONG and self.button(ident) == "undo":
                self.service = False
            return
        self.referee.on_event(kind, ident, value, t)

    def line_name(self, ident):
        if ident >= _KEY_FAULT_BASE:
            return "key." + self.cfg["keypad"]["keys"][ident - _KEY_FAULT_BASE]
        if ident >= _PEG_FAULT_BASE:
            side, bit = divmod(ident - _PEG_FAULT_BASE, 27)
            return "peg.%d.%d.%d" % (side, bit // 3 + 1, bit % 3 + 1)
        return self.board.lines.names[ident]

    def warnings(self):
        out = ["%s %s" % (k, v) for k, v in sorted(self.faults.items())]
        out += self.referee.warnings()
        if self.error:
            out.append(self.error)
        if self.heap_low:
            out.append(self.heap_warning())
        return out + self.problems

    def refresh(self):
        """The whole redraw now (tests, tools): the loop does it a part a pass (tick)."""
        self._drawing = None
        self.dirty = True
        while self._draw():
            pass

    def _draw(self):
        """One part of the screen's redraw, a new one started if none is under way: False once
        it is on the screen. A part a pass of the loop, so that working out the rows (a game's,
        its referee's warnings, the service view's every line) is never one long step on the
        chip (docs/simulator.md). A redraw under way is finished before the next begins,
        whatever changes meanwhile (the next shows that): a table that keeps changing still
        sees its screen drawn."""
        if self._drawing is None:
            self.dirty = False
            self._drawing = self._redraw()
        try:
            next(self._drawing)
            return True
        except StopIteration:
            self._drawing = None
            return False
        except MemoryError:
            # No room for this redraw's rows now (a heap in pieces): the screen keeps what it
            # shows and the next pass tries again; the loop plays on.
            self._drawing = None
            self.dirty = True
            return False
        except Exception as e:
            # A screen's code that fails (a bug) must not stop the board: it goes on scoring,
            # and says why its screen is not redrawn.
            self._drawing = None
            msg = "screen: %s: %s" % (type(e).__name__, e)
            if self.error != msg:
                self.error = msg
                self.emit("warn", {"warning": msg})
            return False

    def _redraw(self):
        """The redraw's parts (a generator: each `yield` ends one)."""
        if self.service:
            for _ in self._service_parts():
                yield
            return
        referee = self.referee
        whole = referee.screen()  # e.g. the foul list, taking the whole screen for now
        if whole is not None:
            yield
            self.display.show([r[:16] for r in whole[:8]])
            return
        # What the rows are made of, taken at the start: a scorepad may switch games before
        # the last part (its state and its screen's rows must be the same game's).
        game = self.game
        part = self.screen_part
        players = list((self.header or {}).get("players", ()))
        state = game.state()
        view = game.view() if hasattr(game, "view") else None
        status = referee.status() or self.last
        yield
        warnings = self.warnings()  # (a peg board's: every bed compared)
        yield
        rows = getattr(part, "rows", generic_rows)(state, view, players)
        yield
        self.display.show(compose(rows, status, warnings))

    def _service_parts(self):
        """The service view's parts (service.py), loaded while it is shown."""
        try:
            from .service import parts
        except MemoryError:  # (loaded when the view is on: the heap may have no room now)
            self.display.show(list(_NO_SERVICE))
            return
        for _ in parts(self):
            yield

    def service_rows(self):
        """Service view: every switch line's level and edge count (bring-up, bad switches)."""
        try:
            from .service import rows
        except MemoryError:  # (loaded when the view is on: the heap may have no room now)
            return list(_NO_SERVICE)
        return rows(self)

    # -- what the host asks ------------------------------------------------------------------
    def hello(self):
        j = self.journal
        out = {"firmware": FIRMWARE_VERSION, "game": self.game_id, "board": self.cfg["board"],
               "config": self.game.config if self.game is not None else None,
               "device": self.board.device_id,
               "test_mode": self.test_mode, "last_seq": j.last_seq(), "game_no": j.game_no()}
        from .boardkey import kid

        kid = kid(self)
        if kid is not None:
            out["kid"] = kid  # the name of the board's own key (chalk keys enrol)
        if self.keys is not None:
            out["games"] = self.keypad_games  # a scorepad plays any of these (new)
        return out

    def lines_now(self):
        """Every input's level now, and its edges (the service view's and record's reply)."""
        from .service import lines_now

        return lines_now(self)

    def set_clock(self, epoch_ms):
        self.wall = (epoch_ms, self.clock.ticks_ms())

    def iso_now(self):
        epoch_ms, ticks = self.wall
        secs = (epoch_ms + self.clock.ticks_diff(self.clock.ticks_ms(), ticks)) // 1000
        # MicroPython's epoch is 2000 on some ports, 1970 on others.
        y = time.gmtime(0)[0]
        if y == 2000:
            secs -= 946684800
        tm = time.gmtime(secs)
        return "%04d-%02d-%02dT%02d:%02d:%02dZ" % tm[:6]

    def status(self, spare=True):
        out = {}
        for _ in self.status_parts(out, spare):
            pass
        return out

    def status_parts(self, out, spare=True):
        """status() into `out` a part at a time (a generator: each `yield` ends a part), for a
        reply made between scans (serve.py's `state`)."""
        j = self.journal
        game = self.game
        # The latest action and the state before it taken with the state: an action the table
        # takes between two parts shows in the next reply, not in half of this one.
        rec = self._last_rec
        before = self._last_s
        undid = self._last_undid
        rules = self._last_rules
        out["last"] = self.last
        out["state"] = game.state()
        out["game"] = self.game_id
        out["game_no"] = j.game_no()
        out["last_seq"] = j.last_seq()
        out["players"] = (self.header or {}).get("players", [])
        out["outcome"] = game.outcome()
        yield
        out["warnings"] = self.warnings()
        yield
        out["note"] = self.referee.status()
        out["screen"] = self.display.rows
        out["mode"] = "service" if self.service else "scoring"
        out["record"] = self.recorder is not None
        out["mem_free"] = self.heap[0]
        out["mem_block"] = self.heap[1]
        out["gap_ms"] = self.gap_ms
        out["step_ms"] = self.step_ms
        out["lost"] = self._s_lost
        # The latest action (as journaled), the state before it and, for an undo, the action
        # it took back (only then); the game's config. A reply that does not fit goes without
        # them (link.py _SPARE), and so does one the heap has no room for now (spare False).
        if not spare:
            return
        yield
        out["rec"] = rec
        if rec is not None:
            out["before"] = game.export(before)
            if undid is not None:
                out["undid"] = rules.decode(undid)
        out["config"] = game.config


class _Peaks:
    """The highest colour reading of each pocket the sampling timer saw since the sensing layer
    last asked: read(i) gives it (-1: none) and starts afresh. Allocates nothing."""

    def __init__(self, n):
        self._v = array("i", [-1] * n)

    def note(self, i, v):
        if v > self._v[i]:
            self._v[i] = v

    def read(self, i):
        v = self._v[i]
        self._v[i] = -1
        return v


def _nowhere(kind, payload):
    pass


def _fits(typ, payload):
    """True if `payload` makes a frame of `typ` (the link's limit, docs/serial-protocol.md)."""
    from .frames import encode

    try:
        encode(999999999, typ, payload)
    except ValueError:  # FrameTooLong, or a value no frame carries
        return False
    return True
