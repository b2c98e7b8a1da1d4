"""Hostile and careless input (issue 17): each is a 4xx naming the problem, nothing is stored,
and the server keeps answering.  Every test runs on SQLite and on PostgreSQL."""
from __future__ import annotations

import pytest

from tests.app.conftest import toy_csv

CSV = {"content-type": "text/csv"}
JSON = {"content-type": "application/json"}


def assert_refused(client, r, message: str, status: int = 422):
    assert r.status_code == status, r.text
    assert message in r.json()["detail"]
    assert client.get("/health").status_code == 200


def no_datasets(client) -> bool:
    return client.get("/datasets").json()["total"] == 0


# ---------------------------------------------------------------- CSV

@pytest.mark.parametrize("body, message", [
    (b"N,loss\n1,2,3\n4,5,6\n", "malformed CSV: line 2 has 3 field(s) but the header has 2 (comma-separated)"),
    (b"N,loss\n1,2\n4,5,6\n", "malformed CSV: line 3 has 3 field(s) but the header has 2"),
    (b"N,g,loss\n1,a\n", "malformed CSV: line 2 has 2 field(s) but the header has 3"),
    (b"N;loss\n1;2;3\n", "line 2 has 3 field(s) but the header has 2 (semicolon-separated)"),
    (b"N;loss\n1,5;2,5\n4,0;5,5\n", "column 'N' writes numbers with a decimal comma (row 1: '1,5')"),
    (b'N,loss\n"1,5",2\n', "column 'N' writes numbers with a decimal comma"),
    (b"N,g,loss\n1,a\x00b,2\n", "the CSV holds a NUL byte (line 2)"),
    (b'N,loss\n"1,2\n', "malformed CSV at line 2"),
])
def test_a_csv_that_does_not_match_its_header_is_refused_never_shifted(client, body, message):
    assert_refused(client, client.post("/datasets", content=body, headers=CSV), message)
    assert no_datasets(client)


@pytest.mark.parametrize("body", [b"N;g;loss\n1e6;a;3.5\n2e6;b;3.25\n", b"N\tg\tloss\n1e6\ta\t3.5\n2e6\tb\t3.25\n"])
def test_semicolon_and_tab_separated_files_are_read_as_such(client, body):
    r = client.post("/datasets", content=body, headers=CSV)
    assert r.status_code == 201, r.text
    assert [c["name"] for c in r.json()["columns"]] == ["N", "g", "loss"]
    rows = client.get(f"/datasets/{r.json()['id']}/rows").json()["items"]
    assert rows == [{"N": 1e6, "g": "a", "loss": 3.5}, {"N": 2e6, "g": "b", "loss": 3.25}]


# ---------------------------------------------------------------- JSON numbers and nesting

@pytest.mark.parametrize("body, message", [
    (b'{"rows": [{"N": 1' + b"0" * 400 + b', "loss": 1}]}', "the integer 100000000000... (401 digits) is too large"),
    (b'{"rows": [{"N": ' + b"7" * 5000 + b', "loss": 1}]}', "(5000 digits) is too large"),
    (b'{"columns": {"N": [-1' + b"0" * 400 + b'], "loss": [1]}}', "(401 digits) is too large"),
    (b"[" * 100_000, "malformed JSON: it is nested too deeply"),
    (b'{"rows": ' + b"[" * 5000 + b"]" * 5000 + b"}", "malformed JSON: it is nested too deeply"),
])
def test_numbers_beyond_a_float_and_deep_nesting_are_named_in_dataset_uploads(client, body, message):
    assert_refused(client, client.post("/datasets", content=body, headers=JSON), message)
    assert no_datasets(client)


@pytest.mark.parametrize("body, message", [
    (b'{"lines": ["loss = a*N"], "constants": {"a": 1}, "points": [{"N": 1' + b"0" * 400 + b"}]}",
     "points.0.N: the integer is too large"),
    (b'{"lines": ["loss = a*N"], "constants": {"a": 1' + b"0" * 400 + b'}, "points": [{"N": 1}]}',
     "constants.a: the integer is too large"),
    (b'{"lines": ["loss = a*N"], "constants": {"a": 1}, "points": [{"N": ' + b"9" * 5000 + b"}]}",
     "malformed JSON: an integer has more than 4300 digits"),
    (b'{"points": ' + b"[" * 90_000, "malformed JSON: it is nested too deeply"),
])
def test_the_same_holds_for_bodies_the_framework_parses(client, body, message):
    assert_refused(client, client.post("/predict", content=body, headers=JSON), message)


