"""A real ``eidetic serve`` process for the tests that talk to it as its users do (MCP clients
over HTTP, a browser): a store seeded through the CLI, the server started on a free port and
ready once it prints its ``eidetic serves`` line, and its whole stderr kept for the checks."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

READY = "MCP (streamable HTTP): "  # the second start-up line: the first says where, and the token


def store_env(root: Path, **extra: str) -> dict[str, str]:
    """An environment of its own under ``root`` (home, cache, state, a files store), no
    embedding model (speed; the keyword and exact modes need none), no inherited settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EIDETIC_", "XDG_"))}
    env.update(
        HOME=str(root / "home"),
        XDG_CONFIG_HOME=str(root / "home" / ".config"),
        EIDETIC_CACHE_DIR=str(root / "cache"),
        EIDETIC_STATE_DIR=str(root / "state"),
        EIDETIC_DATA_DIR=str(root / "store"),
        EIDETIC_EMBEDDER="none",
    )
    env.update(extra)
    (root / "home").mkdir(parents=True, exist_ok=True)
    return env


def seed(env: dict[str, str], records: list[dict]) -> None:
    """Remember ``records`` (NDJSON on stdin, each naming its scope) as a user would."""
    proc = subprocess.run(
        [sys.executable, "-m", "eidetic", "remember"],
        input="".join(json.dumps(r) + "\n" for r in records),
        text=True,
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr


@dataclass
class Served:
    """One running server: where to reach it, its token, and every line it wrote to stderr."""

    proc: subprocess.Popen
    base: str = ""  # http://127.0.0.1:PORT, whatever address it listens on
    token: str | None = None
    lines: list[str] = field(default_factory=list)
    ready: threading.Event = field(default_factory=threading.Event)
    reader: threading.Thread | None = None

    @property
    def stderr(self) -> str:
        return "".join(self.lines)

    @property
    def cookies(self) -> dict[str, str]:
        """What a browser holds after opening the start-up URL (the cookie is named by port)."""
        from eidetic.web.guard import cookie_name

        assert self.token is not None
        return {cookie_name(int(self.base.rsplit(":", 1)[1])): self.token}

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)
            if line.startswith(READY):
                self.ready.set()
        self.ready.set()  # ended: whoever waits sees it did not start

    def stop(self) -> str:
        """Ctrl-C, as a person stops it; returns its whole stderr."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.reader is not None:
            self.reader.join(timeout=10)
        return self.stderr


def serve(env: dict[str, str], *args: str, timeout: float = 60) -> Served:
    """``eidetic serve ARGS`` on a free port, returned once it says where it serves."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "eidetic", "serve", "--port", "0", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    served = Served(proc)
    served.reader = threading.Thread(target=served._read, daemon=True)
    served.reader.start()
    if not served.ready.wait(timeout) or len(served.lines) < 2 or not served.lines[1].startswith(READY):
        served.stop()
        raise AssertionError(f"eidetic serve did not start:\n{served.stderr}")
    found = re.search(r" at http://(\S+?):(\d+)/(\?token=(\S+))?$", served.lines[0].rstrip("\n"))
    assert found, served.lines[0]
    served.base = f"http://127.0.0.1:{found.group(2)}"
    if "Authorization: Bearer" in served.lines[1]:  # printed in the URL when made, else the one given
        served.token = found.group(4) or env.get("EIDETIC_SERVE_TOKEN")  # None: members bring their own
    return served
