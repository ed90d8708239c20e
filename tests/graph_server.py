"""A throwaway graph server that speaks Bolt, for tests and benchmarks.

``arcadedb-embedded`` ships the ArcadeDB server with its own Java runtime and its Neo4j Bolt
protocol plugin. It is started here as a process of its own (the bundled ``java``, not the
package's in-process JVM, so the test process stays small and the server can be stopped, or
killed, like a real one), with a root password, its files in a fresh temporary folder, and
every listener on loopback ports found free. Databases are made through its HTTP API: that is
specific to ArcadeDB (Neo4j makes them with ``CREATE DATABASE``), and it lives only here.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

PASSWORD = "eidetic-test-root"  # noqa: S105 (a throwaway server on loopback)
START_TIMEOUT = 120.0


def available() -> bool:
    """Whether the server's package is installed (the test extras install it)."""
    return importlib.util.find_spec("arcadedb_embedded") is not None


def _package() -> Path:
    spec = importlib.util.find_spec("arcadedb_embedded")
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations)))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class GraphServer:
    """One running server: ``uri`` without a database; :meth:`database` makes one."""

    process: subprocess.Popen
    root: Path
    bolt_port: int
    http_port: int
    user: str = "root"
    password: str = PASSWORD
    made: set[str] = field(default_factory=set)

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"

    def database(self, name: str) -> str:
        """An empty database ``name``; returns its URI. Made once per session (that takes the
        server ~2 s); asked for again, it is emptied instead (its constraints stay: eidetic
        creates them idempotently anyway)."""
        if name in self.made:
            import neo4j

            with neo4j.GraphDatabase.driver(self.uri, auth=(self.user, self.password)) as driver:
                driver.execute_query("MATCH (n) DETACH DELETE n", database_=name)
        else:
            self._command(f"create database {name}")
            self.made.add(name)
        return f"{self.uri}/{name}"

    def _command(self, command: str) -> None:
        response = httpx.post(
            f"http://127.0.0.1:{self.http_port}/api/v1/server",
            json={"command": command},
            auth=(self.user, self.password),
            timeout=60,
        )
        if response.status_code != 200:
            raise RuntimeError(f"{command}: {response.status_code} {response.text[:300]}")

    def stop(self) -> None:
        """Stop the server (a kill after 20 s) and delete its files."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.root, ignore_errors=True)


def start_graph_server(heap: str = "1g", where: str | None = None) -> GraphServer:
    """Start a server in a fresh temporary folder (made in ``where``, default the system's) and
    wait until Bolt answers."""
    package = _package()
    root = Path(tempfile.mkdtemp(prefix="eidetic-graph-", dir=where))
    bolt, http, https = free_port(), free_port(), free_port()
    settings = {
        "arcadedb.server.rootPath": root / "server",
        "arcadedb.server.rootPassword": PASSWORD,
        "arcadedb.server.mode": "development",
        "arcadedb.server.plugins": "Bolt:com.arcadedb.bolt.BoltProtocolPlugin",
        "arcadedb.server.httpIncomingHost": "127.0.0.1",
        "arcadedb.server.httpIncomingPort": http,
        "arcadedb.server.httpsIncomingPort": https,
        "arcadedb.bolt.host": "127.0.0.1",
        "arcadedb.bolt.port": bolt,
    }
    command = [
        str(package / "jre" / "bin" / "java"),
        f"-Xmx{heap}",
        "-cp",
        os.path.join(package / "jars", "*"),
        *(f"-D{key}={value}" for key, value in settings.items()),
        "com.arcadedb.server.ArcadeDBServer",
    ]
    log = (root / "server.log").open("wb")
    process = subprocess.Popen(command, cwd=root, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    server = GraphServer(process, root, bolt, http)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            text = (root / "server.log").read_text(errors="replace")[-2000:]
            server.stop()
            raise RuntimeError(f"the graph server exited at start:\n{text}")
        if "Server started" in (root / "server.log").read_text(errors="replace"):
            return server
        time.sleep(0.2)
    server.stop()
    raise RuntimeError("the graph server did not start in time")


class Proxy:
    """A TCP forwarder to the server on a port of its own: :meth:`cut` drops every connection
    and stops listening (the server seems gone), :meth:`resume` listens again on the same port."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = free_port()
        self._sockets: list[socket.socket] = []
        self._listener: socket.socket | None = None
        self.resume()

    def resume(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen()
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # cut
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            self._sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for end in (source, sink):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self) -> None:
        if self._listener is not None:
            try:
                self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() (close alone does not)
            except OSError:
                pass
            self._listener.close()
            self._listener = None
        for sock in self._sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        self._sockets = []
