"""Datasets: rows in, the same rows out; summaries; one transaction per write."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from agent.errors import DataError
from agent.storage import ConflictError, NotFoundError, frames


def frame(n=6, offset=0.0):
    return pd.DataFrame({
        "N": np.arange(1, n + 1) * 1e6 + offset,
        "group": ["a", "b"] * (n // 2),
        "loss": np.linspace(3.0, 2.0, n),
    })


def test_created_dataset_returns_its_rows_and_column_summaries(storage):
    ds = storage.create_dataset(frame(), name="toy", description="two groups")
    assert (ds.name, ds.description, ds.n_rows, ds.n_batches) == ("toy", "two groups", 6, 1)
    assert ds.column("N").kind == "number" and ds.column("N").min == 1e6 and ds.column("N").max == 6e6
    assert ds.column("group").kind == "text" and ds.column("group").values == ("a", "b")
    assert ds.column("group").n_distinct == 2
    rows = storage.load_rows(ds.id)
    pd.testing.assert_frame_equal(rows, frame(), check_dtype=False)
    assert storage.get_dataset(ds.id) == ds


def test_appended_rows_follow_the_first_batch_and_widen_the_ranges(storage):
    ds = storage.create_dataset(frame())
    extra = frame(4, offset=1e9).assign(group=["c", "a", "c", "a"])
    after = storage.append_rows(ds.id, extra[["loss", "N", "group"]])  # column order may differ
    assert (after.n_rows, after.n_batches) == (10, 2)
    assert after.column("N").max == 4e6 + 1e9
    assert after.column("group").values == ("a", "b", "c")
    rows = storage.load_rows(ds.id)
    assert list(rows.columns) == ["N", "group", "loss"]
    assert rows["N"].tolist() == frame()["N"].tolist() + extra["N"].tolist()


@pytest.mark.parametrize("bad, message", [
    (frame().drop(columns="loss"), "missing column(s) loss"),
    (frame().assign(extra=1.0), "unknown column(s) extra"),
    (frame().assign(group=np.arange(6.0)), "'group' is text in the dataset but number"),
])
def test_appending_rows_that_do_not_match_is_refused_and_stores_nothing(storage, bad, message):
    ds = storage.create_dataset(frame())
    with pytest.raises(DataError, match=message.replace("(", r"\(").replace(")", r"\)")):
        storage.append_rows(ds.id, bad)
    after = storage.get_dataset(ds.id)
    assert (after.n_rows, after.n_batches) == (6, 1)
    assert len(storage.load_rows(ds.id)) == 6


def test_invalid_rows_never_create_a_dataset(storage):
    with pytest.raises(DataError, match="'loss' has 1 missing or NaN"):
        storage.create_dataset(frame().assign(loss=[1.0, np.nan, 2, 3, 4, 5]))
    assert storage.list_datasets().total == 0


def test_a_hundred_thousand_rows_are_one_compact_batch(storage):
    rng = np.random.default_rng(0)
    big = pd.DataFrame({"N": rng.uniform(1e6, 1e9, 100_000), "D": rng.uniform(1e8, 1e11, 100_000),
                        "group": rng.choice(["x", "y", "z"], 100_000), "loss": rng.uniform(2, 4, 100_000)})
    ds = storage.create_dataset(big)
    assert (ds.n_rows, ds.n_batches) == (100_000, 1)
    rows = storage.load_rows(ds.id)
    np.testing.assert_array_equal(rows["D"].to_numpy(), big["D"].to_numpy())
    assert rows["group"].tolist()[:5] == big["group"].tolist()[:5]


def test_datasets_are_listed_newest_first_with_paging(storage):
    ids = [storage.create_dataset(frame(), name=f"d{i}").id for i in range(5)]
    page = storage.list_datasets(offset=1, limit=2)
    assert page.total == 5 and (page.offset, page.limit) == (1, 2)
    assert [d.id for d in page.items] == [ids[3], ids[2]]


def test_deleting_a_dataset_removes_its_runs_and_frees_its_task(storage):
    ds = storage.create_dataset(frame())
    storage.save_task_spec("toy", dataset_id=ds.id, problem={"inputs": ["N"], "targets": ["loss"]})
    run = storage.create_run(ds.id, {"budget": 3})
    storage.request_cancel(run.id)
    storage.delete_dataset(ds.id)
    with pytest.raises(NotFoundError, match=f"dataset {ds.id} not found"):
        storage.get_dataset(ds.id)
    with pytest.raises(NotFoundError, match=f"run {run.id} not found"):
        storage.get_run(run.id)
    assert storage.get_task_spec("toy").dataset_id is None


def test_a_dataset_with_an_active_run_cannot_be_deleted(storage):
    ds = storage.create_dataset(frame())
    storage.create_run(ds.id, {})
    with pytest.raises(ConflictError, match="1 queued or running run"):
        storage.delete_dataset(ds.id)
    assert storage.get_dataset(ds.id).id == ds.id


def test_unknown_dataset_ids_are_named(storage):
    for call in (storage.get_dataset, storage.load_rows, storage.delete_dataset):
        with pytest.raises(NotFoundError, match="dataset 404 not found"):
            call(404)
    with pytest.raises(NotFoundError, match="dataset 404 not found"):
        storage.append_rows(404, frame())
    with pytest.raises(NotFoundError, match="dataset 404 not found"):
        storage.create_run(404, {})


def test_task_specs_are_saved_replaced_and_found_by_dataset(storage):
    ds = storage.create_dataset(frame())
    problem = {"inputs": ["N"], "targets": ["loss"], "group": "group"}
    law = {"lines": ["loss = a * N ** b"], "constants": {"a": {"a": 1.0, "b": -0.1}}}
    storage.save_task_spec("toy", dataset_id=ds.id, problem=problem, human_law=law, split_column="split")
    spec = storage.save_task_spec("toy", dataset_id=ds.id, problem={**problem, "max_constants": 3}, human_law=law)
    assert spec.problem["max_constants"] == 3 and spec.split_column is None
    assert storage.get_task_spec("toy") == spec
    assert storage.find_task_spec(ds.id) == spec
    assert [t.name for t in storage.list_task_specs()] == ["toy"]
    with pytest.raises(NotFoundError, match="task 'other' not found"):
        storage.get_task_spec("other")


def test_a_task_dataset_and_its_spec_are_stored_together(storage):
    problem = {"inputs": ["N"], "targets": ["loss"], "group": "group"}
    ds = storage.create_dataset(frame(), name="toy", source="sldbench:toy",
                                task={"name": "toy", "problem": problem, "split_column": "split"})
    spec = storage.get_task_spec("toy")
    assert (spec.dataset_id, spec.problem, spec.split_column) == (ds.id, problem, "split")
    with pytest.raises(DataError):
        storage.create_dataset(frame().assign(loss=np.inf), task={"name": "bad", "problem": problem})
    with pytest.raises(NotFoundError):
        storage.get_task_spec("bad")


def test_a_page_of_rows_reads_only_the_batches_that_hold_it(storage, monkeypatch):
    ds = storage.create_dataset(pd.DataFrame({"N": [0.0, 1.0, 2.0], "loss": [9.0, 8.0, 7.0]}))
    for start in (3, 6, 9):  # four batches of three rows: N is the row's position
        storage.append_rows(ds.id, pd.DataFrame({"N": [float(start + i) for i in range(3)],
                                                 "loss": [9.0 - start - i for i in range(3)]}))
    read = []
    original = frames.from_blobs
    monkeypatch.setattr(frames, "from_blobs", lambda blobs, columns: read.append(len(blobs)) or original(blobs, columns))
    page, total = storage.load_rows_page(ds.id, offset=4, limit=4)
    assert total == 12 and page["N"].tolist() == [4.0, 5.0, 6.0, 7.0]
    assert read == [2]  # the second and third batches, not all four
    assert storage.load_rows_page(ds.id, offset=11, limit=50)[0]["N"].tolist() == [11.0]
    assert storage.load_rows_page(ds.id, offset=12, limit=5)[0].empty


def dataset_statements(storage, action) -> list[str]:
    """The SQL statements ``action`` runs that read the datasets table."""
    from sqlalchemy import event

    seen = []

    def record(conn, cursor, statement, *args):
        if statement.lstrip().upper().startswith("SELECT") and "FROM datasets" in statement:
            seen.append(statement)

    event.listen(storage.engine, "before_cursor_execute", record)
    try:
        action()
    finally:
        event.remove(storage.engine, "before_cursor_execute", record)
    return seen


def test_an_append_inside_the_known_ranges_moves_only_the_counters_without_reading_the_dataset(storage):
    """Most appends add no new range and no new label: they need neither the read-merge-write of the
    dataset's summary nor the lock held over it, which every append to that dataset would queue behind."""
    ds = storage.create_dataset(frame())
    inside = frame(4, offset=0.5e6)
    assert dataset_statements(storage, lambda: storage.append_rows(ds.id, inside)) == []
    widening = frame(2, offset=1e9)
    assert dataset_statements(storage, lambda: storage.append_rows(ds.id, widening)) != []
    after = storage.get_dataset(ds.id)
    assert (after.n_rows, after.n_batches, after.column("N").max) == (12, 3, 2e6 + 1e9)
    assert storage.load_rows(ds.id)["N"].tolist() == [*frame()["N"], *inside["N"], *widening["N"]]


