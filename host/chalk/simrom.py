# Run by MicroPython on the simulated board, before main.py: a ROMFS partition, as an ESP32
# firmware built with one has (vfs.rom_ioctl; `mpremote romfs deploy` writes it, and the board
# mounts it at /rom at start-up, /rom/lib first on sys.path).
#
#     micropython -i simrom.py SIZE [main.py BOARD.json FLASH_DIR [...]]
#
# The partition is the file romfs.img in the flash directory, SIZE bytes at most. A board reads
# ROMFS in place from memory-mapped flash; here the image is read into the heap first, so on the
# simulated board the heap figures include the image (bench subtracts it).

import sys

import vfs as _vfs

_IMG = "romfs.img"
_BLOCK = 4096
_HEADER = b"\xd2\xcd\x31"


class _Partition:
    """The block device mpremote writes a ROMFS image through (the ioctl protocol)."""

    def __init__(self, size):
        self.size = size

    def ioctl(self, op, arg):
        if op == 4:
            return self.size // _BLOCK  # block count
        if op == 5:
            return _BLOCK  # block size
        if op == 6:  # erase a block: the file grows to cover it
            with open(_IMG, "ab") as f:
                f.seek(0, 2)
                end = f.tell()
                want = (arg + 1) * _BLOCK
                if end < want:
                    f.write(b"\xff" * (want - end))
            return 0
        return 0

    def writeblocks(self, block, buf, offset=0):
        with open(_IMG, "r+b") as f:
            f.seek(block * _BLOCK + offset)
            f.write(buf)


class _Vfs:
    """vfs with rom_ioctl added (a builtin module cannot take new attributes)."""


def _install(size):
    shim = _Vfs()
    for k in dir(_vfs):
        if not k.startswith("__"):
            setattr(shim, k, getattr(_vfs, k))
    part = _Partition(size)

    def rom_ioctl(op, *args):
        if op == 1:
            return 1  # one ROMFS partition
        if op == 2:
            return part if args[0] == 0 else -19  # ENODEV
        return -22  # EINVAL: the object path (ioctl/writeblocks) is used instead

    shim.rom_ioctl = rom_ioctl
    sys.modules["vfs"] = shim


def _mount():
    try:
        with open(_IMG, "rb") as f:
            img = f.read()
    except OSError:
        return
    if img[:3] != _HEADER:
        return
    _vfs.mount(_vfs.VfsRom(img), "/rom")
    sys.path.insert(0, "/rom/lib")


_size = int(sys.argv[1])
del sys.argv[:2]  # main.py sees its own arguments
_install(_size)
_mount()
if sys.argv:  # no main.py: a board with MicroPython and no app yet, at the REPL
    with open(sys.argv[0]) as _f:
        _code = _f.read()
    exec(_code, {"__name__": "__main__"})
