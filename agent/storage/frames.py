"""Row batches: validation, column summaries and compact bytes (Parquet).

A dataset is stored as one Parquet blob per append, so 100k rows are a few
blobs, not 100k database rows.  Every column is either numeric (finite
numbers) or text (no missing values); anything else is rejected with a
message that names the column and a bad row.
"""
from __future__ import annotations

import io
import sys
from typing import Iterable, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from agent.errors import DataError
from agent.storage.records import ColumnInfo

MAX_COLUMNS = 500
MAX_COLUMN_NAME = 200
MAX_TEXT_VALUES = 1000  # distinct text values remembered per column


def validate_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Return a clean copy: numeric columns as int64/float64, text columns as str."""
    if df.shape[1] == 0:
        raise DataError("the data has no columns")
    if len(df) == 0:
        raise DataError("the data has no rows")
    if df.shape[1] > MAX_COLUMNS:
        raise DataError(f"the data has {df.shape[1]} columns, more than the limit of {MAX_COLUMNS}")
    names = [str(c).strip() if isinstance(c, str) else c for c in df.columns]
    for name in names:
        if not isinstance(name, str) or not name:
            raise DataError(f"column names must be non-empty text (got {name!r})")
        if len(name) > MAX_COLUMN_NAME:
            raise DataError(f"column name {name[:40]!r}... is longer than {MAX_COLUMN_NAME} characters")
        if "\x00" in name:
            raise DataError(f"column name {name!r} holds a NUL character")
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise DataError(f"duplicate column name(s): {', '.join(duplicated)}")
    out = {}
    for name, col in zip(names, df.columns):
        out[name] = _clean_column(name, df[col].reset_index(drop=True))
    return pd.DataFrame(out)


def _clean_column(name: str, series: pd.Series) -> pd.Series:
    if pd.api.types.is_bool_dtype(series):
        raise DataError(f"column {name!r} holds true/false values; use numbers (0/1) or text")
    if pd.api.types.is_numeric_dtype(series):
        return _check_finite(name, series.astype(np.int64 if pd.api.types.is_integer_dtype(series) else float))
    values = series.tolist()
    missing = [i for i, v in enumerate(values) if v is None or (isinstance(v, float) and np.isnan(v))]
    if missing:
        nan = any(values[i] is not None for i in missing)
        what = "missing or NaN" if nan else "missing"
        raise DataError(f"column {name!r} has {len(missing)} {what} value(s) (first at row {missing[0] + 1})")
    is_number = [isinstance(v, (int, float, np.number)) and not isinstance(v, (bool, np.bool_)) for v in values]
    for i, v in enumerate(values):
        if not is_number[i] and not isinstance(v, str):
            raise DataError(f"column {name!r}, row {i + 1}: expected a number or text, got {type(v).__name__}")
    if all(is_number):
        return _check_finite(name, _floats(name, values))
    parsed = [_as_number(v) for v in values]
    text_rows = [i for i, v in enumerate(parsed) if v is None]
    if len(text_rows) == 0:
        return _check_finite(name, pd.Series(parsed, dtype=float))
    if len(text_rows) < len(values):
        # Numbers mixed with some text is nearly always a typo in a numeric column.
        i = int(text_rows[0])
        raise DataError(f"column {name!r} is not numeric: row {i + 1} has {values[i]!r} "
                        "(a column must be all numbers or all text)")
    nul = next((i for i, v in enumerate(values) if "\x00" in v), None)
    if nul is not None:  # PostgreSQL cannot store it, and no label needs it
        raise DataError(f"column {name!r}, row {nul + 1}: the text holds a NUL character")
    return pd.Series([str(v) for v in values], dtype=object)


def _floats(name: str, values: list) -> pd.Series:
    try:
        return pd.Series(values, dtype=float)
    except OverflowError:
        i = next(i for i, v in enumerate(values) if isinstance(v, int) and abs(v) > sys.float_info.max)
        raise DataError(f"column {name!r}, row {i + 1}: the integer is too large for a float "
                        "(the limit is about 1.8e308)") from None


def _as_number(value) -> float | None:
    """The number a value spells ("nan" and "inf" included, so they are caught by name), else None."""
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    try:
        return float(value)
    except OverflowError:  # an integer beyond a float: caught as infinite, by name
        return float("inf") if value > 0 else float("-inf")


def _check_finite(name: str, series: pd.Series) -> pd.Series:
    values = series.to_numpy(dtype=float)
    nan = np.isnan(values)
    if nan.any():
        raise DataError(f"column {name!r} has {int(nan.sum())} missing or NaN value(s) "
                        f"(first at row {int(np.argmax(nan)) + 1})")
    inf = np.isinf(values)
    if inf.any():
        raise DataError(f"column {name!r} has {int(inf.sum())} infinite value(s) "
                        f"(first at row {int(np.argmax(inf)) + 1})")
    return series


def column_kind(series: pd.Series) -> str:
    return "number" if pd.api.types.is_numeric_dtype(series) else "text"


def summarize(df: pd.DataFrame) -> tuple[ColumnInfo, ...]:
    infos = []
    for name in df.columns:
        s = df[name]
        if column_kind(s) == "number":
            infos.append(ColumnInfo(name, "number", min=float(s.min()), max=float(s.max())))
        else:
            distinct = sorted(set(s.tolist()))
            infos.append(_text_info(name, distinct, truncated=False))
    return tuple(infos)


def _text_info(name: str, distinct: Sequence[str], truncated: bool) -> ColumnInfo:
    kept = tuple(distinct[:MAX_TEXT_VALUES])
    exact = not truncated and len(distinct) <= MAX_TEXT_VALUES
    return ColumnInfo(name, "text", n_distinct=len(distinct) if exact else None, values=kept)


def check_compatible(existing: Iterable[ColumnInfo], df: pd.DataFrame) -> None:
    """Appended rows must have exactly the dataset's columns, each of the same kind."""
    existing = list(existing)
    have = {c.name for c in existing}
    new = set(df.columns)
    if new != have:
        missing, extra = sorted(have - new), sorted(new - have)
        parts = ([f"missing column(s) {', '.join(missing)}"] if missing else []) + \
                ([f"unknown column(s) {', '.join(extra)}"] if extra else [])
        raise DataError(f"appended rows do not match the dataset's columns: {'; '.join(parts)}")
    for info in existing:
        kind = column_kind(df[info.name])
        if kind != info.kind:
            raise DataError(f"column {info.name!r} is {info.kind} in the dataset but {kind} in the appended rows")


def merge_summaries(old: Sequence[ColumnInfo], new: Sequence[ColumnInfo]) -> tuple[ColumnInfo, ...]:
    by_name = {c.name: c for c in new}
    merged = []
    for a in old:
        b = by_name[a.name]
        if a.kind == "number":
            merged.append(ColumnInfo(a.name, "number", min=min(a.min, b.min), max=max(a.max, b.max)))
        else:
            distinct = sorted(set(a.values) | set(b.values))
            truncated = a.n_distinct is None or b.n_distinct is None
            merged.append(_text_info(a.name, distinct, truncated))
    return tuple(merged)


def to_bytes(df: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), buf, compression="zstd")
    return buf.getvalue()


def from_blobs(blobs: Iterable[bytes], columns: Sequence[str]) -> pd.DataFrame:
    tables = [pq.read_table(io.BytesIO(b)).select(list(columns)) for b in blobs]
    if not tables:
        return pd.DataFrame({c: [] for c in columns})
    table = pa.concat_tables(tables, promote_options="permissive")
    return table.to_pandas()
