"""Row batches: validation, column summaries and compact bytes (Arrow IPC or Parquet).

A dataset is stored as one blob per append, so 100k rows are a few blobs, not
100k database rows.  A small batch (the common append of a few runs) is an Arrow
IPC stream: 6 µs to write where Parquet's fixed costs take 200 µs.  A large one
is Parquet, whose encodings and compression make it several times smaller.

Every column is either numeric (finite numbers) or text (no missing values);
anything else is rejected with a message that names the column and a bad row.
"""
from __future__ import annotations

import io
import sys
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

from agent.errors import DataError
from agent.storage.records import ColumnInfo

MAX_COLUMNS = 500
MAX_COLUMN_NAME = 200
MAX_TEXT_VALUES = 1000  # distinct text values remembered per column
ARROW_MAX_ROWS = 4096  # larger batches are stored as Parquet
PARQUET_MAGIC = b"PAR1"


def validate_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Return a clean copy: numeric columns as int64/float64, text columns as str."""
    names = _checked_names(list(df.columns), len(df))
    return pd.DataFrame({name: _clean_column(name, df.iloc[:, i]) for i, name in enumerate(names)})


def clean_columns(columns: dict) -> dict[str, np.ndarray]:
    """``{name: list of values}`` (equal lengths) checked as ``validate_frame`` does, as clean arrays.

    Works on plain lists, with no DataFrame: a client may append a few rows many times a second,
    and per-column pandas operations cost more than the checks themselves.
    """
    n_rows = len(next(iter(columns.values()))) if columns else 0
    names = _checked_names(list(columns), n_rows)
    return {name: _as_array(_clean_column(name, values)) for name, values in zip(names, columns.values())}


def _as_array(values: np.ndarray | pd.Series) -> np.ndarray:
    return values.to_numpy(dtype=object) if isinstance(values, pd.Series) else values


def _checked_names(raw: list, n_rows: int) -> list[str]:
    if not raw:
        raise DataError("the data has no columns")
    if n_rows == 0:
        raise DataError("the data has no rows")
    if len(raw) > MAX_COLUMNS:
        raise DataError(f"the data has {len(raw)} columns, more than the limit of {MAX_COLUMNS}")
    names = [str(c).strip() if isinstance(c, str) else c for c in raw]
    for name in names:
        if not isinstance(name, str) or not name:
            raise DataError(f"column names must be non-empty text (got {name!r})")
        if len(name) > MAX_COLUMN_NAME:
            raise DataError(f"column name {name[:40]!r}... is longer than {MAX_COLUMN_NAME} characters")
        if "\x00" in name:
            raise DataError(f"column name {name!r} holds a NUL character")
    if len(set(names)) < len(names):
        duplicated = sorted({n for n in names if names.count(n) > 1})
        raise DataError(f"duplicate column name(s): {', '.join(duplicated)}")
    return names


def _clean_column(name: str, values) -> np.ndarray | pd.Series:
    """A column's values as float64/int64 numbers, or as text (object dtype); else a DataError."""
    if isinstance(values, pd.Series):
        if pd.api.types.is_bool_dtype(values):
            raise DataError(f"column {name!r} holds true/false values; use numbers (0/1) or text")
        if pd.api.types.is_numeric_dtype(values):
            integer = pd.api.types.is_integer_dtype(values)
            return _check_finite(name, values.to_numpy(dtype=np.int64 if integer else float, copy=True))
        values = values.tolist()
    missing = [i for i, v in enumerate(values) if v is None or (isinstance(v, float) and v != v)]
    if missing:
        nan = any(values[i] is not None for i in missing)
        what = "missing or NaN" if nan else "missing"
        raise DataError(f"column {name!r} has {len(missing)} {what} value(s) (first at row {missing[0] + 1})")
    kinds = set(map(type, values))
    if kinds <= {float, int}:  # the common case, JSON numbers: no per-value checks needed
        return _check_finite(name, _floats(name, values))
    if kinds == {str}:
        return _text_or_numbers(name, values)
    is_number = [isinstance(v, (int, float, np.number)) and not isinstance(v, (bool, np.bool_)) for v in values]
    for i, v in enumerate(values):
        if not is_number[i] and not isinstance(v, str):
            raise DataError(f"column {name!r}, row {i + 1}: expected a number or text, got {type(v).__name__}")
    if all(is_number):
        return _check_finite(name, _floats(name, values))
    return _text_or_numbers(name, values)


def _text_or_numbers(name: str, values: list) -> np.ndarray | pd.Series:
    """Text cells that all spell numbers are numbers (CSV); otherwise the column is text."""
    parsed = [_as_number(v) for v in values]
    text_rows = [i for i, v in enumerate(parsed) if v is None]
    if len(text_rows) == 0:
        return _check_finite(name, np.array(parsed, dtype=float))
    if len(text_rows) < len(values):
        # Numbers mixed with some text is nearly always a typo in a numeric column.
        i = int(text_rows[0])
        raise DataError(f"column {name!r} is not numeric: row {i + 1} has {values[i]!r} "
                        "(a column must be all numbers or all text)")
    nul = next((i for i, v in enumerate(values) if "\x00" in v), None)
    if nul is not None:  # PostgreSQL cannot store it, and no label needs it
        raise DataError(f"column {name!r}, row {nul + 1}: the text holds a NUL character")
    return pd.Series([str(v) for v in values], dtype=object)


