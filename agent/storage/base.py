"""The storage interface, in domain verbs (Optuna's ``BaseStorage`` is the model).

Every method is one transaction and returns frozen records (``records.py``),
never ORM objects.  Writes that belong together (a generation's candidates and
the checkpoint that includes them) are a single call, so a killed worker
leaves either both or neither.
"""
from __future__ import annotations

import abc
from typing import Any, Hashable, Mapping, Sequence

import pandas as pd

from agent.search.records import Candidate
from agent.storage.frames import Batch
from agent.storage.records import (
    CandidatePoint, Checkpoint, ComparisonRecord, DatasetRecord, Page, RunEvent, RunRecord, RunState, RunVersion,
    SweepPointRecord, SweepRecord, TaskSpecRecord, TokenRecord,
)

CANDIDATE_ORDERS = ("score", "r2", "id", "generation", "n_constants", "complexity", "seconds")


class BaseStorage(abc.ABC):
    """Datasets, runs and task specs belong to a tenant (None: the local tenant).

    A storage as opened sees every tenant's datasets and runs by id (workers, the CLI) and
    creates the local tenant's; ``for_tenant(t)`` is a view that creates ``t``'s and sees
    nothing else: another tenant's ids are NotFoundError there, exactly like unknown ones.
    """

    @abc.abstractmethod
    def for_tenant(self, tenant: str | None) -> "BaseStorage":
        """A view of this storage restricted to one tenant; it shares the connections (do not close it)."""

    # -- datasets ---------------------------------------------------------------------------
    @abc.abstractmethod
    def create_dataset(self, rows: pd.DataFrame | Batch, *, name: str = "", description: str = "",
                       source: str | None = None, task: Mapping[str, Any] | None = None) -> DatasetRecord:
        """Store a new dataset with its first batch of rows (validated; DataError names a problem).
        A ``frames.Batch`` is rows validated already, taken as it is.

        ``task`` (keys ``name``, ``problem``, ``human_law``, ``split_column``) also saves a
        task spec on the new dataset, in the same transaction."""

    @abc.abstractmethod
    def append_rows(self, dataset_id: int, rows: pd.DataFrame | Batch) -> DatasetRecord:
        """Add a batch of rows with the dataset's columns (a ``frames.Batch``: validated already)."""

    @abc.abstractmethod
    def get_dataset(self, dataset_id: int) -> DatasetRecord:
        """Raises NotFoundError."""

    @abc.abstractmethod
    def list_datasets(self, *, offset: int = 0, limit: int = 50) -> Page[DatasetRecord]:
        """Newest first."""

    @abc.abstractmethod
    def delete_dataset(self, dataset_id: int) -> None:
        """Delete the dataset with its runs; ConflictError while one of its runs is active."""

    @abc.abstractmethod
    def load_rows(self, dataset_id: int) -> pd.DataFrame:
        """All rows in insertion order."""

    def load_rows_page(self, dataset_id: int, offset: int, limit: int) -> tuple[pd.DataFrame, int]:
        """Rows ``offset`` .. ``offset + limit - 1`` in insertion order, and the total count
        (a backend reads only what the page needs)."""
        df = self.load_rows(dataset_id)
        return df.iloc[offset: offset + limit].reset_index(drop=True), len(df)

    # -- task specs ---------------------------------------------------------------------------
    @abc.abstractmethod
    def save_task_spec(self, name: str, *, dataset_id: int | None, problem: Mapping[str, Any],
                       human_law: Mapping[str, Any] | None = None,
                       split_column: str | None = None) -> TaskSpecRecord:
        """Create or replace the task spec with this name."""

    @abc.abstractmethod
    def get_task_spec(self, name: str) -> TaskSpecRecord:
        """Raises NotFoundError."""

    @abc.abstractmethod
    def find_task_spec(self, dataset_id: int) -> TaskSpecRecord | None:
        """The task spec attached to a dataset, if any."""

    @abc.abstractmethod
    def list_task_specs(self) -> list[TaskSpecRecord]:
        """By name."""

    # -- runs ---------------------------------------------------------------------------------
    @abc.abstractmethod
    def create_run(self, dataset_id: int, spec: Mapping[str, Any]) -> RunRecord:
        """Queue a run on a dataset."""

    @abc.abstractmethod
    def get_run(self, run_id: int) -> RunRecord:
        """Raises NotFoundError."""

    @abc.abstractmethod
    def list_runs(self, *, dataset_id: int | None = None, state: RunState | None = None,
                  offset: int = 0, limit: int = 50) -> Page[RunRecord]:
        """Newest first."""

    @abc.abstractmethod
    def claim_run(self, worker_id: str, *, stale_after: float) -> RunRecord | None:
        """Take the oldest queued run, or a running one whose heartbeat is older than
        ``stale_after`` seconds (its worker died); None when there is nothing to do.
        At most one worker wins each run."""

    @abc.abstractmethod
    def heartbeat(self, run_id: int, worker_id: str) -> RunRecord:
        """Refresh the heartbeat; RunLost when this worker no longer owns the run.
        The returned record tells the worker whether a cancel was requested."""

    @abc.abstractmethod
    def save_generation(self, run_id: int, worker_id: str, *, candidates: Sequence[Candidate],
                        checkpoint: Checkpoint, progress: Mapping[str, Any],
                        best_score: float | None, events: Sequence[Mapping[str, Any]] = ()) -> RunRecord:
        """Atomically store a generation's candidates, the checkpoint that follows them,
        progress and events.  RunLost (and nothing written) when the worker lost the run.
        The returned record tells the worker whether a cancel was requested."""

    @abc.abstractmethod
    def load_checkpoint(self, run_id: int) -> Checkpoint | None:
        """The last saved checkpoint, None before the first generation."""

    @abc.abstractmethod
    def finish_run(self, run_id: int, worker_id: str, state: RunState, *,
                   final: Mapping[str, Any] | None = None, error: str | None = None,
                   progress: Mapping[str, Any] | None = None,
                   best_score: float | None = None) -> RunRecord:
        """Move an owned run to done/failed/cancelled; RunLost when not owned.  A run asked to be
        done whose cancel was requested meanwhile ends cancelled: a cancel is never lost."""

    @abc.abstractmethod
    def release_run(self, run_id: int, worker_id: str) -> None:
        """Give an owned run back to the queue (graceful shutdown); it resumes from its checkpoint."""

    @abc.abstractmethod
    def request_cancel(self, run_id: int) -> RunRecord:
        """A queued run is cancelled at once; a running one when its worker next checks.
        ConflictError when the run already finished."""

    # -- candidates ---------------------------------------------------------------------------
    @abc.abstractmethod
    def list_candidates(self, run_id: int, *, order_by: str = "score", descending: bool = True,
                        status: str | None = None, offset: int = 0,
                        limit: int = 50) -> Page[Candidate]:
        """A leaderboard; ``order_by`` is one of CANDIDATE_ORDERS; ties broken by id."""

    @abc.abstractmethod
    def get_candidates(self, run_id: int, ids: Sequence[int]) -> list[Candidate]:
        """The candidates with these ids (missing ids are skipped)."""

    @abc.abstractmethod
    def candidate_points(self, run_id: int, *, limit: int = 100_000) -> list[CandidatePoint]:
        """Every candidate's indexed columns (no law text, no payload), by id, at most ``limit``:
        one query however many candidates a run has."""

    @abc.abstractmethod
    def best_run(self, dataset_id: int) -> RunRecord | None:
        """The finished (done) run with the highest best score on a dataset."""

    def generation(self) -> Hashable | None:
        """A value that moves whenever a run may have changed, known without a query; None when the
        storage cannot tell (then a version must be read).  Versions read at one generation hold
        while it does."""
        return None

    @property
    def scope_key(self) -> Hashable:
        """Which rows this view sees (views with equal keys see the same)."""
        return id(self)

    @abc.abstractmethod
    def run_version(self, run_id: int | None = None, *, best_of_dataset: int | None = None) -> RunVersion | None:
        """A run's version (no payloads), or with ``best_of_dataset`` that of the run ``best_run`` gives
        (None when there is none); NotFoundError for an unknown run."""

    # -- events -------------------------------------------------------------------------------
    @abc.abstractmethod
    def add_events(self, run_id: int, events: Sequence[Mapping[str, Any]]) -> None:
        """Append events (JSON-able dicts; ``kind`` names the type)."""

    @abc.abstractmethod
    def list_events(self, run_id: int, *, after_id: int = 0, limit: int = 100,
                    newest_first: bool = False) -> list[RunEvent]:
        """Events in order (the newest first when asked), after the given event id."""

    # -- comparisons (queued by the API, fitted by workers) ----------------------------------
    @abc.abstractmethod
    def create_comparison(self, run_id: int, law: Mapping[str, Any]) -> ComparisonRecord:
        """Queue a comparison of the run's law with ``law`` ({"name", "lines"})."""

    @abc.abstractmethod
    def get_comparison(self, run_id: int, comparison_id: int) -> ComparisonRecord:
        """One comparison of a run; NotFoundError names what is missing."""

    @abc.abstractmethod
    def claim_comparison(self, worker_id: str, *, stale_after: float) -> ComparisonRecord | None:
        """The oldest queued comparison (or one whose worker went silent), now owned by ``worker_id``."""

    @abc.abstractmethod
    def finish_comparison(self, comparison_id: int, worker_id: str, *, result: Mapping[str, Any] | None = None,
                          error: str | None = None) -> ComparisonRecord | None:
        """Store its result or error; None when the worker no longer owns it."""

    # -- training sweeps (planned by the API, trained by trainer workers) -----------------------
    @abc.abstractmethod
    def create_sweep(self, name: str, design: Mapping[str, Any],
                     points: Sequence[tuple[Mapping[str, Any], float]]) -> SweepRecord:
        """A sweep of ``points`` (a training spec and its cost each), all queued."""

    @abc.abstractmethod
    def add_sweep_points(self, sweep_id: int, points: Sequence[tuple[Mapping[str, Any], float]]) -> SweepRecord:
        """Queue more ``points`` in a sweep (a suggested next run): their rows go to the sweep's dataset."""

    @abc.abstractmethod
    def get_sweep(self, sweep_id: int) -> SweepRecord:
        """Raises NotFoundError."""

    @abc.abstractmethod
    def list_sweeps(self, *, dataset_id: int | None = None, offset: int = 0, limit: int = 50) -> Page[SweepRecord]:
        """Newest first; with ``dataset_id``, only the sweep whose rows make that dataset."""

    @abc.abstractmethod
    def list_sweep_points(self, sweep_id: int) -> list[SweepPointRecord]:
        """Every point, in planned order."""

    @abc.abstractmethod
    def claim_sweep_point(self, worker_id: str, *, stale_after: float) -> SweepPointRecord | None:
        """The cheapest queued point (or one whose trainer went silent), now owned by ``worker_id``."""

    @abc.abstractmethod
    def heartbeat_sweep_point(self, point_id: int, worker_id: str) -> bool:
        """False when ``worker_id`` no longer owns the point."""

    @abc.abstractmethod
    def finish_sweep_point(self, point_id: int, worker_id: str, row: pd.DataFrame) -> SweepPointRecord | None:
        """Append the point's row to the sweep's dataset and mark it done, atomically; None when not owned."""

    @abc.abstractmethod
    def fail_sweep_point(self, point_id: int, worker_id: str, error: str, *,
                         max_attempts: int) -> SweepPointRecord | None:
        """Queue the point again, or fail it after ``max_attempts``; None when not owned."""

    # -- API tokens (operator level: no tenant restriction) ----------------------------------
    @abc.abstractmethod
    def create_token(self, name: str, *, scope: str, tenant: str | None, secret_hash: str) -> TokenRecord:
        """Store a token by the hash of its secret; ConflictError when an active token has this name."""

    @abc.abstractmethod
    def find_token(self, secret_hash: str) -> TokenRecord | None:
        """The active token whose secret has this hash."""

    @abc.abstractmethod
    def list_tokens(self) -> list[TokenRecord]:
        """Every token, revoked ones included, oldest first."""

    @abc.abstractmethod
    def revoke_token(self, name: str) -> TokenRecord:
        """Revoke the active token with this name; NotFoundError when there is none."""

    @abc.abstractmethod
    def has_tokens(self) -> bool:
        """Whether any token is active (then every API request needs one)."""

    # -- conveniences built on the verbs ----------------------------------------------------
    def get_candidate(self, run_id: int, candidate_id: int) -> Candidate:
        from agent.storage.errors import NotFoundError

        found = self.get_candidates(run_id, [candidate_id])
        if not found:
            self.get_run(run_id)  # names the run when it is the run that is missing
            raise NotFoundError(f"run {run_id} has no candidate {candidate_id}")
        return found[0]

    def best_candidate(self, run_id: int) -> Candidate | None:
        page = self.list_candidates(run_id, order_by="score", status="ok", limit=1)
        return page.items[0] if page.items else None

    def info(self) -> dict[str, Any]:
        """What a health check shows: the backend and its schema version."""
        return {"backend": type(self).__name__, "schema_revision": None}

    def close(self) -> None:
        """Release connections."""
