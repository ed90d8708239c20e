"""The table of backends (``stores/backends.py``) is the one list: what it names exists (the pip
extra in pyproject, the store opener, the tests' server fixture), and the CLI offers exactly it."""

from __future__ import annotations

import tomllib
from importlib import import_module
from pathlib import Path

import conftest
from eidetic.stores.backends import BACKENDS, NAMES, SERVERS

ROOT = Path(__file__).resolve().parent.parent


def test_each_row_names_what_exists():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for backend in BACKENDS.values():
        module, function = backend.opener.split(":")
        assert callable(getattr(import_module(module), function)), backend.opener
        assert backend.extra is None or backend.extra in extras, backend.extra
        assert backend.fixture is None or callable(getattr(conftest, backend.fixture, None)), backend.fixture
    assert set(SERVERS) == {name for name, backend in BACKENDS.items() if backend.fixture}  # a server is tested on one
    assert NAMES[0] == "files"  # the default comes first wherever the names are listed


def test_the_cli_offers_the_table(cli):
    run = cli("recall", "x", "--backend", "mongo-ish", "--json")
    assert run.code == 1 and run.err_json["remediation"] == "available backends: " + ", ".join(NAMES)
    assert all(name in cli("recall", "--help").out for name in NAMES)
