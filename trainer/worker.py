"""``sld train worker``: claim sweep points from the service over HTTP, train them, post their rows.

One loop trains one point at a time; ``--jobs`` runs several loops as processes (one thread each
on the CPU: the faster use of a few cores).  While a point trains, a thread heartbeats it; when the
service answers 409 (the point went stale and another trainer claimed it) training stops and its
result is dropped.  A killed trainer loses only its point, which the service queues again once the
heartbeat is ``stale_after`` old.
"""
from __future__ import annotations

import dataclasses
import os
import socket
import threading
import time
import uuid
from typing import Callable

import httpx

from trainer import ServiceRefused
from trainer.spec import TrainSpec

RETRIES = 5  # a result survives a service restart of about a minute
GONE = (404, 409)  # the point went stale and another trainer has it (409), or it no longer exists (404)


class PointLost(Exception):
    """The service gave the point to another trainer."""


@dataclasses.dataclass
class TrainerWorker:
    server: str
    token: str | None = None
    device: str | None = None  # overrides the point's device ("auto")
    threads: int = 1
    poll_interval: float = 2.0
    log: Callable[[str], None] = print
    worker_id: str = dataclasses.field(
        default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}")

    def __post_init__(self):
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        self.client = httpx.Client(base_url=self.server.rstrip("/"), headers=headers, timeout=30.0)

    def run(self, *, max_points: int | None = None, exit_when_idle: bool = False) -> int:
        """Train points until ``max_points`` are done, or (``exit_when_idle``) none is left; how many were done."""
        done = 0
        while max_points is None or done < max_points:
            claim = self._call("POST", "/sweeps/claim", json={"worker_id": self.worker_id})
            if claim.status_code == 204:
                if exit_when_idle:
                    break
                time.sleep(self.poll_interval)
                continue
            done += self.train_point(claim.json())
        return done

    def train_point(self, claim: dict) -> int:
        """Train one claimed point and post its row; 1 when the row was stored, else 0."""
        point = claim["point"]
        try:
            spec = TrainSpec.from_dict({**point["spec"], "threads": self.threads,
                                        **({"device": self.device} if self.device else {})})
        except (KeyError, TypeError, ValueError) as exc:  # a point this trainer cannot read fails, not the trainer
            self._fail(point["id"], f"the point's spec cannot be read: {type(exc).__name__}: {exc}")
            return 0
        from trainer.train import train

        lost = threading.Event()
        stop = threading.Event()
        beat = threading.Thread(target=self._heartbeat, args=(point["id"], claim["heartbeat_interval"], stop, lost),
                                daemon=True)
        beat.start()

        def progress(step, steps, loss):
            if lost.is_set():
                raise PointLost()

        self.log(f"point {point['id']} (sweep {point['sweep_id']}): d={spec.d_model} L={spec.n_layers} "
                 f"D={spec.tokens:.3g} lr={spec.learning_rate:.2g} seed={spec.seed}")
        try:
            result = train(spec, progress=progress)
        except PointLost:
            self.log(f"point {point['id']}: another trainer has it now; stopped")
            return 0
        except Exception as exc:  # a run that cannot train (out of memory, a bad device) is reported, not fatal
            stop.set()
            self._fail(point["id"], f"{type(exc).__name__}: {exc}")
            return 0
        finally:
            stop.set()
            beat.join()
        answer = self._call("POST", f"/sweeps/points/{point['id']}/result",
                            json={"worker_id": self.worker_id, "row": result.to_row()})
        if answer.status_code in GONE:
            self.log(f"point {point['id']}: another trainer has it now (or it was deleted); result dropped")
            return 0
        self.log(f"point {point['id']}: val loss {result.val_loss:.4f} in {result.seconds:.1f} s "
                 f"({result.tokens_per_s:,.0f} tokens/s)")
        return 1

    def _fail(self, point_id: int, error: str) -> None:
        self._call("POST", f"/sweeps/points/{point_id}/fail", json={"worker_id": self.worker_id, "error": error[:2000]})
        self.log(f"point {point_id} failed: {error}")

    def _heartbeat(self, point_id: int, interval: float, stop: threading.Event, lost: threading.Event) -> None:
        while not stop.wait(interval):
            try:
                answer = self.client.post(f"/sweeps/points/{point_id}/heartbeat", json={"worker_id": self.worker_id})
            except httpx.TransportError:
                continue  # the service is restarting; the next beat tries again
            if answer.status_code in GONE:
                lost.set()
                return

    def _call(self, method: str, path: str, **kwargs) -> httpx.Response:
        """One request, retried with backoff while the service cannot be reached or answers 503."""
        for attempt in range(RETRIES + 1):
            try:
                answer = self.client.request(method, path, **kwargs)
                if answer.status_code != 503:
                    if answer.status_code >= 400 and answer.status_code not in GONE:
                        raise ServiceRefused(f"{method} {path}: HTTP {answer.status_code}: {answer.text[:300]}")
                    return answer
            except httpx.TransportError:
                if attempt == RETRIES:
                    raise
            time.sleep(min(30.0, 2.0 ** attempt))
        return answer
