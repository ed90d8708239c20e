"""The hook daemon's files are its user's alone: the lock, the start stamp and the log are mode
0600 like its socket, whatever the umask of the hook that started it (0o000 here, the widest),
and a file an older eidetic left wider is narrowed."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conftest import run_process

START = """
import os, sys
os.umask(0o000)
from eidetic.hooks import client, runtime
where = runtime.paths()
client.start_daemon(where, sys.argv[1])
print(where.socket)
"""


def test_the_daemons_files_are_0600_under_a_umask_of_0(store, env, monkeypatch):
    runtime = Path(tempfile.mkdtemp(prefix="eh-", dir="/tmp"))  # short: unix socket paths are limited
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")  # the daemon is ready in a moment
    try:
        from eidetic.hooks import runtime as daemon_runtime

        where = daemon_runtime.paths()
        assert where is not None
        Path(where.lock).touch()
        os.chmod(where.lock, 0o666)  # as an older eidetic under a wide umask left it
        started = subprocess.run(
            [sys.executable, "-c", START, str(env / "work")], capture_output=True, text=True, env=os.environ.copy()
        )
        assert started.returncode == 0 and started.stdout.strip() == where.socket, started.stderr
        sock = Path(where.socket)
        deadline = time.monotonic() + 90
        while not sock.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert sock.exists(), Path(where.log).read_text() if Path(where.log).exists() else "no log"
        for path in (where.socket, where.lock, where.started, where.log):
            mode = os.stat(path).st_mode
            assert stat.S_IMODE(mode) == 0o600, (path, oct(mode))
        assert stat.S_IMODE(os.stat(runtime / "eidetic").st_mode) == 0o700
        stopped = run_process("hooks", "stop", "--json")
        assert stopped.code == 0 and stopped.json["stopped"], stopped.err
    finally:
        run_process("hooks", "stop", "--json")
        shutil.rmtree(runtime, ignore_errors=True)
