# Checkpoint files: the blocks of a long game's action codes kept on flash instead of RAM.
#
# The rules keep a game's actions as codes in blocks of 128, each with a checkpoint (the state
# before its first action: rules/base.py, Codes). On the board only the newest blocks stay in
# RAM; the others live in the game's checkpoint file beside its journal, g<no>.ckp, one slot per
# block: the block's ints as stored in RAM (little-endian int32) and a CRC-32 of them seeded
# with the block's number. So a game's heap does not grow with its length: a 10,000-action game
# needs what a 300-action one does, and an undo back past the blocks in RAM reads one slot.
#
# The file is a cache of what the journal says, never the record: boot folds the journal again
# and checks every slot against the fold, rewriting only one that differs (a file from a board
# that lost power mid-write, or none at all), so flash is not rewritten at every boot. A slot
# that does not read back whole and unchanged is refused with a RuleError (an undo then says so
# on the screen); the next boot writes it again. The file goes when its game ends. A game gets
# its file (and this module is loaded) only once it is longer than the blocks RAM keeps: a
# short game costs neither.
#
# Runs unchanged on MicroPython (LittleFS) and CPython.

import binascii
import os

from .rules.base import Codes, RuleError

EXT = ".ckp"


class SpilledCodes(Codes):
    """Codes (rules/base.py) whose blocks beyond the newest RAM_BLOCKS live in a BlockStore:
    spill() writes the oldest of them out, one block a call (a board spills between its scans),
    and a block an undo needs again is read back. A game's RAM then does not grow with its
    length."""

    RAM_BLOCKS = 3

    def __init__(self, store, width=0, words=1):
        Codes.__init__(self, width, words)
        self.store = store
        self._dirty = []  # per block: True while RAM holds what the store does not
        self._spare = None  # the array of a spilled block, for the next block to reuse
        self._ram = 0  # blocks in RAM

    def _new(self):
        blk = self._spare
        if blk is None:
            return Codes._new(self)
        self._spare = None
        return blk

    def append(self, code, state=None):
        n = self._n
        K = self._BLOCK
        b = n // K
        i = n - b * K
        if b == len(self._blocks):
            self._blocks.append(None)
            self._marks.append(None)
            self._dirty.append(False)
        if self._blocks[b] is None:
            # A new block, or one the store has (undone back into): codes from i on are
            # written now, the ones before it are needed.
            if i:
                self.block(b)
            else:
                self._blocks[b] = self._new()
                self._ram += 1
        if i == 0 and self._w and state is not None:
            self._mark(b, state)
        self._put(self._blocks[b], i, code)
        self._dirty[b] = True
        self._n = n + 1

    def block(self, b):
        blk = self._blocks[b]
        if blk is not None:
            return blk
        victim = self._victim(b)
        if victim >= 0:
            try:
                self._evict(victim)
            except OSError:
                pass  # the store refused it (flash full): it stays, RAM holds one block more
        blk = self._new()
        try:
            self.store.load(b, blk)  # RuleError if the store cannot give it back
        except RuleError:
            self._spare = blk
            raise
        self._blocks[b] = blk
        self._dirty[b] = False
        self._ram += 1
        return blk

    def _victim(self, keep):
        """The oldest block in RAM that may leave it (never `keep` nor the newest two), or -1
        while no more than RAM_BLOCKS are in RAM."""
        if self._ram < self.RAM_BLOCKS:
            return -1
        last = (self._n - 1) // self._BLOCK if self._n else 0
        for b in range(last - 1):
            if self._blocks[b] is not None and b != keep:
                return b
        return -1

    def _evict(self, b):
        blk = self._blocks[b]
        if self._dirty[b]:
            self.store.save(b, blk)  # OSError (flash full): the block stays in RAM
            self._dirty[b] = False
        self._blocks[b] = None
        self._ram -= 1
        self._spare = blk

    def spill(self):
        b = self._victim(-1)
        if b < 0:
            return False
        self._evict(b)
        return True

    def pop(self):
        self._n -= 1
        while len(self._blocks) > self._n // self._BLOCK + 1:
            # One spare block is kept for the next action; free the rest.
            if self._blocks.pop() is not None:
                self._ram -= 1
            self._marks.pop()
            self._dirty.pop()


