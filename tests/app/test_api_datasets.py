"""Datasets over HTTP: JSON rows, CSV uploads, summaries, appends, deletes, and bad input named."""
from __future__ import annotations

import json

import pytest

from tests.app.conftest import toy_csv, toy_rows


def test_a_csv_upload_becomes_a_dataset_with_columns_ranges_and_groups(client):
    r = client.post("/datasets", files={"file": ("toy.csv", toy_csv(), "text/csv")},
                    data={"name": "toy", "description": "E + A N^-0.3"})
    assert r.status_code == 201, r.text
    ds = r.json()
    assert (ds["name"], ds["description"], ds["n_rows"]) == ("toy", "E + A N^-0.3", 20)
    columns = {c["name"]: c for c in ds["columns"]}
    assert columns["N"]["kind"] == "number" and columns["N"]["min"] == pytest.approx(1e6)
    assert columns["N"]["max"] == pytest.approx(1e9)
    assert ds["groups"] == {"group": ["a", "b"]}
    assert client.get(f"/datasets/{ds['id']}").json()["n_rows"] == 20


def test_raw_csv_and_json_rows_and_json_columns_are_the_same_dataset(client):
    rows = toy_rows()
    as_csv = client.post("/datasets?name=raw", content=toy_csv(), headers={"content-type": "text/csv"}).json()
    as_rows = client.post("/datasets", json={"name": "rows", "rows": rows.to_dict(orient="records")}).json()
    as_cols = client.post("/datasets", json={"columns": rows.to_dict(orient="list")}).json()
    assert as_csv["name"] == "raw"
    assert as_csv["columns"] == as_rows["columns"] == as_cols["columns"]
    got = client.get(f"/datasets/{as_rows['id']}/rows", params={"limit": 3}).json()
    assert got["total"] == 20 and got["items"][0] == rows.iloc[0].to_dict()


def test_appended_rows_extend_the_dataset(client, dataset_id):
    more = toy_rows(seed=1, sizes=[3e9, 1e10])
    r = client.post(f"/datasets/{dataset_id}/rows", json={"rows": more.to_dict(orient="records")})
    assert r.status_code == 200, r.text
    assert r.json()["n_rows"] == 24 and r.json()["n_batches"] == 2
    assert r.json()["columns"][0]["max"] == pytest.approx(1e10)
    r = client.post(f"/datasets/{dataset_id}/rows", content=toy_csv(seed=2, sizes=[2e10]),
                    headers={"content-type": "text/csv"})
    assert r.json()["n_rows"] == 26


def test_datasets_are_listed_with_paging(client):
    for i in range(3):
        client.post("/datasets", json={"name": f"d{i}", "rows": [{"x": i, "y": 1.0}]})
    page = client.get("/datasets", params={"offset": 1, "limit": 1}).json()
    assert (page["total"], page["offset"], page["limit"]) == (3, 1, 1)
    assert [d["name"] for d in page["items"]] == ["d1"]


def test_a_deleted_dataset_is_gone(client, dataset_id):
    assert client.delete(f"/datasets/{dataset_id}").status_code == 204
    r = client.get(f"/datasets/{dataset_id}")
    assert r.status_code == 404 and r.json()["detail"] == f"dataset {dataset_id} not found"


@pytest.mark.parametrize("body, content_type, message", [
    (b"N,loss\n1,2\n3,4,5\n", "text/csv", "malformed CSV: line 3 has 3 field(s) but the header has 2 (comma-separated)"),
    (b"N,loss\n1,2\n3,nan\n", "text/csv", "column 'loss' has 1 missing or NaN value(s) (first at row 2)"),
    (b"N,loss\n1,2\n3,inf\n", "text/csv", "column 'loss' has 1 infinite value(s) (first at row 2)"),
    (b"N,loss\n1,2\n3,\n", "text/csv", "column 'loss' has 1 missing value(s) (first at row 2)"),
    (b"N,loss\n1,2\nthree,4\n", "text/csv", "column 'N' is not numeric: row 2 has 'three'"),
    (b"N,N\n1,2\n", "text/csv", "the CSV header repeats column(s): N"),
    (b"", "text/csv", "the CSV is empty"),
    (b'{"rows": [{"N": 1, "loss": 2}, {"N": 2}]}', "application/json", "row 2 does not have the columns of row 1: missing loss"),
    (b'{"rows": [{"N": 1, "loss": NaN}]}', "application/json", "column 'loss' has 1 missing or NaN value(s)"),
    (b'{"rows": [{"N": 1, "loss": Infinity}]}', "application/json", "column 'loss' has 1 infinite value(s)"),
    (b'{"rows": [{"N": 1, "loss": true}]}', "application/json", "column 'loss', row 1: expected a number or text, got bool"),
    (b'{"rows": [{"N": 1, "loss": 2}', "application/json", "malformed JSON: Expecting ',' delimiter at line 1 column 30"),
    (b'{"rows": []}', "application/json", "'rows' is empty"),
    (b'{"rows": [1], "columns": {}}', "application/json", "give exactly one of 'rows'"),
    (b'{"columns": {"N": [1, 2], "loss": [1]}}', "application/json", "columns have different lengths (N: 2, loss: 1)"),
    (b'{"rows": [{"N": 1}], "owner": "me"}', "application/json", "unknown field(s) owner"),
    (b"N\n1\n", "application/xml", "unsupported content type 'application/xml'"),
])
def test_bad_uploads_get_a_422_naming_the_problem_and_store_nothing(client, body, content_type, message):
    r = client.post("/datasets", content=body, headers={"content-type": content_type})
    assert r.status_code == 422, r.text
    assert message in r.json()["detail"]
    assert client.get("/datasets").json()["total"] == 0


def test_a_multipart_form_without_a_file_is_explained(client):
    r = client.post("/datasets", data={"name": "x"}, files={"other": ("a.txt", b"x")})
    assert r.status_code == 422 and "'file' field" in r.json()["detail"]


def test_appending_mismatched_rows_is_refused_whole(client, dataset_id):
    r = client.post(f"/datasets/{dataset_id}/rows", json={"rows": [{"N": 1e6, "loss": 3.0}]})
    assert r.status_code == 422 and r.json()["detail"] == (
        "appended rows do not match the dataset's columns: missing column(s) group")
    assert client.get(f"/datasets/{dataset_id}").json()["n_rows"] == 20


def test_payloads_over_the_limit_get_413(client):
    big = json.dumps({"rows": [{"N": float(i), "loss": 1.0} for i in range(5000)]}).encode()
    assert len(big) > 100_000
    r = client.post("/datasets", content=big, headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert "over the limit of 100000 bytes" in r.json()["detail"]

    def chunks():  # no Content-Length: the limit is enforced while reading
        for i in range(0, len(big), 10_000):
            yield big[i:i + 10_000]

    r = client.post("/datasets", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413 and "SLD_MAX_PAYLOAD_BYTES" in r.json()["detail"]
    assert client.get("/datasets").json()["total"] == 0


def test_unknown_dataset_ids_are_404(client):
    for method, path in [("get", "/datasets/99"), ("delete", "/datasets/99"), ("get", "/datasets/99/best-law")]:
        r = getattr(client, method)(path)
        assert r.status_code == 404 and r.json()["detail"] == "dataset 99 not found"
    r = client.post("/datasets/99/rows", json={"rows": [{"x": 1}]})
    assert r.status_code == 404
