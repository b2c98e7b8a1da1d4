"""Database faults as clients see them: a lost database is a 503 with Retry-After, never a 500;
a value the database refuses is a 422; and the API answers again once the database is back."""
from __future__ import annotations

import socket
import threading

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import make_url

from agent.storage.rdb import RDBStorage
from app.core.config import Settings
from app.main import create_app


class CuttableProxy:
    """A TCP relay to PostgreSQL on a fixed local port that can be cut (every connection
    dropped, new ones refused) and resumed, as a network partition or a restart would."""

    def __init__(self, host: str, port: int):
        self.target = (host, port)
        self.port = 0
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()
        self.resume()

    def resume(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", self.port))
        self.port = self.listener.getsockname()[1]
        self.listener.settimeout(0.05)
        self.open = True
        self.acceptor = threading.Thread(target=self._accept, daemon=True)
        self.acceptor.start()

    def cut(self) -> None:
        self.open = False
        self.acceptor.join()
        self.listener.close()
        with self.lock:
            for s in self.sockets:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()
            self.sockets.clear()

    def _accept(self) -> None:
        while self.open:
            try:
                client, _ = self.listener.accept()
            except (TimeoutError, OSError):
                continue
            upstream = socket.create_connection(self.target)
            with self.lock:
                self.sockets += [client, upstream]
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass


@pytest.fixture
def proxied(postgres_database):
    """(storage, proxy): a storage whose every connection to PostgreSQL goes through the proxy."""
    from agent.storage.testing import empty_tables

    empty_tables(postgres_database)
    real = make_url(postgres_database)
    proxy = CuttableProxy(real.host or "localhost", real.port or 5432)
    storage = RDBStorage(real.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False))
    yield storage, proxy
    proxy.cut()
    storage.close()


@pytest.mark.postgres
def test_a_lost_database_is_a_503_with_retry_after_and_the_api_recovers(proxied):
    storage, proxy = proxied
    with TestClient(create_app(Settings(database_url="unused://"), storage)) as client:
        assert client.post("/datasets", json={"name": "before", "rows": [{"N": 1, "loss": 2}]}).status_code == 201
        proxy.cut()
        for method, path, body in [("get", "/datasets", None), ("get", "/health", None),
                                   ("post", "/datasets", {"name": "during", "rows": [{"N": 1, "loss": 2}]}),
                                   ("get", "/runs/1", None)]:
            r = client.request(method.upper(), path, json=body)
            assert r.status_code == 503, (path, r.text)
            assert r.headers["retry-after"] == "5"
            assert r.json() == {"detail": "the database is unavailable; try again shortly"}  # no host names
        proxy.resume()
        listing = client.get("/datasets").json()
        assert [d["name"] for d in listing["items"]] == ["before"]  # nothing half-written while it was down
        assert client.get("/health").json()["status"] == "ok"


@pytest.mark.postgres
def test_a_value_the_database_refuses_is_a_422_naming_it(postgres_database):
    """The checks before storing refuse NUL text; should one slip by, the answer is still a 4xx."""
    import pandas as pd
    from fastapi import FastAPI

    from agent.storage.testing import empty_tables
    from app.core import errors

    empty_tables(postgres_database)
    storage = RDBStorage(postgres_database)
    app = FastAPI()
    errors.install(app)

    @app.post("/unchecked")
    def unchecked():
        storage.create_dataset(pd.DataFrame({"N": [1.0]}), name="a\x00b", description="")

    try:
        r = TestClient(app).post("/unchecked")
        assert r.status_code == 422
        assert r.json()["detail"] == ("the database refused a value: "
                                      "PostgreSQL text fields cannot contain NUL (0x00) bytes")
        assert storage.list_datasets().total == 0
    finally:
        storage.close()