def test_a_run_request_with_a_huge_integer_is_refused(client, dataset_id):
    body = b'{"dataset_id": %d, "inputs": ["N"], "targets": ["loss"], "seed": 1%s}' % (dataset_id, b"0" * 400)
    assert_refused(client, client.post("/runs", content=body, headers=JSON), "seed: the integer is too large")
    assert client.get("/runs").json()["total"] == 0


# ---------------------------------------------------------------- laws that would exhaust the parser

@pytest.mark.parametrize("line, message", [
    ("loss = " + " + ".join(f"c{i}" for i in range(500)) + " + N", "nested more than 100 levels deep"),
    ("loss = " + "-" * 500 + "N", "nested more than 100 levels deep"),
])
def test_laws_with_500_constants_or_500_nested_minus_signs_are_refused_by_name(client, line, message):
    constants = {f"c{i}": 1.0 for i in range(500)}
    r = client.post("/predict", json={"lines": [line], "constants": constants, "points": [{"N": 1.0}]})
    assert_refused(client, r, message)


def test_a_law_that_doubles_with_each_helper_line_is_refused_by_predict_and_compare(client, done_run):
    lines = (["h0 = log(N) + a"] + [f"h{i} = exp(h{i - 1}) + log(h{i - 1})" for i in range(1, 13)]
             + ["loss = h12"])
    r = client.post("/predict", json={"lines": lines, "constants": {"a": 1.0}, "points": [{"N": 16.0}]})
    assert_refused(client, r, "the law is too large with its helper lines substituted")
    r = client.post(f"/runs/{done_run['id']}/compare", json={"name": "chain", "lines": lines})
    assert_refused(client, r, "law 'chain': line 10: the law is too large with its helper lines substituted")


# ---------------------------------------------------------------- text PostgreSQL cannot store

@pytest.mark.parametrize("request_kwargs, message", [
    ({"json": {"name": "a\x00b", "rows": [{"N": 1, "loss": 2}]}}, "name: text must not hold a NUL character"),
    ({"json": {"description": "\x00", "rows": [{"N": 1, "loss": 2}]}}, "description: text must not hold a NUL"),
    ({"json": {"rows": [{"N\x00": 1, "loss": 2}]}}, "column name 'N\\x00' holds a NUL character"),
    ({"json": {"rows": [{"N": 1, "g": "a\x00", "loss": 2}]}}, "column 'g', row 1: the text holds a NUL character"),
    ({"files": {"file": ("t.csv", toy_csv(), "text/csv")}, "data": {"name": "x\x00"}},
     "name: text must not hold a NUL character"),
])
def test_nul_characters_are_refused_before_anything_is_stored(client, request_kwargs, message):
    assert_refused(client, client.post("/datasets", **request_kwargs), message)
    assert no_datasets(client)


def test_nul_characters_in_runs_laws_and_paths_are_refused(client, dataset_id):
    r = client.post("/runs", json={"dataset_id": dataset_id, "inputs": ["N"], "targets": ["loss"],
                                   "description": "x\x00"})
    assert_refused(client, r, "description: text must not hold a NUL character")
    r = client.post("/runs", json={"dataset_id": dataset_id, "inputs": ["N"], "targets": ["loss"],
                                   "proposers": [{"kind": "llm", "llm": {"model": "m\x00"}}]})
    assert_refused(client, r, "proposers.0.llm.model: text must not hold a NUL character")
    assert client.get("/runs").json()["total"] == 0
    r = client.post("/predict", json={"lines": ["loss = a*N\x00"], "constants": {"a": 1}, "points": [{"N": 1}]})
    assert_refused(client, r, "lines.0: text must not hold a NUL character")
    r = client.post("/predict", json={"lines": ["loss = a*N"], "constants": {"a": 1},
                                      "points": [{"k" * 50_000: "\x00"}]})
    assert_refused(client, r, "...: text must not hold a NUL character")
    assert len(r.text) < 1000  # the 50,000-character key is not echoed back
    assert_refused(client, client.post("/tasks/sft%00/import"), "String should match pattern")


