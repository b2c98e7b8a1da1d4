"""Row validation: every bad value is named with its column and row."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from agent.errors import DataError
from agent.storage.frames import merge_summaries, summarize, validate_frame


@pytest.mark.parametrize("column, message", [
    ([1.0, float("nan"), 3.0], "'x' has 1 missing or NaN value(s) (first at row 2)"),
    ([1.0, 2.0, float("inf")], "'x' has 1 infinite value(s) (first at row 3)"),
    ([1.0, "abc", 3.0], "'x' is not numeric: row 2 has 'abc'"),
    (["1", "2", "oops"], "'x' is not numeric: row 3 has 'oops'"),
    ([True, False, True], "'x' holds true/false values"),
    ([1.0, None, 2.0], "'x' has 1 missing"),
    (["a", None, "b"], "'x' has 1 missing value(s) (first at row 2)"),
    ([1.0, [2.0], 3.0], "'x', row 2: expected a number or text, got list"),
])
def test_bad_values_are_named(column, message):
    with pytest.raises(DataError) as err:
        validate_frame(pd.DataFrame({"x": pd.Series(column, dtype=object if None in column or [2.0] in column else None)}))
    assert message in str(err.value)


def test_numbers_written_as_text_become_numbers_and_labels_stay_text():
    out = validate_frame(pd.DataFrame({"x": ["1", "2.5", "1e3"], "g": ["a", "b", "a"], "n": [1, 2, 3]}))
    assert out["x"].tolist() == [1.0, 2.5, 1000.0]
    assert out["g"].tolist() == ["a", "b", "a"]
    assert out["n"].dtype == np.int64


@pytest.mark.parametrize("df, message", [
    (pd.DataFrame(), "no columns"),
    (pd.DataFrame({"x": []}), "no rows"),
    (pd.DataFrame([[1, 2]], columns=["x", "x"]), "duplicate column name(s): x"),
    (pd.DataFrame([[1, 2]], columns=["x", ""]), "column names must be non-empty"),
])
def test_tables_without_usable_shape_are_refused(df, message):
    with pytest.raises(DataError) as err:
        validate_frame(df)
    assert message in str(err.value)


def test_summaries_merge_ranges_and_distinct_labels():
    a = summarize(pd.DataFrame({"x": [1.0, 5.0], "g": ["a", "b"]}))
    b = summarize(pd.DataFrame({"x": [-2.0, 3.0], "g": ["c", "a"]}))
    x, g = merge_summaries(a, b)
    assert (x.min, x.max) == (-2.0, 5.0)
    assert g.values == ("a", "b", "c") and g.n_distinct == 3


def test_batches_stored_in_every_format_so_far_read_back_as_one_frame():
    """Batches stored until now are Parquet with pandas' schema metadata (``Table.from_pandas``); new
    small ones are Arrow IPC streams and large ones Parquet from plain arrays.  A dataset holding all
    three reads back in order with one set of dtypes."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from agent.storage.frames import ARROW_MAX_ROWS, Batch, from_blobs

    rows = validate_frame(pd.DataFrame({"N": [1e6, 2e6], "group": ["a", "b"], "steps": [10, 20]}))
    old = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(rows, preserve_index=False), old, compression="zstd")
    small = Batch.of_valid(rows)
    n = ARROW_MAX_ROWS + 1
    large = Batch.of(pd.DataFrame({"N": np.arange(n) + 1.0, "group": ["c"] * n, "steps": np.arange(n)}))
    assert (small.format, large.format) == ("arrow", "parquet")
    both = from_blobs([old.getvalue(), small.data, large.data], ["N", "group", "steps"])
    assert both["N"].tolist()[:5] == [1e6, 2e6, 1e6, 2e6, 1.0] and len(both) == 4 + n
    assert both["group"].tolist()[:5] == ["a", "b", "a", "b", "c"]
    assert both["steps"].dtype == np.int64 and both["N"].dtype == np.float64
    assert len(small.data) < len(old.getvalue())
    assert small.to_frame().to_dict("records") == rows.to_dict("records")
