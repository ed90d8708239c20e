"""The predecessor, eidetic-cli, in its own Python 3.12 virtual environment: installing it,
finding its console script, and the isolated, offline environment its processes run in."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

PACKAGE = "eidetic-cli"
VERSION = "0.14.1"
PYTHON312 = "/root/.pyenv/versions/3.12.1/bin/python3.12"
# Offline, as most users run it: nothing listens on the discard port, so every embedding
# request fails at once and eidetic-cli silently falls back to its 128-d hash embedding.
UNREACHABLE_EMBED_URL = "http://127.0.0.1:9/v1"


def python_for_venv() -> str:
    for candidate in (os.environ.get("EIDETIC_CLI_PYTHON"), PYTHON312, shutil.which("python3.12")):
        if candidate and Path(candidate).exists():
            return candidate
    raise SystemExit("eidetic-cli needs Python 3.12: set EIDETIC_CLI_PYTHON to a python3.12")


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def installed_version(venv: Path) -> str | None:
    if not venv_python(venv).exists():
        return None
    proc = subprocess.run(
        [str(venv_python(venv)), "-c", f"import importlib.metadata as m; print(m.version({PACKAGE!r}))"],
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.stdout.strip() if proc.returncode == 0 else None


def ensure_installed(venv: Path) -> None:
    """Create ``venv`` with Python 3.12 and pip-install eidetic-cli there, unless it already has
    the pinned version; then byte-compile its site-packages (this machine sets
    PYTHONDONTWRITEBYTECODE, so without this every process would recompile its sources)."""
    if installed_version(venv) != VERSION:
        if not venv_python(venv).exists():
            print(f"creating {venv} with {python_for_venv()} ...", flush=True)
            subprocess.run([python_for_venv(), "-m", "venv", str(venv)], check=True)
        print(f"pip install {PACKAGE}=={VERSION} ...", flush=True)
        subprocess.run(
            [
                str(venv_python(venv)),
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                f"{PACKAGE}=={VERSION}",
            ],
            check=True,
        )
        if installed_version(venv) != VERSION:
            raise SystemExit(f"{PACKAGE}=={VERSION} did not install into {venv}")
    subprocess.run(
        [str(venv_python(venv)), "-m", "compileall", "-q", "-j", "0", site_packages(venv)],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def site_packages(venv: Path) -> str:
    return subprocess.run(
        [str(venv_python(venv)), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def console_script(venv: Path) -> tuple[str, Path]:
    """(name, path) of eidetic-cli's console script, read from its installed entry points.
    (It is called ``eidetic``, the same name as ours: always run it by its full path.)"""
    proc = subprocess.run(
        [
            str(venv_python(venv)),
            "-c",
            (
                "import importlib.metadata as m, json; "
                f"print(json.dumps([[e.name, e.value] for e in m.distribution({PACKAGE!r}).entry_points "
                "if e.group == 'console_scripts']))"
            ),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    scripts = json.loads(proc.stdout)
    # the CLI entry point (eidetic.cli:main), not data-refinery's or any other dependency's
    chosen = next((name for name, value in scripts if value.startswith("eidetic.cli")), None)
    if chosen is None:
        raise SystemExit(f"no eidetic.cli console script among {scripts}")
    path = venv / "bin" / chosen
    if not path.exists():
        raise SystemExit(f"{path} is missing")
    return chosen, path


def cli_env(work: Path) -> dict:
    """A fresh, isolated store and HOME for eidetic-cli, its embedder unreachable (hash fallback)
    with a short timeout, no borrowed API keys, and bytecode allowed."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("EIDETIC_", "DR_", "NEO4J_")) and not k.endswith("_API_KEY")
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    home = work / "home"
    env.update(
        {
            "HOME": str(home),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_STATE_HOME": str(home / ".state"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "EIDETIC_DATA_DIR": str(work / "store"),
            "EIDETIC_EMBED_URL": UNREACHABLE_EMBED_URL,
            "EIDETIC_EMBED_TIMEOUT": "1",
            "EIDETIC_STORE_PROBE_TIMEOUT_MS": "100",
        }
    )
    home.mkdir(parents=True, exist_ok=True)
    return env
