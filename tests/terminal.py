"""Run ``python -m eidetic`` with its stderr on a real pseudo-terminal (100 columns), as a
person at a terminal would see it, and its stdout in a file, as a pipe to another program."""

from __future__ import annotations

import fcntl
import os
import select
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

from conftest import Run


def run_in_terminal(*args: str, env: dict[str, str], cwd: Path | None = None, timeout: float = 120) -> Run:
    """The process's exit code, stdout, and what its terminal showed (``err``, raw bytes decoded)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "eidetic", *args],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=slave,
            env=env,
            cwd=cwd,
        )
        os.close(slave)
        shown = bytearray()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not select.select([master], [], [], deadline - time.monotonic())[0]:
                break
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the process closed the terminal
                break
            if not chunk:
                break
            shown += chunk
        os.close(master)
        if proc.poll() is None and time.monotonic() >= deadline:
            proc.kill()
        code = proc.wait(timeout=timeout)
        out.seek(0)
        return Run(code, out.read(), shown.decode("utf-8", "replace"))
