"""The quick loop the README gives (``-m "not server and not slow"``) keeps what it must: every
files and sqlite run of the contract suite, and no run that needs a server, whether a test asks
for a server's fixture or takes a server backend as a parameter. Tests are collected, not run,
by pytest in a process of its own, as a developer's command line does."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conftest import REPO, SERVER_BACKENDS
from eidetic.stores.backends import NAMES

pytestmark = pytest.mark.slow  # collects tests in a pytest process

QUICK = "not server and not slow"
FILES = ("tests/test_contract.py", "tests/test_migrate.py", "tests/test_records_cli.py")


@pytest.fixture(scope="module")
def quick() -> list[str]:
    """The ids of the tests in ``FILES`` the quick loop selects."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-n",
            "0",
            "-p",
            "no:cacheprovider",
            "-m",
            QUICK,
            *FILES,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [line for line in proc.stdout.splitlines() if "::" in line]


def parameters(test_id: str) -> set[str]:
    """The words of a test id's parameters: ``test_x[files-sqlite]`` -> ``{"files", "sqlite"}``."""
    params = re.search(r"\[(.*)\]$", test_id)
    return set(params.group(1).split("-")) if params else set()


def test_the_contract_suite_runs_on_files_and_sqlite(quick):
    source = (REPO / "tests" / "test_contract.py").read_text(encoding="utf-8")
    contract = {f"tests/test_contract.py::{name}" for name in re.findall(r"^def (test_\w+)\(", source, re.MULTILINE)}
    on_backend = {i.split("[")[0] for i in quick if i.split("[")[0] in contract and "[" in i}
    assert contract and on_backend
    for test in on_backend:
        for backend in set(NAMES) - SERVER_BACKENDS:
            assert any(i.startswith(f"{test}[") and backend in parameters(i) for i in quick), (test, backend)
    assert not contract - {i.split("[")[0] for i in quick}, "every contract test is in the quick loop"


def test_no_server_run_is_in_the_quick_loop(quick):
    assert not [i for i in quick if parameters(i) & SERVER_BACKENDS]
    assert any(i.startswith("tests/test_migrate.py::") for i in quick)  # the files and sqlite pairs
    assert "tests/test_records_cli.py::test_show_names_the_server_without_its_password" not in quick  # by fixture


def test_the_readme_gives_the_quick_loop():
    assert f'-m "{QUICK}"' in (REPO / "README.md").read_text(encoding="utf-8")