def _floats(name: str, values: list) -> np.ndarray:
    try:
        return np.array(values, dtype=float)
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


def _check_finite(name: str, values: np.ndarray) -> np.ndarray:
    finite = np.isfinite(values)
    if finite.all():
        return values
    nan = np.isnan(values)
    if nan.any():
        raise DataError(f"column {name!r} has {int(nan.sum())} missing or NaN value(s) "
                        f"(first at row {int(np.argmax(nan)) + 1})")
    inf = ~finite
    raise DataError(f"column {name!r} has {int(inf.sum())} infinite value(s) "
                    f"(first at row {int(np.argmax(inf)) + 1})")


def summarize(df: pd.DataFrame) -> tuple[ColumnInfo, ...]:
    return summarize_arrays({name: df[name].to_numpy() for name in df.columns})


def summarize_arrays(columns: dict[str, np.ndarray]) -> tuple[ColumnInfo, ...]:
    infos = []
    for name, values in columns.items():
        if values.dtype.kind in "iuf":
            infos.append(ColumnInfo(name, "number", min=float(values.min()), max=float(values.max())))
        else:
            infos.append(_text_info(name, sorted(set(values.tolist())), truncated=False))
    return tuple(infos)


def _text_info(name: str, distinct: Sequence[str], truncated: bool) -> ColumnInfo:
    kept = tuple(distinct[:MAX_TEXT_VALUES])
    exact = not truncated and len(distinct) <= MAX_TEXT_VALUES
    return ColumnInfo(name, "text", n_distinct=len(distinct) if exact else None, values=kept)


def check_compatible(existing: Iterable[ColumnInfo], new: Sequence[ColumnInfo]) -> None:
    """Appended rows (summarised as ``new``) must have exactly the dataset's columns, each of the same kind."""
    existing = list(existing)
    have = {c.name for c in existing}
    kinds = _kinds(new)
    if set(kinds) != have:
        missing, extra = sorted(have - set(kinds)), sorted(set(kinds) - have)
        parts = ([f"missing column(s) {', '.join(missing)}"] if missing else []) + \
                ([f"unknown column(s) {', '.join(extra)}"] if extra else [])
        raise DataError(f"appended rows do not match the dataset's columns: {'; '.join(parts)}")
    for info in existing:
        if kinds[info.name] != info.kind:
            raise DataError(f"column {info.name!r} is {info.kind} in the dataset but {kinds[info.name]} "
                            "in the appended rows")


def covers(old: Sequence[ColumnInfo], new: Sequence[ColumnInfo]) -> bool:
    """Whether rows summarised as ``new`` fit the columns ``old`` and add no range or label to them."""
    if _kinds(new) != _kinds(old):
        return False
    return merge_summaries(old, new) == tuple(old)


def _kinds(infos: Iterable[ColumnInfo]) -> dict[str, str]:
    return {c.name: c.kind for c in infos}


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


def to_bytes(columns: dict[str, np.ndarray]) -> tuple[str, bytes]:
    """The stored format and bytes of clean columns: an Arrow IPC stream, or Parquet for a large batch.

    From plain arrays, not from pandas: the pandas schema metadata that ``Table.from_pandas`` adds
    doubles a small batch's size, and reading back gives the same columns without it.
    """
    table = pa.table({name: pa.array(values) for name, values in columns.items()})
    if table.num_rows <= ARROW_MAX_ROWS:
        sink = pa.BufferOutputStream()
        with ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        return "arrow", sink.getvalue().to_pybytes()
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    return "parquet", buf.getvalue()


@dataclass(frozen=True)
class Batch:
    """Validated rows as their summary and stored bytes, made before a write transaction begins,
    so that the dataset stays locked only for the database work."""

    columns: tuple[ColumnInfo, ...]
    format: str  # "arrow" or "parquet" (see to_bytes)
    data: bytes
    n_rows: int

    @classmethod
    def of(cls, df: pd.DataFrame) -> "Batch":
        return cls.of_valid(validate_frame(df))

    @classmethod
    def of_valid(cls, rows: pd.DataFrame) -> "Batch":
        """The batch of a frame that ``validate_frame`` has just returned: checked once, not again in
        the storage."""
        return cls.of_columns({name: rows[name].to_numpy() for name in rows.columns})

    @classmethod
    def of_columns(cls, columns: dict[str, np.ndarray]) -> "Batch":
        """The batch of arrays that ``clean_columns`` has just returned (the API's JSON parser)."""
        fmt, data = to_bytes(columns)
        return cls(summarize_arrays(columns), fmt, data, len(next(iter(columns.values()))))

    def __len__(self) -> int:
        return self.n_rows

    def to_frame(self) -> pd.DataFrame:
        return from_blobs([self.data], [c.name for c in self.columns])


def from_blobs(blobs: Iterable[bytes], columns: Sequence[str]) -> pd.DataFrame:
    """One frame of stored batches, in order, whichever format each was stored in."""
    tables = [_read_blob(b).select(list(columns)) for b in blobs]
    if not tables:
        return pd.DataFrame({c: [] for c in columns})
    table = pa.concat_tables(tables, promote_options="permissive")
    return table.to_pandas()


def _read_blob(blob: bytes) -> pa.Table:
    # the bytes say what they are: Parquet files begin with their magic, Arrow IPC streams never do
    if blob[:4] == PARQUET_MAGIC:
        return pq.read_table(io.BytesIO(blob))
    return ipc.open_stream(blob).read_all()