def attach(game, path):
    """Give a game a checkpoint file at `path` from now on (its blocks so far go there as
    spill() is called); returns the store. The checkpoint files of other games are removed."""
    clean(path.rsplit("/", 1)[0] if "/" in path else ".", _game_no(path))
    store = BlockStore(path)
    old = game._codes
    codes = SpilledCodes(store, old._w, old._words)
    codes._blocks = old._blocks
    codes._marks = old._marks
    codes._n = old._n
    codes._dirty = [True] * len(old._blocks)
    codes._ram = len(old._blocks)
    game.spill_to(codes)
    return store


def _game_no(path):
    name = path.rsplit("/", 1)[-1]
    return int(name[1:-len(EXT)]) if name[:1] == "g" and name[1:-len(EXT)].isdigit() else None


def path_for(root, game_no):
    return "%s/g%05d%s" % (root.rstrip("/") or "", game_no, EXT)


class BlockStore:
    """One game's checkpoint file. `verify` (at boot): a save first compares the slot with what
    is there and writes only if it differs."""

    def __init__(self, path):
        self.path = path
        self.verify = False
        self.writes = 0  # slots written (flash wear: a boot that finds them all right writes 0)
        self._crc = bytearray(4)
        self._scratch = None  # a block read back, to compare before writing (boot)

    def _slot(self, blk):
        return len(blk) * 4 + 4

    def save(self, b, blk):
        """Write block b (an array of 32-bit ints); OSError if the flash refuses."""
        crc = binascii.crc32(blk, b) & 0xFFFFFFFF
        c = self._crc
        c[0] = crc & 255
        c[1] = crc >> 8 & 255
        c[2] = crc >> 16 & 255
        c[3] = crc >> 24 & 255
        if self.verify and self._same(b, blk, c):
            return
        try:
            f = open(self.path, "r+b")
        except OSError:
            f = open(self.path, "wb")
        try:
            f.seek(b * self._slot(blk))
            f.write(blk)
            f.write(c)
        finally:
            f.close()
        self.writes += 1

    def _same(self, b, blk, crc):
        from array import array

        if self._scratch is None or len(self._scratch) != len(blk):
            self._scratch = array("i", bytes(len(blk) * 4))
        s = self._scratch
        try:
            with open(self.path, "rb") as f:
                f.seek(b * self._slot(blk))
                if f.readinto(s) != len(s) * 4 or f.read(4) != bytes(crc):
                    return False
        except OSError:
            return False
        return s == blk

    def load(self, b, blk):
        """Read block b into `blk`, or raise RuleError saying why it cannot."""
        why = None
        try:
            with open(self.path, "rb") as f:
                f.seek(b * self._slot(blk))
                got = f.readinto(blk)
                crc = f.read(4)
            if got != len(blk) * 4 or len(crc) != 4:
                why = "cut short"
            elif binascii.crc32(blk, b) & 0xFFFFFFFF != (crc[0] | crc[1] << 8 | crc[2] << 16
                                                         | crc[3] << 24):
                why = "damaged"
        except OSError as e:
            why = "unreadable (%s)" % e
        if why is not None:
            raise RuleError("LOG", "block %d of this game's actions in %s is %s: restart the "
                            "board, which writes it again from the journal" % (b, self.path, why))

    def remove(self):
        try:
            os.remove(self.path)
        except OSError:
            pass


def clean(root, keep=None):
    """Remove the checkpoint files of every game but `keep` (a game number, or None)."""
    try:
        names = os.listdir(root)
    except OSError:
        return
    for name in names:
        if name[:1] == "g" and name.endswith(EXT) and name[1:-len(EXT)].isdigit():
            if keep is None or int(name[1:-len(EXT)]) != keep:
                try:
                    os.remove(path_for(root, int(name[1:-len(EXT)])))
                except OSError:
                    pass
