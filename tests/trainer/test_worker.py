"""The trainer's loop on its own: a point it cannot read is reported as failed, and the trainer goes on."""
from __future__ import annotations

import httpx

from trainer.worker import TrainerWorker


class Recorded(TrainerWorker):
    """A trainer whose calls to the service are recorded and answered 200 (the service is not under test)."""

    def __post_init__(self):
        super().__post_init__()
        self.calls: list[tuple[str, str, dict]] = []

    def _call(self, method: str, path: str, **kwargs) -> httpx.Response:
        self.calls.append((method, path, kwargs.get("json") or {}))
        return httpx.Response(200)


def test_a_point_whose_spec_cannot_be_read_fails_with_the_reason_and_trains_nothing():
    logs: list[str] = []
    worker = Recorded(server="http://127.0.0.1:9", log=logs.append, worker_id="w1")
    claim = {"point": {"id": 7, "sweep_id": 1, "spec": {"d_model": 64, "warp_drive": True}}, "heartbeat_interval": 1}
    assert worker.train_point(claim) == 0
    (method, path, body), = worker.calls  # no heartbeat, no result: one failure report
    assert (method, path) == ("POST", "/sweeps/points/7/fail")
    assert body["worker_id"] == "w1" and "warp_drive" in body["error"] and "cannot be read" in body["error"]
    assert any("point 7 failed" in line for line in logs)
