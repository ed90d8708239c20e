"""Where things live: record stores, the derived index, the per-user usage state.

Store resolution (docs/guide.md, "Where records live"). Public records written inside a git work tree go to
``<repo>/.eidetic/memory`` (meant to be committed); private records, and everything outside a
repository, go to ``$HOME/.eidetic/memory``. ``EIDETIC_DATA_DIR`` (``Settings.data_dir``)
replaces both with one directory and ``--memory-dir`` names stores for one command. Nothing here
creates a directory: reads must never leave a trace.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .records import Scope


def home_store() -> Path:
    return Path.home() / ".eidetic" / "memory"


def repo_root(start: Path | None = None) -> Path | None:
    """The top of the git work tree containing ``start`` (default: cwd), or None.

    Walks up looking for ``.git`` (a directory, or a file in worktrees and submodules) instead
    of running ``git``: no subprocess on the recall path.
    """
    try:
        here = (start or Path.cwd()).resolve()
    except OSError:
        return None
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None


def repo_store(start: Path | None = None) -> Path | None:
    root = repo_root(start)
    return root / ".eidetic" / "memory" if root else None


@dataclass(frozen=True)
class StorePlan:
    """The stores one command reads (in precedence order) and how it picks a write target."""

    read: tuple[Path, ...]
    explicit: bool  # --memory-dir or EIDETIC_DATA_DIR: one place for every record
    home: Path
    repo: Path | None

    def write_target(self, scope: Scope) -> Path:
        if self.explicit:
            return self.read[0]
        if scope.visibility == "public" and self.repo is not None:
            return self.repo
        return self.home


def plan_stores(
    memory_dirs: Sequence[str | Path] | None = None, cwd: Path | None = None, data_dir: Path | None = None
) -> StorePlan:
    """The stores of one command: ``memory_dirs`` if given, else ``data_dir`` (one folder for
    everything), else the home store and the repository's."""
    home = home_store()
    if memory_dirs:
        dirs = tuple(dict.fromkeys(Path(d).expanduser().absolute() for d in memory_dirs))
        return StorePlan(dirs, True, home, None)
    if data_dir is not None:
        return StorePlan((data_dir.absolute(),), True, home, None)
    repo = repo_store(cwd)
    if repo is not None and _same(repo, home):
        repo = None
    read = (home,) if repo is None else (home, repo)
    return StorePlan(read, False, home, repo)


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return a == b


def store_key(store: Path) -> str:
    """A stable identity for a store folder: its resolved absolute path."""
    try:
        return str(store.resolve())
    except OSError:
        return str(store.absolute())


def index_path_for(store: Path, cache: Path) -> Path:
    """The derived index of a store folder, in the ``cache`` folder."""
    digest = hashlib.sha256(store_key(store).encode("utf-8")).hexdigest()[:16]
    safe = "".join(ch if ch.isalnum() else "-" for ch in store.parent.name)[:40] or "store"
    return cache / "index" / f"{safe}-{digest}.sqlite"


def culture_nick(start: Path | None = None) -> str | None:
    """The agent nick from the nearest ``culture.yaml`` walking up from cwd, else None."""
    try:
        here = (start or Path.cwd()).resolve()
    except OSError:
        return None
    for folder in (here, *here.parents):
        candidate = folder / "culture.yaml"
        if candidate.is_file():
            return _nick_from(candidate)
    return None


def _nick_from(path: Path) -> str | None:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError, UnicodeDecodeError):
        return None
    if isinstance(data, dict):
        agents = data.get("agents")
        if isinstance(agents, list) and agents and isinstance(agents[0], dict):
            data = agents[0]
        for key in ("suffix", "nick"):
            value = data.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
    return None
