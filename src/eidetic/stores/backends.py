"""The storage backends, listed once: what each is called, how it opens, what it needs.

Every place that names the backends reads this table (``StoreSet``, ``Memory.open``, the CLI's
``--backend``, its flags and its completion, the tests' ``backend`` fixture, the benchmarks), so a
backend is added here and nowhere else. It imports nothing heavy: the CLI reads it before it knows which verb runs.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from ..progress import Progress
    from ..settings import Settings
    from ..usage import UsageState
    from .base import RecordStore

Opener = Callable[["str | Path", "UsageState", "Settings", "Progress"], "RecordStore"]


class Backend(NamedTuple):  # not a dataclass: that module and what it imports cost the CLI's start
    name: str
    flag: str  # the CLI flag naming where its store is: a folder, a database file, a server
    opener: str  # "module:function" opening one store at such a location (imported when used)
    setting: str | None = None  # the ``Settings`` field naming that place when no flag does (files: a plan)
    default: str | None = None  # where its store is when neither names it (``~`` is the home folder)
    extra: str | None = None  # the pip extra its driver comes in (``eidetic[postgres]``)
    fixture: str | None = None  # the tests' fixture that starts a real server for it
    env: str | None = None  # the environment variable of ``setting``
    place: str = ""  # what its flag names, in the CLI's help ("the database file")
    example: str | None = None  # a server's address as a user would write it (None: not a server)
    metavar: str | None = None  # how the CLI's help names the flag's value (None: its name)

    @property
    def help(self) -> str:
        """The help of its flag: what it names, where it is when no flag names it, an example."""
        unset = f"{self.env}, else {self.default}" if self.default else self.env
        return f"{self.name} backend: {self.place} (default: {unset})" + (
            f", e.g. {self.example}" if self.example else ""
        )

    @property
    def server_hint(self) -> str | None:
        """How a user names its server when none is set (None: it needs none)."""
        return f"set {self.env} or pass {self.flag}, e.g. {self.example}" if self.example else None

    @property
    def option(self) -> str:
        """The flag as a name: the parsed flag's attribute and ``Memory.open``'s keyword for it."""
        return self.flag.removeprefix("--").replace("-", "_")

    @property
    def install(self) -> str:
        """How a user installs what this backend needs beyond eidetic itself."""
        return f"pip install 'eidetic[{self.extra}]'" if self.extra else "pip install eidetic"

    def open(self, location: str | Path, usage: UsageState, settings: Settings, progress: Progress) -> RecordStore:
        """One store of this backend at ``location``; its module is imported only now."""
        module, function = self.opener.split(":")
        opener: Opener = getattr(import_module(module), function)
        return opener(location, usage, settings, progress)


BACKENDS: dict[str, Backend] = {
    backend.name: backend
    for backend in (
        Backend("files", "--memory-dir", "eidetic.stores.files.store:open_store"),
        Backend(
            "sqlite",
            "--db",
            "eidetic.stores.sqlite:open_store",
            "sqlite_path",
            default="~/.eidetic/memory.sqlite",
            env="EIDETIC_SQLITE_PATH",
            place="the database file",
            metavar="PATH",
        ),
        Backend(
            "postgres",
            "--dsn",
            "eidetic.stores.postgres.store:open_store",
            "pg_dsn",
            extra="postgres",
            fixture="postgres_dsn",
            env="EIDETIC_PG_DSN",
            place="the server",
            example="postgresql://eidetic@db.internal/eidetic",
        ),
        Backend(
            "neo4j",
            "--uri",
            "eidetic.stores.graph.store:open_store",
            "neo4j_uri",
            extra="neo4j",
            fixture="graph_server",
            env="EIDETIC_NEO4J_URI",
            place="the graph server",
            example="bolt://graph.internal:7687/eidetic",
        ),
    )
}
NAMES = tuple(BACKENDS)  # in the order people are shown them: files (the default) first
SERVERS = {name: backend for name, backend in BACKENDS.items() if backend.server_hint}
# the backends whose store one flag names (a file, a server); files has a plan of folders instead
LOCATED = {name: backend for name, backend in BACKENDS.items() if backend.setting is not None}
SPOKEN = f"{', '.join(NAMES[:-1])} or {NAMES[-1]}"  # "files, sqlite, postgres or neo4j"