def test_concurrent_appends_are_all_kept_in_distinct_batches(storage):
    from concurrent.futures import ThreadPoolExecutor

    ds = storage.create_dataset(frame())
    batches = [frame(2, offset=1e3 * k) for k in range(40)]  # inside the ranges, then beyond them
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda b: storage.append_rows(ds.id, b), batches))
    after = storage.get_dataset(ds.id)
    assert (after.n_rows, after.n_batches) == (6 + 80, 41)
    assert sorted(storage.load_rows(ds.id)["N"]) == sorted([*frame()["N"], *(n for b in batches for n in b["N"])])


def test_a_known_summary_neither_admits_mismatched_rows_nor_another_tenants_append(storage):
    unscoped = storage.create_dataset(frame())
    storage.append_rows(unscoped.id, frame(2))  # the unrestricted storage's statements exist before its views
    mine = storage.for_tenant("acme")
    ds = mine.create_dataset(frame())
    mine.append_rows(ds.id, frame(2))
    with pytest.raises(DataError, match="missing column"):
        mine.append_rows(ds.id, frame(2).drop(columns="loss"))
    with pytest.raises(NotFoundError):
        storage.for_tenant("rival").append_rows(ds.id, frame(2))
    assert (mine.get_dataset(ds.id).n_rows, mine.get_dataset(ds.id).n_batches) == (8, 2)


def test_a_summary_kept_for_a_deleted_dataset_never_stands_for_one_that_takes_its_id(storage, database_url):
    """SQLite gives a new row the id of the last one deleted: when another process (here a second
    storage) deletes a dataset and creates one, the dataset under that id has narrower ranges, and an
    append that the old summary covered must still widen the new one's."""
    from agent.storage.rdb import RDBStorage

    old = storage.create_dataset(frame(6, offset=1e9))
    storage.append_rows(old.id, frame(2, offset=1e9))
    other = RDBStorage(database_url)
    try:
        other.delete_dataset(old.id)
        new = other.create_dataset(frame(2))
    finally:
        other.close()
    if storage.engine.dialect.name == "sqlite":
        assert new.id == old.id  # the case this test is about
    after = storage.append_rows(new.id, frame(2, offset=1e9))
    assert after.column("N").max == 2e6 + 1e9
    assert storage.get_dataset(new.id).column("N").max == 2e6 + 1e9
