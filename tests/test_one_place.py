"""One game, one place on the host (issue: a game is one module): no generic host module names a
game. Every game id of the registry (and its module name) is looked for in every source file of
host/chalk outside its games package, and in the bench scripts that play every game; a hit is a
game's code (or words, or a table of it) living outside its module."""

import re
from pathlib import Path

from chalk import games

ROOT = Path(__file__).resolve().parent.parent
HOST = ROOT / "host" / "chalk"

# Board config names (firmware/boards/<name>.json) that happen to be game ids, where a tool
# names the board it uses by default or in a message a test holds verbatim: not a game's code.
BOARD_CONFIG_NAMES = {
    "host/chalk/sim.py": ['board="five-pins"'],
    "host/chalk/commands/sim.py": ['default="five-pins"'],
    "host/chalk/deploy.py": ['--board five-pins "', '"(or shove-hapenny, or a .json path)"'],
    "host/chalk/archive.py": ["-- game id (five-pins, shove-hapenny)"],
}


def sources():
    for p in sorted(HOST.rglob("*")):
        if p.suffix in (".py", ".html", ".js", ".css") and "games" not in p.relative_to(
                HOST).parts[:1]:
            yield p
    yield ROOT / "bench" / "bench.py"
    yield ROOT / "bench" / "make_samples.py"


def test_no_generic_host_module_names_a_game():
    names = []
    for g in games.IDS:
        names += [g, g.replace("-", "_")]
    pattern = re.compile(r"(?<![\w-])(%s)(?![\w-])" % "|".join(map(re.escape, names)))
    found = []
    for p in sources():
        rel = str(p.relative_to(ROOT))
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            if not pattern.search(line):
                continue
            if any(ok in line for ok in BOARD_CONFIG_NAMES.get(rel, ())):
                continue
            found.append("%s:%d: %s" % (rel, n, line.strip()))
    assert not found, "game ids outside chalk/games:\n" + "\n".join(found)


def test_every_game_of_the_registry_has_its_module_and_the_same_id():
    for gid in games.IDS:
        g = games.get(gid)
        assert g.id == gid and type(g).__module__ == "chalk.games." + gid.replace("-", "_")
        assert g.name and g.sheet_name and g.random_config is not None and g.sample
    mods = {p.stem for p in (HOST / "games").glob("*.py")} - {"__init__", "common"}
    assert mods == {g.replace("-", "_") for g in games.IDS}


# -- the whole repository: board and host ------------------------------------------------------

REGISTRIES = ("firmware/scoreboard/games/__init__.py", "host/chalk/games/__init__.py")
SOURCE_SUFFIXES = (".py", ".html", ".js", ".css", ".toml", ".cfg", ".sh")
# Not source: the tests, the docs (docs/, the README, hardware/'s generated pin maps and
# diagrams), the samples and the board configs.
NOT_SOURCE = ("tests/", "docs/", "hardware/", "firmware/boards/", "host/chalk/samples/")
# Lines outside a game's own place that name a board config, not a game: the board a tool
# opens by default, the board a bench drives, the demo's boards. Kept short, each with why.
BOARD_CONFIGS_NAMED = {
    **BOARD_CONFIG_NAMES,  # host/: as above
    # The board a bench drives (firmware/boards/<name>.json), named once in a constant.
    "bench/bench_archive.py": ['NOISY_BOARD = "five-pins"'],
    "bench/bench_gaps.py": ['BOARD = "five-pins"'],
    "bench/bench_serve.py": ['BOARD = "five-pins"'],
    "bench/bench_sign.py": ['board = ROOT / "firmware" / "boards" / "five-pins.json"'],
    "bench/bench_league.py": ['Sim("five-pins", flash=tmp / "flash"',
                              'serve.new("window", "five-pins",'],
}


def repo_sources():
    """Every source file of the repository outside NOT_SOURCE (and the Makefile, .ci/run)."""
    for p in sorted(ROOT.rglob("*")):
        rel = p.relative_to(ROOT).as_posix()
        if not p.is_file() or rel.startswith(NOT_SOURCE) or "/." in "/" + rel \
                or "__pycache__" in rel or rel.startswith(("build/", "dist/")):
            continue
        if p.suffix in SOURCE_SUFFIXES or rel in ("Makefile", ".ci/run"):
            yield rel, p
    yield ".ci/run", ROOT / ".ci" / "run"


def own_places(game_id):
    mod = game_id.replace("-", "_")
    return ("firmware/scoreboard/games/%s/" % mod, "host/chalk/games/%s.py" % mod)


def naming(game_id):
    names = (game_id, game_id.replace("-", "_"))
    return re.compile(r"(?<![\w-])(%s)(?![\w-])" % "|".join(map(re.escape, names)))


def test_each_game_is_named_only_in_its_own_folder_its_host_module_and_the_registry():
    listing = {}  # game id -> {file: [line numbers]}
    misplaced = []
    for gid in games.IDS:
        pattern = naming(gid)
        files = listing.setdefault(gid, {})
        for rel, p in repo_sources():
            try:
                text = p.read_text(encoding="utf-8")
            except (UnicodeDecodeError, FileNotFoundError):
                continue
            for n, line in enumerate(text.splitlines(), 1):
                if not pattern.search(line):
                    continue
                files.setdefault(rel, []).append(n)
                if rel.startswith(own_places(gid)) or rel in REGISTRIES:
                    continue
                if any(ok in line for ok in BOARD_CONFIGS_NAMED.get(rel, ())):
                    continue
                misplaced.append("%s: %s:%d: %s" % (gid, rel, n, line.strip()))
    # Every game is in its places (and the registries name every game).
    for gid in games.IDS:
        board, host = own_places(gid)
        assert any(f.startswith(board) for f in listing[gid]), (gid, "no board folder")
        assert host in listing[gid] and all(r in listing[gid] for r in REGISTRIES), gid
    assert not misplaced, "a game named outside its own place and the registry:\n" + \
        "\n".join(misplaced)
