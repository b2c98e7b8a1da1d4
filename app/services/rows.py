"""Request bodies -> validated DataFrames: JSON rows, JSON columns, or CSV text.

Every problem is a DataError that names it (the API answers 422): malformed
CSV or JSON, ragged rows, NaN/inf, mixed or missing values.
"""
from __future__ import annotations

import csv
import io
import json
from typing import Any

import pandas as pd

from agent.errors import DataError
from agent.storage.frames import validate_frame


def frame_from_json_rows(rows: Any, *, max_rows: int) -> pd.DataFrame:
    """``[{"N": 1e6, "loss": 3.1}, ...]``: every row must have the same keys."""
    if not isinstance(rows, list):
        raise DataError("'rows' must be a list of objects, one per row")
    if not rows:
        raise DataError("'rows' is empty")
    _check_count(len(rows), max_rows)
    first = rows[0]
    if not isinstance(first, dict):
        raise DataError(f"row 1 is {_kind(first)}, not an object of column: value")
    keys = list(first)
    wanted = set(keys)
    for i, row in enumerate(rows, 1):
        if not isinstance(row, dict):
            raise DataError(f"row {i} is {_kind(row)}, not an object of column: value")
        if row.keys() != wanted:
            missing, extra = sorted(wanted - row.keys()), sorted(row.keys() - wanted)
            what = "; ".join(filter(None, [missing and f"missing {', '.join(missing)}",
                                           extra and f"unexpected {', '.join(extra)}"]))
            raise DataError(f"row {i} does not have the columns of row 1: {what}")
    columns = {k: [row[k] for row in rows] for k in keys}
    return validate_frame(pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in columns.items()}))


def frame_from_json_columns(columns: Any, *, max_rows: int) -> pd.DataFrame:
    """``{"N": [...], "loss": [...]}``: the compact form for large uploads."""
    if not isinstance(columns, dict) or not columns:
        raise DataError("'columns' must be an object of column name: list of values")
    lengths = {}
    for name, values in columns.items():
        if not isinstance(values, list):
            raise DataError(f"column {name!r} must be a list of values, not {_kind(values)}")
        lengths[name] = len(values)
    if len(set(lengths.values())) > 1:
        detail = ", ".join(f"{k}: {v}" for k, v in lengths.items())
        raise DataError(f"columns have different lengths ({detail})")
    _check_count(next(iter(lengths.values())), max_rows)
    return validate_frame(pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in columns.items()}))


def frame_from_csv(data: bytes, *, max_rows: int) -> pd.DataFrame:
    """A CSV file with a header row; numbers and text (group labels) are told apart per column."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(f"the CSV is not UTF-8 text (bad byte at position {exc.start})") from None
    if not text.strip():
        raise DataError("the CSV is empty")
    header = next(csv.reader(io.StringIO(text)), [])
    names = [h.strip() for h in header]
    if any(not n for n in names):
        raise DataError(f"the CSV header has an empty column name (header: {','.join(header)[:200]})")
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise DataError(f"the CSV header repeats column(s): {', '.join(duplicated)}")
    try:
        df = pd.read_csv(io.StringIO(text), skipinitialspace=True, dtype=str, keep_default_na=False,
                         na_values=[""], on_bad_lines="error")
    except pd.errors.ParserError as exc:
        raise DataError(f"malformed CSV: {str(exc).strip().splitlines()[-1]}") from None
    except (pd.errors.EmptyDataError, ValueError) as exc:
        raise DataError(f"malformed CSV: {exc}") from None
    if len(df) == 0:
        raise DataError("the CSV has a header but no rows")
    _check_count(len(df), max_rows)
    df.columns = names
    # Cells are read as text so that "nan", "inf" or "1e400" are caught by name, not silently parsed.
    return validate_frame(df.astype(object).where(df.notna(), None))


def frame_from_json_body(body: bytes, *, max_rows: int) -> tuple[pd.DataFrame, dict]:
    """A JSON object with ``rows`` or ``columns`` (plus other fields, returned as they are)."""
    payload = parse_json(body)
    if not isinstance(payload, dict):
        raise DataError("the body must be a JSON object with 'rows' (or 'columns')")
    has_rows, has_columns = "rows" in payload, "columns" in payload
    if has_rows == has_columns:
        raise DataError("give exactly one of 'rows' (a list of objects) or 'columns' (an object of lists)")
    rest = {k: v for k, v in payload.items() if k not in ("rows", "columns")}
    if has_rows:
        return frame_from_json_rows(payload["rows"], max_rows=max_rows), rest
    return frame_from_json_columns(payload["columns"], max_rows=max_rows), rest


def parse_json(body: bytes) -> Any:
    if not body.strip():
        raise DataError("the request body is empty; send JSON")
    try:
        return json.loads(body)
    except UnicodeDecodeError:
        raise DataError("the body is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None


def _check_count(n: int, max_rows: int) -> None:
    if n > max_rows:
        raise DataError(f"{n} rows in one request; the limit is {max_rows} (append the rest in batches)")


def _kind(value: Any) -> str:
    return {list: "a list", dict: "an object", str: "text", type(None): "null"}.get(type(value), type(value).__name__)
