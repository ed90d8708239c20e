"""The layers of docs/architecture.md hold: imports between eidetic's parts only go down, and
no two parts import each other, not even through others.

A part is a package (``memory``, ``ranking``...) or a module beside them (``records.py``);
``stores`` is two parts: its interface (``base``, ``types``, ``backends``), which the SQL layer
and the index may use, and the backends, which use them. Every import counts, lazy ones and
those made only for type checking included: each is an arrow a reader follows.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
STORES_INTERFACE = {"eidetic.stores", "eidetic.stores.base", "eidetic.stores.types", "eidetic.stores.backends"}

# Top to bottom, as docs/architecture.md draws them; a part may import only parts below its own layer
# or in it (within a layer, the cycle check below still holds).
LAYERS = [
    {"__main__", "eidetic", "cli", "mcp", "web", "hooks", "importers"},  # interfaces over Memory
    {"session", "workers"},  # a caller's scope rule and the threads its calls run on, shared by mcp/ and web/
    {"team"},  # a shared server's members: their tokens, and the log of who changed what
    {"memory"},  # the API
    {"stores"},  # the backends
    {"index"},  # the derived record database
    {"docsql"},  # the SQL both SQL engines share
    {"stores-interface"},  # RecordStore, its value types, the table of backends
    {"query", "listing", "audit", "lifecycle"},  # queries as values, and rules that read ranking
    {"ranking"},  # pure scoring and selection
    # the record model and what it rests on: pure modules, settings and support
    {
        "records",
        "record_intake",
        "frontmatter",
        "results",
        "clocks",
        "timewords",
        "timeutil",
        "worddiff",
        "credentials",
        "relevance_text",
        "settings",
        "config_files",
        "locations",
        "errors",
        "progress",
        "usage",
        "sqlite_db",
        "embed",
    },
]


def part(module: str) -> str:
    if module in STORES_INTERFACE:
        return "stores-interface"
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else "eidetic"


def modules() -> Iterator[tuple[str, Path]]:
    for path in sorted((SRC / "eidetic").rglob("*.py")):
        pieces = path.relative_to(SRC).with_suffix("").parts
        yield ".".join(pieces[:-1] if pieces[-1] == "__init__" else pieces), path


def existing(name: str) -> str | None:
    """The eidetic module ``name`` names, or the module it is an attribute of."""
    while name.startswith("eidetic"):
        base = SRC / name.replace(".", "/")
        if base.with_suffix(".py").exists() or (base / "__init__.py").exists():
            return name
        name = name.rpartition(".")[0]
    return None


def arrows() -> dict[tuple[str, str], str]:
    """(importing part, imported part) -> one import that makes the arrow, for the message."""
    found: dict[tuple[str, str], str] = {}
    for module, path in modules():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                origin = ".".join([*base, *([node.module] if node.module else [])])
                names = [origin, *(f"{origin}.{alias.name}" for alias in node.names)]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                target = existing(name)
                if target and target != "eidetic" and part(target) != part(module):
                    found.setdefault((part(module), part(target)), f"{module} imports {target}")
    return found


def test_every_part_has_a_layer():
    parts = {part(module) for module, _ in modules()}
    placed = set().union(*LAYERS)
    assert parts <= placed, f"add to a layer: {sorted(parts - placed)}"
    assert placed <= parts, f"no longer in src/eidetic: {sorted(placed - parts)}"


def test_imports_only_go_down():
    layer = {name: depth for depth, names in enumerate(LAYERS) for name in names}
    upward = [why for (a, b), why in arrows().items() if layer[b] < layer[a]]
    assert not upward, upward


def test_no_two_parts_import_each_other():
    graph: dict[str, set[str]] = {}
    for a, b in arrows():
        graph.setdefault(a, set()).add(b)

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            here = todo.pop()
            if here == goal:
                return True
            if here not in seen:
                seen.add(here)
                todo.extend(graph.get(here, ()))
        return False

    circles = sorted(why for (a, b), why in arrows().items() if reaches(b, a))
    assert not circles, circles
