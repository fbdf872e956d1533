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
