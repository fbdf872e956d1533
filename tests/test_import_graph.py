"""No import circles in firmware/ or host/ (design: the flow stays one way). Every module's
imports are read from its source (at module level and inside functions alike: a circle broken
only by importing late is still a circle), resolved to the modules of firmware/scoreboard and
host/chalk, and the graph's strongly connected components are looked for. The registry's
`__import__` of a game's part (scoreboard/games/__init__.py part()) is by name, at run time, on
purpose: the generic code knows games only through it, so it is not an edge here."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREES = {"scoreboard": ROOT / "firmware" / "scoreboard", "chalk": ROOT / "host" / "chalk"}



def modules():
    """{module name: path} of every Python module under the trees."""
    out = {}
    for top, base in TREES.items():
        for p in sorted(base.rglob("*.py")):
            parts = (top,) + p.relative_to(base).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = p
    return out


def imports(name, path, known):
    """The modules of `known` that module `name` imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()

    def add(mod):
        # The most specific module of `known` that mod is, or lies in.
        while mod and mod not in known:
            mod = mod.rpartition(".")[0]
        if mod and mod != name:
            found.add(mod)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                add(a.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for a in node.names:
                sub = mod + "." + a.name
                add(sub if sub in known else mod)
    return found


def graph():
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def circles(g):
    """The strongly connected components of more than one module, or a module importing
    itself (Tarjan's algorithm, iterative), each as a sorted tuple."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1 or v in g[v]:
                        out.append(tuple(sorted(comp)))
    return sorted(out)


def test_the_finder_finds_a_circle_and_none_where_there_is_none():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [("a", "b", "c")]
    assert circles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    assert circles({"a": {"b", "c"}, "b": {"a"}, "c": {"d"}, "d": {"c"}}) == [("a", "b"),
                                                                             ("c", "d")]


def test_imports_are_resolved_to_the_modules_of_the_trees():
    g = graph()
    # Relative, absolute, `from package import module` and function-level imports all count.
    assert "scoreboard.canonjson" in g["scoreboard.frames"]
    assert "scoreboard.boardconfig.common" in g["scoreboard.boardconfig.pins"]
    assert "scoreboard.games" in g["scoreboard.boardconfig.common"]
    assert "scoreboard.referee.pintable" in g["scoreboard.games.five_pins.referee"]
    assert "scoreboard.games" in g["chalk.sim"] and "chalk.games" in g["chalk.sheet"]
    assert len(g) > 100 and all(not m.startswith(("os", "sys", "json")) for d in g.values()
                                for m in d)


def test_no_import_circle_in_the_firmware_or_the_host():
    found = circles(graph())
    assert not found, "import circles:\n" + "\n".join(" -> ".join(c) for c in found)
