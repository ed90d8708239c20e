"""The table of backends (``stores/backends.py``) is the one list: what it names exists (the pip
extra in pyproject, the store opener, the tests' server fixture), and the CLI offers exactly it."""

from __future__ import annotations

import inspect
import tomllib
from dataclasses import fields
from importlib import import_module
from importlib.util import module_from_spec, spec_from_file_location
from pathlib import Path

import pytest

import conftest
from eidetic import Memory
from eidetic.errors import EideticError
from eidetic.settings import Settings
from eidetic.stores.backends import BACKENDS, LOCATED, NAMES, SERVERS

ROOT = Path(__file__).resolve().parent.parent


def test_each_row_names_what_exists():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for backend in BACKENDS.values():
        module, function = backend.opener.split(":")
        assert callable(getattr(import_module(module), function)), backend.opener
        assert backend.extra is None or backend.extra in extras, backend.extra
        assert backend.fixture is None or callable(getattr(conftest, backend.fixture, None)), backend.fixture
    assert set(SERVERS) == {name for name, backend in BACKENDS.items() if backend.fixture}  # a server is tested on one
    spec = spec_from_file_location("measure", ROOT / "benchmarks" / "measure.py")
    assert spec is not None and spec.loader is not None
    benchmarks = module_from_spec(spec)
    spec.loader.exec_module(benchmarks)
    assert {backend.fixture for backend in SERVERS.values()} <= set(benchmarks.START)  # and benchmarked on it
    assert NAMES[0] == "files"  # the default comes first wherever the names are listed


def test_the_cli_offers_the_table(cli):
    run = cli("recall", "x", "--backend", "mongo-ish", "--json")
    assert run.code == 1 and run.err_json["remediation"] == "available backends: " + ", ".join(NAMES)
    assert all(name in cli("recall", "--help").out for name in NAMES)


def test_memory_open_finds_each_store_from_its_row(env, monkeypatch):
    """Where ``Memory.open`` looks for a store is the row's: the keyword named as its flag, else
    its setting's variable, else its default; a server named by none of them is an error that
    says how to name one. No store is reached: opening connects to nothing yet."""
    keywords = inspect.signature(Memory.open).parameters
    variables = {spec.name: spec.metadata["env"] for spec in fields(Settings) if "env" in spec.metadata}
    rows = list(LOCATED.values())  # files: a plan of folders instead
    assert {row.name for row in rows} == set(NAMES[1:])
    for row in rows:
        assert row.option in keywords and row.setting in variables, row
        assert row.env == variables[row.setting], row  # the help and hints name the settings' own variable

        def place(raw: str, row=row) -> str | Path:
            return raw if row.name in SERVERS else Path(raw).expanduser()

        given, configured = f"~/{row.name}-given", f"~/{row.name}-configured"
        monkeypatch.setenv(variables[row.setting], configured)
        with Memory.open(backend=row.name, **{row.option: given}) as memory:
            assert memory.location == place(given) and memory.backend == row.name
        with Memory.open(backend=row.name) as memory:
            assert memory.location == place(configured)
        monkeypatch.delenv(variables[row.setting])
        if row.default is not None:
            with Memory.open(backend=row.name) as memory:
                assert memory.location == place(row.default) == env / "home" / Path(row.default).relative_to("~")
        else:
            with pytest.raises(EideticError, match="needs a server address") as raised:
                Memory.open(backend=row.name)
            assert raised.value.remediation == row.server_hint
