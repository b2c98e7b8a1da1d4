"""The dashboard's pages through the app's test client: what each page shows, the JSON behind its
plots, errors as pages, escaping of everything a user named, and a bounded number of queries."""
from __future__ import annotations

import re

import pandas as pd
import pytest

from app.worker import Worker
from tests.app.conftest import toy_csv

HOSTILE = "<script>alert(1)</script>"


def test_home_lists_datasets_runs_and_the_bundled_tasks(site):
    client, done_run = site.client, {"id": site.run_id}
    r = client.get("/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert "<title>Home · sld</title>" in r.text
    assert f'href="/ui/runs/{done_run["id"]}"' in r.text and "toy" in r.text
    assert "Import parallel_scaling_law" in r.text  # a bundled task, one click from importing


def test_the_dataset_page_shows_columns_groups_and_the_data_plot(site):
    client, dataset_id = site.client, site.dataset_id
    r = client.get(f"/ui/datasets/{dataset_id}")
    assert r.status_code == 200
    assert "20 rows" in r.text and ">group<" in r.text and "a, b" in r.text
    plot = client.get(f"/ui/api/datasets/{dataset_id}/plot").json()
    assert plot["x_label"] == "N" and plot["y_label"] == "loss" and plot["log_x"]
    assert [s["label"] for s in plot["series"]] == ["a", "b"]
    assert all(len(s["x"]) == 10 for s in plot["series"])
    assert 'data-plot-for="dataset-plot"' in r.text and "The data behind this plot (20 points)" in r.text


def test_a_csv_uploaded_through_the_page_becomes_a_dataset(client):
    r = client.post("/ui/datasets", files={"file": ("sweep.csv", toy_csv(), "text/csv")}, data={"name": "sweep"},
                    follow_redirects=False)
    assert r.status_code == 303
    page = client.get(r.headers["location"])
    assert "<h1>sweep</h1>" in page.text


def test_a_bad_csv_is_refused_on_a_page_that_says_why(client):
    r = client.post("/ui/datasets", files={"file": ("bad.csv", b"N,loss\n1,2,3\n4,5,6\n", "text/csv")})
    assert r.status_code == 422 and r.headers["content-type"].startswith("text/html")
    assert 'role="alert"' in r.text and "field" in r.text.lower()
    assert client.get("/datasets").json()["total"] == 0  # nothing half-written


def test_an_upload_over_the_size_limit_is_refused_on_a_page_naming_the_limit(client):
    big = b"N,loss\n" + b"1000000,2.5\n" * 20_000  # over the test app's 100,000 bytes
    r = client.post("/ui/datasets", files={"file": ("big.csv", big, "text/csv")})
    assert r.status_code == 413 and r.headers["content-type"].startswith("text/html")
    assert "<title>Upload too large - sld</title>" in r.text and "100000 bytes" in r.text
    assert client.post("/datasets", content=big).headers["content-type"] == "application/json"  # the API: JSON
    assert client.get("/datasets").json()["total"] == 0


def test_a_run_started_from_the_form_runs_with_what_was_ticked(client, worker, dataset_id):
    r = client.post(f"/ui/datasets/{dataset_id}/runs", data={
        "inputs": ["N"], "targets": ["loss"], "group": "group", "max_constants": "4", "budget": "12", "seed": "0",
        "loss": "huber_log"}, follow_redirects=False)
    assert r.status_code == 303, r.text
    run_id = int(r.headers["location"].rsplit("/", 1)[1])
    run = client.get(f"/runs/{run_id}").json()
    assert run["spec"]["inputs"] == ["N"] and run["spec"]["group"] == "group" and run["spec"]["max_constants"] == 4
    assert run["spec"]["config"]["final_fit"]["loss"] == "huber_log"
    live = client.get(f"/ui/runs/{run_id}")
    assert "loss huber_log" in live.text
    assert 'hx-trigger="every 2s"' in live.text and "Cancel run" in live.text
    worker.run_once()
    done = client.get(f"/ui/runs/{run_id}/progress")
    assert "hx-trigger" not in done.text and 'data-testid="candidates">12<' in done.text


def test_the_run_form_offers_a_run_column_for_checkpoints_and_queues_it(client, dataset_id):
    page = client.get(f"/ui/datasets/{dataset_id}")
    assert '<select name="run">' in page.text and "none: each row a run" in page.text
    r = client.post(f"/ui/datasets/{dataset_id}/runs", data={"inputs": ["N"], "targets": ["loss"], "run": "group",
                                                              "budget": "5"}, follow_redirects=False)
    assert r.status_code == 303, r.text
    assert client.get(f"/runs/{int(r.headers['location'].rsplit('/', 1)[1])}").json()["spec"]["run"] == "group"


def test_a_form_with_a_bad_value_is_refused_with_the_api_s_words(client, dataset_id):
    r = client.post(f"/ui/datasets/{dataset_id}/runs", data={"inputs": ["N"], "targets": ["loss"], "budget": "-3"})
    assert r.status_code == 422 and "budget" in r.text


def test_the_leaderboard_sorts_pages_and_renders_laws_as_mathml(site):
    client, run_id = site.client, site.run_id
    r = client.get(f"/ui/runs/{run_id}/leaderboard?sort=complexity&order=asc")
    assert r.status_code == 200 and "<math" in r.text and 'aria-sort="ascending"' in r.text
    assert client.get(f"/ui/runs/{run_id}/leaderboard?sort=nonsense").status_code == 422
    pareto = client.get(f"/ui/api/runs/{run_id}/pareto").json()
    front = next(s for s in pareto["series"] if s["label"] == "Pareto front")
    assert front["y"] == sorted(front["y"], reverse=True)  # each step right is strictly better


def test_the_law_page_plots_splits_and_the_curve_ten_times_past_the_data(site):
    client, run_id = site.client, site.run_id
    r = client.get(f"/ui/runs/{run_id}/law")
    assert r.status_code == 200 and "<math" in r.text and "Constants per group" in r.text
    plots = client.get(f"/ui/api/runs/{run_id}/law-plot").json()
    labels = [s["label"] for s in plots["data"]["series"]]
    assert {"a: fit", "a: validation", "a: law", "b: law"} <= set(labels)
    curve = next(s for s in plots["data"]["series"] if s["label"] == "a: law")
    assert max(curve["x"]) == pytest.approx(10 * 1e9) and all(v is not None for v in curve["y"])
    assert len(plots["residuals"]["series"]) == len([s for s in plots["data"]["series"] if s["style"] == "points"])
    low, high = (next(s for s in plots["data"]["series"] if s["label"] == f"a: 90% band, {edge}")
                 for edge in ("low", "high"))
    assert all(lo <= y <= hi for lo, y, hi in zip(low["y"], curve["y"], high["y"]))
    relative = [(hi - lo) / y for lo, y, hi in zip(low["y"], curve["y"], high["y"])]
    assert relative[-1] > 1.5 * min(relative)  # the band widens out past the data
    assert "90 % confidence intervals" in r.text


def test_a_prediction_typed_on_the_law_page(site):
    client, run_id = site.client, site.run_id
    r = client.post(f"/ui/runs/{run_id}/predict", data={"N": "1e10", "group": "a"})
    assert r.status_code == 200 and 'data-testid="prediction"' in r.text
    value = float(re.search(r"loss = ([0-9.e+-]+)", r.text).group(1))
    assert value == pytest.approx(1.8 + 300 * 1e10 ** -0.3, rel=0.05)
    lo, hi = map(float, re.search(r"90 % prediction interval ([0-9.e+-]+) – ([0-9.e+-]+)", r.text).groups())
    assert lo < value < hi  # from the draws the worker stored: no refit in the request
    bad = client.post(f"/ui/runs/{run_id}/predict", data={"N": "lots", "group": "a"})
    assert bad.status_code == 422 and "N must be a number" in bad.text


def test_comparing_with_a_typed_law_queues_it_and_then_shows_both_curves(site):
    client, run_id = site.client, site.run_id
    r = client.post(f"/ui/runs/{run_id}/compare", data={"lines": "loss = E + A*N**(-a)", "name": "textbook"})
    assert r.status_code == 200, r.text
    pending = re.search(r'hx-get="(/ui/runs/\d+/comparisons/\d+)"', r.text).group(1)  # the fragment polls this
    assert "is queued" in r.text and "discovered" not in r.text  # no fitting in the request
    assert 'hx-get="' + pending in client.get(pending).text  # still queued: it polls again
    Worker(site.storage, site.settings, worker_id="web-compare").run_once()
    r = client.get(pending)
    assert r.status_code == 200 and 'hx-get="' not in r.text
    assert "textbook" in r.text and "discovered" in r.text
    assert "a: textbook" in r.text and "a: discovered" in r.text  # both curves in the plot's data


def test_unknown_ids_are_404_pages(site):
    client = site.client
    for path in ("/ui/runs/999", "/ui/datasets/999", "/ui/runs/999/leaderboard", "/ui/runs/999/law"):
        r = client.get(path)
        assert r.status_code == 404 and "<h1>Not found</h1>" in r.text, path
    assert client.get("/ui/api/runs/999/pareto").headers["content-type"] == "application/json"


def test_names_a_user_chose_are_escaped_everywhere(client, worker):
    rows = "N,grp,loss\n" + "".join(f"{n},{g},{e + 300 * n ** -0.3}\n" for g, e in ((HOSTILE, 2), ("plain", 2.2))
                                     for n in (1e6, 3e6, 1e7, 3e7, 1e8, 3e8, 1e9, 3e9))
    r = client.post("/datasets", files={"file": ("x.csv", rows.encode(), "text/csv")}, data={"name": HOSTILE})
    dataset_id = r.json()["id"]
    run = client.post("/runs", json={"dataset_id": dataset_id, "inputs": ["N"], "targets": ["loss"],
                                     "group": "grp", "budget": 8}).json()
    worker.run_once()
    assert client.get(f"/runs/{run['id']}").json()["state"] == "done"
    for path in ("/", f"/ui/datasets/{dataset_id}", f"/ui/runs/{run['id']}", f"/ui/runs/{run['id']}/law",
                 f"/ui/runs/{run['id']}/leaderboard"):
        page = client.get(path)
        assert page.status_code == 200, path
        assert HOSTILE not in page.text, path
    assert "&lt;script&gt;" in client.get(f"/ui/datasets/{dataset_id}").text


def test_static_assets_are_served_with_their_licenses(site):
    client = site.client
    for path in ("/static/vendor/uplot-1.6.32/uPlot.iife.min.js", "/static/vendor/htmx-2.0.11/htmx.min.js",
                 "/static/vendor/uplot-1.6.32/LICENSE", "/static/vendor/htmx-2.0.11/LICENSE", "/static/app.js"):
        assert client.get(path).status_code == 200, path


def count_queries(storage, fn) -> int:
    from sqlalchemy import event

    seen = []

    def on_execute(*args):
        seen.append(1)

    event.listen(storage.engine, "before_cursor_execute", on_execute)
    try:
        fn()
    finally:
        event.remove(storage.engine, "before_cursor_execute", on_execute)
    return len(seen)


def test_the_queries_a_page_makes_do_not_grow_with_the_number_of_candidates(site):
    from tests.app.web.conftest import grown_copy

    small, large = grown_copy(site, 30), grown_copy(site, 3_000)
    for page in ("", "/progress", "/leaderboard", "/leaderboard?sort=complexity&offset=50", "/law", "/compare"):
        counts = [count_queries(site.storage, lambda: site.client.get(f"/ui/runs/{run}{page}").raise_for_status())
                  for run in (small, large)]
        assert counts[0] == counts[1], (page, counts)


def test_with_tokens_pages_need_a_sign_in_and_then_keep_the_token_s_scope(client, storage, dataset_id):
    from app.core.auth import issue_token

    _, secret = issue_token(storage, "viewer", scope="read")
    locked = client.get("/")
    assert locked.status_code == 401 and 'href="/ui/sign-in"' in locked.text
    assert client.post("/ui/sign-in", data={"token": "wrong"}).status_code == 401
    signed = client.post("/ui/sign-in", data={"token": secret}, follow_redirects=False)
    assert signed.status_code == 303
    cookie = signed.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    assert client.get(f"/ui/datasets/{dataset_id}").status_code == 200  # the cookie rides along
    refused = client.post(f"/ui/datasets/{dataset_id}/runs", data={"inputs": ["N"], "targets": ["loss"]})
    assert refused.status_code == 403 and "scope read" in refused.text  # a read token cannot start runs
    client.post("/ui/sign-out")
    assert client.get("/").status_code == 401


def test_a_sweep_shows_on_the_home_page_and_its_page_follows_its_points(client, storage):
    sweep = client.post("/sweeps", json={"name": HOSTILE, "n_params": [25e3, 85e3], "tokens": [2.5e5]}).json()
    home = client.get("/")
    assert f'href="/ui/sweeps/{sweep["id"]}"' in home.text and HOSTILE not in home.text  # escaped
    page = client.get(f"/ui/sweeps/{sweep['id']}")
    assert page.status_code == 200 and 'hx-get="/ui/sweeps/%d/points"' % sweep["id"] in page.text
    assert 'data-testid="count-queued">2<' in page.text and "after the first run" in page.text
    point = storage.claim_sweep_point("t", stale_after=60)
    storage.finish_sweep_point(point.id, "t", pd.DataFrame([{"N": 21216, "val_loss": 2.7036, "seconds": 2.4,
                                                            "tokens_per_s": 1e5}]))
    fragment = client.get(f"/ui/sweeps/{sweep['id']}/points").text
    assert "2.7036" in fragment and 'data-testid="count-done">1<' in fragment
    assert "dataset " in fragment and "/ui/datasets/" in fragment
    assert client.get("/ui/sweeps/999").status_code == 404


def test_a_law_over_size_and_data_answers_allocation_and_next_runs_on_its_page(site):
    """The law page's two answer forms, on an N x D sweep: N*(C) with its interval and IsoFLOP check,
    and candidate runs ranked for a target, each through the API's own request model."""
    import io

    import numpy as np
    import pandas as pd

    from app.worker import Worker

    client = site.client
    n, d = np.meshgrid(np.geomspace(1e7, 1e9, 5), np.geomspace(1e9, 1e11, 5))
    df = pd.DataFrame({"N": n.ravel(), "D": d.ravel()})
    df["loss"] = (1.7 + 400 / df.N ** 0.34 + 410 / df.D ** 0.28) * np.exp(np.random.default_rng(0).normal(0, 0.003, 25))
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    up = client.post("/datasets", files={"file": ("nd.csv", buf.getvalue().encode(), "text/csv")}, data={"name": "nd"})
    run = client.post("/runs", json={"dataset_id": up.json()["id"], "inputs": ["N", "D"], "targets": ["loss"],
                                     "axis": ["N"], "budget": 16}).json()
    Worker(site.storage, site.settings, worker_id="web-answers").run_once()
    page = client.get(f"/ui/runs/{run['id']}/law").text
    assert "Compute-optimal allocation" in page and "Which run to do next" in page
    r = client.post(f"/ui/runs/{run['id']}/optimal", data={"size": "N", "data": "D", "budgets": "1e20,1e22",
                                                            "size_range": "1e6,1e13"})
    assert r.status_code == 200 and 'data-testid="allocations"' in r.text, r.text
    assert 'data-plot-for="allocation-plot"' in r.text and 'data-plot-for="isoflop-plot"' in r.text
    assert r.text.count("<tr>") >= 3 and "–" in r.text  # a row per budget, each with its interval
    assert 'data-testid="optimal-warning"' in r.text and "not along D" in r.text  # searched along N alone
    bad = client.post(f"/ui/runs/{run['id']}/optimal", data={"size": "N", "data": "D", "budgets": "lots",
                                                              "size_range": "1e6,1e13"})
    assert bad.status_code == 422 and "budgets must be a number" in bad.text
    r = client.post(f"/ui/runs/{run['id']}/suggest", data={
        "candidates": "N,D\n2e9,2e11\n3e7,3e9\n", "target": "N=1e10,D=1e12"})
    assert r.status_code == 200 and 'data-testid="suggestions"' in r.text, r.text
    assert r.text.count("<li>") == 2 and "narrows" in r.text
    bad = client.post(f"/ui/runs/{run['id']}/suggest", data={"candidates": "N,D\n2e9,2e11\n", "target": "N=big"})
    assert bad.status_code == 422 and "N must be a number" in bad.text


def test_a_run_suggested_for_a_law_fitted_on_a_sweep_is_queued_in_that_sweep_from_the_page(site):
    """Which run to do next, acted on: a law fitted on a training sweep's rows offers each suggestion to
    the sweep's trainers, and the button queues it there as the sweep's own points are planned."""
    import numpy as np
    import pandas as pd

    from app.worker import Worker
    from trainer.shapes import ModelShape

    client, storage = site.client, site.storage
    sweep = client.post("/sweeps", json={"name": "to-extend", "n_params": [25e3, 85e3, 2e5],
                                         "tokens": [2.5e5, 5e5, 1e6]}).json()
    noise = np.random.default_rng(1).normal(0, 0.003, 9)
    for i in range(9):
        point = storage.claim_sweep_point("t", stale_after=60)
        n = ModelShape(point.spec["d_model"], point.spec["n_layers"], point.spec["context"]).non_embedding_params
        d = point.spec["tokens"]
        loss = (1.5 + 30 / n ** 0.3 + 40 / d ** 0.3) * np.exp(noise[i])
        storage.finish_sweep_point(point.id, "t", pd.DataFrame([{"N": n, "D": d, "val_loss": loss}]))
    dataset_id = client.get(f"/sweeps/{sweep['id']}").json()["dataset_id"]
    run = client.post("/runs", json={"dataset_id": dataset_id, "inputs": ["N", "D"], "targets": ["val_loss"],
                                     "axis": ["N"], "budget": 16}).json()
    Worker(storage, site.settings, worker_id="web-sweep-next").run_once()
    ranked = client.post(f"/ui/runs/{run['id']}/suggest", data={
        "candidates": "N,D\n4e5,2e6\n1e5,4e6\n", "target": "N=2e6,D=2e7"})
    assert ranked.status_code == 200, ranked.text
    assert ranked.text.count(f'hx-post="/ui/sweeps/{sweep["id"]}/points"') == 2  # one button per suggestion
    queued = client.post(f"/ui/sweeps/{sweep['id']}/points", data={"n_params": "4e5", "tokens": "2e6"})
    assert queued.status_code == 200 and 'data-testid="queued"' in queued.text, queued.text
    after = client.get(f"/sweeps/{sweep['id']}").json()
    assert after["n_points"] == 10 and after["counts"]["queued"] == 1
    assert after["points"][-1]["spec"]["tokens"] == 2_000_000
    bad = client.post(f"/ui/sweeps/{sweep['id']}/points", data={"n_params": "1", "tokens": "2e6"})
    assert bad.status_code == 422 and "n_params" in bad.text
    elsewhere = client.post(f"/ui/runs/{site.run_id}/suggest", data={"candidates": "N\n1e9\n", "target": "N=1e10"})
    assert elsewhere.status_code in (200, 422) and "Queue in sweep" not in elsewhere.text  # not a sweep's law
