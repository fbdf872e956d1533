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
# on the screen); the next boot writes it again. The file goes when its game ends.
#
# Runs unchanged on MicroPython (LittleFS) and CPython.

import binascii
import os

from .rules.base import RuleError

EXT = ".ckp"


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
