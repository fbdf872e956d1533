"""Files Chalk writes are whole or absent: after a full disk, Ctrl-C or a kill, the target is
either as it was or the complete new file, never half of it, and nothing else is left beside it.

A file is written to a hidden temporary name beside it (removed by any failure, and by the
next write of that file after a kill -9, which runs no clean-up), flushed to the disk, then
renamed over the target. A directory of files (`chalk export --all`)
is built in a hidden directory beside its target and renamed into place, or, when the target
already exists, its files are renamed in one by one once every one of them is written.
"""

import contextlib
import errno
import os
import shutil
import tempfile
from pathlib import Path

from chalk.errors import ChalkError

_TMP = ".chalk-tmp"


def problem(path, e):
    """The one-line ChalkError for an OSError writing `path`."""
    if getattr(e, "errno", None) in (errno.ENOSPC, errno.EDQUOT):
        return ChalkError("cannot write %s: the disk is full" % path,
                          "free some space (or write elsewhere) and run the command again: "
                          "nothing was half-written")
    if getattr(e, "errno", None) in (errno.EACCES, errno.EPERM, errno.EROFS):
        return ChalkError("cannot write %s: %s" % (path, e.strerror or e),
                          "check the permissions of the file and its directory")
    return ChalkError("cannot write %s: %s" % (path, getattr(e, "strerror", None) or e))


def write_file(path, data, mode=0o644):
    """Write `data` (str: UTF-8, or bytes) to `path`, whole or not at all. ChalkError (one
    line) if it cannot be written; KeyboardInterrupt and the like leave the target as it was."""
    path = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    directory = str(path.parent) or "."
    _sweep(path)
    tmp = None
    fd = None
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", suffix=_TMP, dir=directory)
        os.chmod(tmp, mode)
        view = memoryview(raw)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.fsync(fd)
        os.close(fd)
        fd = None
        os.replace(tmp, path)
        tmp = None
    except OSError as e:
        raise problem(path, e) from None
    finally:
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    return path


def _sweep(path):
    """Remove what a killed writer of `path` left (kill -9 runs no clean-up of its own)."""
    with contextlib.suppress(OSError):
        for p in path.parent.glob("." + glob_escape(path.name) + ".*" + _TMP):
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink()


def glob_escape(name):
    import glob

    return glob.escape(name)


@contextlib.contextmanager
def build_dir(target):
    """Yield a hidden directory beside `target` to write files into; when the block ends well,
    they take their place in `target` (made if missing). On any failure `target` is left as it
    was and the hidden directory removed."""
    target = Path(target)
    parent = target.parent
    _sweep(target)
    try:
        parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix="." + target.name + ".", suffix=_TMP,
                                      dir=str(parent)))
    except OSError as e:
        raise problem(target, e) from None
    try:
        yield stage
        try:
            if not target.exists():
                stage.rename(target)  # the whole directory at once
                stage = None
            else:
                for f in sorted(stage.iterdir()):
                    os.replace(f, target / f.name)  # each whole: a rename, no copy
        except OSError as e:
            raise problem(target, e) from None
    finally:
        if stage is not None:
            shutil.rmtree(stage, ignore_errors=True)
