"""Schema-driven fuzzing of the whole OpenAPI (schemathesis): whatever a client sends, no 5xx.

Every operation gets a bounded number of generated requests, valid ones and
ones the schema forbids, against the app on SQLite and on PostgreSQL with a
dataset already stored.  Examples are derandomized, so a failure repeats.
"""
from __future__ import annotations

import pytest

schemathesis = pytest.importorskip("schemathesis", reason="the fuzz test needs schemathesis (extra: test)")
from hypothesis import HealthCheck, given, settings  # noqa: E402  (hypothesis comes with schemathesis)
from hypothesis.errors import Unsatisfiable  # noqa: E402
from schemathesis import GenerationMode  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402

from tests.app.conftest import toy_csv  # noqa: E402

EXAMPLES_PER_OPERATION = 25


@pytest.mark.slow
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=["valid", "invalid"])
def test_no_request_the_schema_allows_or_forbids_gets_a_server_error(client, mode):
    r = client.post("/datasets", files={"file": ("toy.csv", toy_csv(), "text/csv")}, data={"name": "toy"})
    assert r.status_code == 201, r.text
    schema = schemathesis.openapi.from_asgi("/openapi.json", client.app)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 15
    failures = []
    for operation in operations:
        @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy(generation_mode=mode))
        def fuzz(case):
            case.call_and_validate(checks=[not_a_server_error])

        try:
            fuzz()
        except Unsatisfiable:  # no parameters to make invalid (GET /health)
            assert mode is GenerationMode.NEGATIVE
        except Exception as exc:  # noqa: BLE001 - collect every operation's failure, then report them all
            failures.append(f"{operation.method.upper()} {operation.path}: {str(exc).strip()[:600]}")
    assert not failures, "\n\n".join(failures)
    assert client.get("/health").status_code == 200