# ---------------------------------------------------------------- ids beyond their columns

@pytest.mark.parametrize("method, path", [
    ("get", f"/datasets/{2**64}"), ("get", f"/datasets/{2**31}"), ("delete", f"/datasets/{2**63}"),
    ("get", f"/datasets/{2**31}/rows"), ("get", f"/datasets/{2**40}/best-law"),
    ("get", f"/runs/{2**64}"), ("get", f"/runs/{2**31}"), ("post", f"/runs/{2**31}/cancel"),
    ("get", f"/runs/1/candidates/{2**31}"), ("get", f"/runs?dataset_id={2**31}"),
    ("get", f"/runs/1/events?after_id={2**63}"), ("get", f"/datasets?offset={2**64}"),
    ("get", "/runs/-1"),
])
def test_ids_beyond_their_column_type_are_422_not_a_driver_overflow(client, method, path):
    r = getattr(client, method)(path)
    assert_refused(client, r, "Input should be")


def test_ids_in_bodies_are_bounded_too(client):
    r = client.post("/runs", json={"dataset_id": 2**31, "inputs": ["N"], "targets": ["loss"]})
    assert_refused(client, r, "dataset_id: Input should be less than or equal to 2147483647")
    r = client.post("/predict", json={"run_id": 2**63, "points": [{"N": 1}]})
    assert_refused(client, r, "run_id: Input should be less than or equal to 2147483647")
    assert client.get(f"/runs/{2**31 - 1}").status_code == 404  # the largest id is merely unknown


# ---------------------------------------------------------------- lengths as the schema says

@pytest.mark.parametrize("send", ["json", "multipart", "csv"])
def test_names_and_descriptions_are_held_to_the_schema_lengths(client, send):
    for field, limit in (("description", 10_000), ("name", 200)):
        value = "x" * (limit + 1)
        if send == "json":
            r = client.post("/datasets", json={field: value, "rows": [{"N": 1, "loss": 2}]})
        elif send == "multipart":
            r = client.post("/datasets", files={"file": ("t.csv", toy_csv(), "text/csv")}, data={field: value})
        else:
            r = client.post("/datasets", params={field: value}, content=toy_csv(), headers=CSV)
        assert_refused(client, r, f"{field}: String should have at most {limit} characters")
    assert no_datasets(client)
    r = client.post("/datasets", json={"description": "x" * 10_000, "name": "n" * 200, "rows": [{"N": 1, "loss": 2}]})
    assert r.status_code == 201 and len(r.json()["description"]) == 10_000


# ---------------------------------------------------------------- run roles

def test_an_axis_that_is_the_target_is_refused(client, dataset_id):
    r = client.post("/runs", json={"dataset_id": dataset_id, "inputs": ["N"], "targets": ["loss"], "axis": ["loss"]})
    assert_refused(client, r, "axis column(s) loss are targets")
    assert client.get("/runs").json()["total"] == 0


def test_a_run_on_rows_too_large_to_compute_with_is_refused_naming_the_column(client, dataset_id):
    r = client.post(f"/datasets/{dataset_id}/rows", json={"rows": [{"N": 1e308, "group": "a", "loss": 2.0}]})
    assert r.status_code == 200, r.text  # stored as sent: it is data, only no law can be fitted to it
    r = client.post("/runs", json={"dataset_id": dataset_id, "inputs": ["N"], "targets": ["loss"]})
    assert_refused(client, r, "column 'N' holds 1e+308")
    assert client.get("/runs").json()["total"] == 0


@pytest.mark.parametrize("path, body, message", [
    ("/runs", b'{"dataset_id": 1, "inputs": ["N"], "targets": ["loss"], "time_limit": NaN}',
     "time_limit: Input should be a finite number"),
    ("/sweeps", b'{"n_params": [25000], "tokens": [250000], "lrs": [NaN]}', "lrs.0: Input should be a finite number"),
    ("/sweeps", b'{"n_params": [25000], "tokens": [Infinity]}', "tokens.0: Input should be a finite number"),
])
def test_nan_and_infinity_in_a_number_field_are_named_as_such(client, path, body, message):
    """Not by the bound they happen to fail ("lrs.0: Input should be less than 1" for a NaN)."""
    assert_refused(client, client.post(path, content=body, headers=JSON), message)
