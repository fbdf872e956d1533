"""The host's modules import one another in one direction: no circle, counting the imports made
inside functions too (the archive once imported the link, the link the server and the server the
archive). The store (SQLite) knows nothing of the board; the follower knows the store and the
wire; reaching a running `chalk serve` sits above both."""

import ast
from pathlib import Path

HOST = Path(__file__).resolve().parent.parent / "host"


def _graph():
    mods = {}
    for p in HOST.rglob("*.py"):
        parts = p.relative_to(HOST).with_suffix("").parts
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    graph = {}
    for name, path in mods.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name in mods}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                if node.module in mods:
                    deps.add(node.module)
                deps |= {node.module + "." + a.name for a in node.names
                         if node.module + "." + a.name in mods}
        graph[name] = deps - {name}
    return graph


def _circles(graph):
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle_among_the_host_modules():
    assert _circles(_graph()) == []


def test_the_store_apart_from_the_follower_apart_from_the_wire():
    g = _graph()
    assert not g["chalk.store"] & {"chalk.follow", "chalk.link", "chalk.remote", "chalk.serve"}
    assert {"chalk.store", "chalk.link"} <= g["chalk.follow"]
    assert not g["chalk.follow"] & {"chalk.remote", "chalk.serve"}
    assert not g["chalk.link"] & {"chalk.store", "chalk.follow", "chalk.remote", "chalk.serve"}
    assert "chalk.remote" not in g["chalk.serve"] or "chalk.serve" not in g["chalk.remote"]
    assert not (HOST / "chalk" / "archive.py").exists()


def test_the_circle_is_found_when_there_is_one():
    # The check itself can fail: a made-up graph with the old circle.
    graph = {"chalk.archive": {"chalk.link"}, "chalk.link": {"chalk.serve"},
             "chalk.serve": {"chalk.archive"}, "chalk.views": set()}
    assert _circles(graph) == [["chalk.archive", "chalk.link", "chalk.serve"]]
