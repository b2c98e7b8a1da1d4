"""Request bodies -> validated columns: JSON rows or JSON columns (as arrays), or CSV text (a DataFrame).

Every problem is a DataError that names it (the API answers 422): malformed
CSV or JSON, ragged rows, NaN/inf, mixed or missing values, numbers too large
for a float, JSON nested too deeply, NUL bytes.
"""
from __future__ import annotations

import csv
import io
import json
import math
import re
from typing import Any

import numpy as np
import pandas as pd

from agent.errors import DataError
from agent.storage.frames import clean_columns, validate_frame


def _row_columns(rows: Any, max_rows: int) -> dict[str, list]:
    """``[{"N": 1e6, "loss": 3.1}, ...]`` as ``{name: list of values}``: every row must have the same keys."""
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
    return {k: [row[k] for row in rows] for k in keys}


def _checked_columns(columns: Any, max_rows: int) -> dict[str, list]:
    """``{"N": [...], "loss": [...]}``, the compact form for large uploads, checked for shape."""
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
    return columns


SEPARATORS = {",": "comma", ";": "semicolon", "\t": "tab"}
_DECIMAL_COMMA = re.compile(r"[-+]?\d*,\d+(?:[eE][-+]?\d+)?")


def frame_from_csv(data: bytes, *, max_rows: int) -> pd.DataFrame:
    """A CSV file with a header row; numbers and text (group labels) are told apart per column.

    Fields are separated by commas, semicolons or tabs (whichever the header uses), and every
    row must have exactly the header's fields: a longer row is an error, never a shifted one.
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(f"the CSV is not UTF-8 text (bad byte at position {exc.start})") from None
    if not text.strip():
        raise DataError("the CSV is empty")
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise DataError(f"the CSV holds a NUL byte (line {line}); send plain text")
    sep = _separator(text)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep, skipinitialspace=True, strict=True)
    try:
        header = next((row for row in reader if row), [])
        names = [h.strip() for h in header]
        if any(not n for n in names):
            raise DataError(f"the CSV header has an empty column name (header: {sep.join(header)[:200]})")
        duplicated = sorted({n for n in names if names.count(n) > 1})
        if duplicated:
            raise DataError(f"the CSV header repeats column(s): {', '.join(duplicated)}")
        rows = []
        for row in reader:
            if not row or (len(row) == 1 and not row[0].strip()):
                continue  # a blank line
            if len(row) != len(names):
                raise DataError(f"malformed CSV: line {reader.line_num} has {len(row)} field(s) but the header has "
                                f"{len(names)} ({SEPARATORS[sep]}-separated)")
            rows.append(row)
    except csv.Error as exc:
        raise DataError(f"malformed CSV at line {reader.line_num}: {exc}") from None
    if not rows:
        raise DataError("the CSV has a header but no rows")
    _check_count(len(rows), max_rows)
    df = pd.DataFrame(rows, columns=names, dtype=object)
    _refuse_decimal_commas(df)
    # Cells are read as text so that "nan", "inf" or "1e400" are caught by name, not silently parsed.
    return validate_frame(df.where(df != "", None))


def _separator(text: str) -> str:
    """The separator the header line uses most (a comma when it uses none)."""
    header = text.lstrip().split("\n", 1)[0]
    counts = {sep: header.count(sep) for sep in SEPARATORS}
    best = max(counts, key=lambda sep: (counts[sep], sep == ","))
    return best if counts[best] else ","


def _refuse_decimal_commas(df: pd.DataFrame) -> None:
    """'1,5' is one and a half in many locales and text here: refuse it rather than guess."""
    for name in df.columns:
        cells = df[name]
        commas = cells.str.fullmatch(_DECIMAL_COMMA)
        if commas.any():
            i = int(commas.to_numpy().argmax())
            raise DataError(f"column {name!r} writes numbers with a decimal comma (row {i + 1}: {cells.iloc[i]!r}); "
                            "write a decimal point (1.5) and separate fields with commas, semicolons or tabs")


def columns_from_json_body(body: bytes, *, max_rows: int) -> tuple[dict[str, np.ndarray], dict]:
    """A JSON object with ``rows`` or ``columns`` (plus other fields, returned as they are), as clean
    column arrays (``agent.storage.frames.clean_columns``): no DataFrame is needed to store them."""
    payload = parse_json(body)
    if not isinstance(payload, dict):
        raise DataError("the body must be a JSON object with 'rows' (or 'columns')")
    has_rows, has_columns = "rows" in payload, "columns" in payload
    if has_rows == has_columns:
        raise DataError("give exactly one of 'rows' (a list of objects) or 'columns' (an object of lists)")
    rest = {k: v for k, v in payload.items() if k not in ("rows", "columns")}
    raw = _row_columns(payload["rows"], max_rows) if has_rows else _checked_columns(payload["columns"], max_rows)
    return clean_columns(raw), rest


def parse_json(body: bytes) -> Any:
    if not body.strip():
        raise DataError("the request body is empty; send JSON")
    try:
        return json.loads(body, parse_int=_json_int)
    except UnicodeDecodeError:
        raise DataError("the body is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise DataError("malformed JSON: it is nested too deeply") from None


def _json_int(text: str) -> int | float:
    """Integers as Python reads them, except that long ones become floats (or an error when
    beyond a float's range) instead of big integers that nothing downstream can store."""
    if len(text) <= 18:
        return int(text)
    value = float(text)
    if not math.isfinite(value):
        raise DataError(f"malformed JSON: the integer {text[:12]}... ({len(text.lstrip('-'))} digits) is too large "
                        "for a number (the limit is about 1.8e308)")
    return value


def _check_count(n: int, max_rows: int) -> None:
    if n > max_rows:
        raise DataError(f"{n} rows in one request; the limit is {max_rows} (append the rest in batches)")


def _kind(value: Any) -> str:
    return {list: "a list", dict: "an object", str: "text", type(None): "null"}.get(type(value), type(value).__name__)
