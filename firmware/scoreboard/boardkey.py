# The app's side of the board's own key (sign.py): what the boot, the hello and a game's end
# need, kept out of app.py (a board deployed from .py sources compiles app.py on a full heap)
# and loading the signer itself only when it is needed.

import gc

from .signkeys import nvs_get


def remembered(nvs):
    """(game number, seq, link) of the board's newest finished game as its NVS keeps it
    ("last", written by sign.Signer.ended), or None."""
    b = nvs_get(nvs, "last", 40)
    if b is None or len(b) != 40:
        return None
    return int.from_bytes(b[0:4], "big"), int.from_bytes(b[4:8], "big"), b[8:40]


def boot(app):
    """Before the journal boots: the chain of games as NVS keeps it (past an erased journal),
    and the names of what the loop loads later (names())."""
    nvs = app.board.nvs
    if nvs is not None:
        app.journal.remembered = remembered(nvs)
        names()


def names():
    """Load what the loop loads later (the gauge and the packer, kept: every board uses them;
    checkpoints, spill.py, and the signer, sign.py with signwork.py and p256.py, dropped at
    once): at boot, before the journal is folded. MicroPython keeps the names of every module
    it loaded (its qstr pool) for good, and the pool grows by one block of 9-14 KB: taken now,
    while the heap is in one piece, that block is found; taken first at a game's end, on a
    heap a long game left in pieces, it may not be, and the signer would not load."""
    import sys

    if "scoreboard.sign" in sys.modules:
        return
    gc.collect()
    try:
        from . import gauge, pack, signwork, spill  # noqa: F401 (signwork: sign, p256)
    except MemoryError:
        pass  # each is loaded again when there is work, and says so if it cannot
    pkg = sys.modules.get("scoreboard")
    for name in ("spill", "signwork", "p256", "sign"):
        sys.modules.pop("scoreboard." + name, None)
        if pkg is not None and hasattr(pkg, name):
            delattr(pkg, name)
    gc.collect()


def booted(app):
    """After: a board without a key has the main loop make one (serve.py), not the boot."""
    nvs = app.board.nvs
    app.keyless = nvs is not None and nvs_get(nvs, "sk", 32) is None


def signer(app):
    """The board's signer (sign.Signer), loaded when first needed, or None on a board with
    nowhere to keep a key (or, deployed from .py sources, no RAM to compile it)."""
    if app.signer is None and app.board.nvs is not None:
        import sys

        if "scoreboard.sign" not in sys.modules:
            gc.collect()  # loaded into a collected heap (see sign.Signer._work)
        try:
            from .sign import Signer

            app.signer = Signer(app)
        except MemoryError:  # play goes on, unsigned, and says so
            app.emit("warn", {"warning": "not enough RAM to load the signer: nothing is "
                                         "signed (deploy the .mpy bytecode)"})
    return app.signer


def kid(app):
    """The name of the board's own key, or None while it is being made."""
    if app.signer is not None:
        return app.signer.kid
    nvs = app.board.nvs
    k = nvs_get(nvs, "kid", 16) if nvs is not None else None
    if k is not None and len(k) == 16:
        return k.decode()
    if nvs is None or nvs_get(nvs, "pk", 64) is None:
        return None  # no key yet: the main loop makes it
    s = signer(app)  # its key named from its public half
    return s.kid if s is not None else None


def end_game(app, end):
    """Write the game's end record (App.new_game), send it, and have it signed between scans:
    the `sig` frame follows the end record."""
    if app.wall is not None:
        end["ended"] = app.iso_now()  # in the chain, as "started" is
    gc.collect()  # whole blocks for the end, its signature's job and the new header
    game_no = app.journal.game_no()
    seq = app.journal.end_game(end)
    app.emit("rec", {"seq": seq, "type": "E", "end": end})
    s = signer(app)
    if s is None:
        return
    try:
        s.ended(game_no, seq, app.journal.chain.link)
    except Exception as e:  # NVS failing, or the queue full: the host asks for it later
        app.emit("warn", {"warning": "signing the end of game %d: %s" % (game_no, e)})
