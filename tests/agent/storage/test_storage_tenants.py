"""Tenants: a tenant's view of the storage creates that tenant's datasets and runs and finds no other's;
API tokens are kept as the hash of their secret."""
from __future__ import annotations

import hashlib

import pytest
from sqlalchemy import text

from agent.search.records import Candidate
from agent.storage import Checkpoint, ConflictError, NotFoundError, RunState
from tests.agent.storage.test_storage_datasets import frame


def test_a_tenants_view_creates_its_own_rows_and_lists_no_one_elses(storage):
    alice, bob = storage.for_tenant("alice"), storage.for_tenant("bob")
    local = storage.create_dataset(frame(), name="local")
    mine = alice.create_dataset(frame(), name="alice's")
    theirs = bob.create_dataset(frame(), name="bob's")
    run = alice.create_run(mine.id, {"budget": 3})
    bob.create_run(theirs.id, {"budget": 3})
    assert (local.tenant, mine.tenant, run.tenant) == (None, "alice", "alice")
    assert [d.name for d in alice.list_datasets().items] == ["alice's"]
    assert [r.id for r in alice.list_runs().items] == [run.id]
    assert alice.list_runs(dataset_id=theirs.id).total == 0
    assert [d.name for d in storage.for_tenant(None).list_datasets().items] == ["local"]
    assert storage.list_datasets().total == 3  # the storage itself (workers, the CLI) sees every tenant


def test_another_tenants_ids_are_not_found_by_any_verb_and_nothing_changes(storage):
    alice, bob = storage.for_tenant("alice"), storage.for_tenant("bob")
    ds = alice.create_dataset(frame())
    run = alice.create_run(ds.id, {"budget": 3})
    storage.claim_run("w", stale_after=30)
    storage.save_generation(run.id, "w", candidates=[Candidate(id=0, generation=0, lines=("loss = a",),
                                                               proposer="seed", status="ok", score=0.5)],
                            checkpoint=Checkpoint(run.id, 0, {"g": 0}), progress={}, best_score=0.5)
    storage.finish_run(run.id, "w", RunState.DONE, final={"law": ["loss = a"]}, best_score=0.5)
    bob_calls = [
        lambda: bob.get_dataset(ds.id), lambda: bob.load_rows(ds.id), lambda: bob.append_rows(ds.id, frame()),
        lambda: bob.delete_dataset(ds.id), lambda: bob.create_run(ds.id, {}), lambda: bob.find_task_spec(ds.id),
        lambda: bob.save_task_spec("t", dataset_id=ds.id, problem={}),
        lambda: bob.get_run(run.id), lambda: bob.request_cancel(run.id), lambda: bob.list_events(run.id),
        lambda: bob.add_events(run.id, [{"kind": "x"}]), lambda: bob.list_candidates(run.id),
        lambda: bob.get_candidates(run.id, [0]), lambda: bob.get_candidate(run.id, 0),
        lambda: bob.load_checkpoint(run.id),
    ]
    for call in bob_calls:
        with pytest.raises(NotFoundError, match="not found"):
            call()
    assert bob.best_run(ds.id) is None
    assert alice.best_run(ds.id).id == run.id
    assert alice.get_dataset(ds.id).n_rows == len(frame()) and alice.get_candidate(run.id, 0).id == 0
    assert [e.kind for e in alice.list_events(run.id)][-1] == "done"


def test_task_names_are_unique_within_a_tenant_not_across_tenants(storage):
    alice, bob = storage.for_tenant("alice"), storage.for_tenant("bob")
    problem = {"inputs": ["N"], "targets": ["loss"]}
    a = alice.create_dataset(frame(), task={"name": "toy", "problem": problem})
    b = bob.create_dataset(frame(), task={"name": "toy", "problem": problem})
    assert alice.get_task_spec("toy").dataset_id == a.id and bob.get_task_spec("toy").dataset_id == b.id
    assert [t.dataset_id for t in alice.list_task_specs()] == [a.id]
    with pytest.raises(NotFoundError, match="task 'toy' not found"):
        storage.get_task_spec("toy")  # the storage itself names the local tenant's tasks
    alice.save_task_spec("toy", dataset_id=a.id, problem={**problem, "max_constants": 2})
    assert alice.get_task_spec("toy").problem["max_constants"] == 2
    assert "max_constants" not in bob.get_task_spec("toy").problem


def test_a_token_is_stored_as_the_hash_of_its_secret_and_revoked_by_name(storage):
    secret = "sld_not-stored-anywhere"
    digest = hashlib.sha256(secret.encode()).hexdigest()
    assert not storage.has_tokens()
    token = storage.create_token("ci", scope="write", tenant="team-a", secret_hash=digest)
    assert (token.name, token.scope, token.tenant, token.active) == ("ci", "write", "team-a", True)
    assert storage.has_tokens() and storage.find_token(digest) == token
    with storage.engine.connect() as conn:
        stored = [str(v) for row in conn.execute(text("SELECT * FROM api_tokens")) for v in row]
    assert digest in stored and not any(secret in v for v in stored)
    with pytest.raises(ConflictError, match="already named 'ci'"):
        storage.create_token("ci", scope="read", tenant=None, secret_hash="0" * 64)
    revoked = storage.revoke_token("ci")
    assert revoked.revoked_at is not None and storage.find_token(digest) is None and not storage.has_tokens()
    with pytest.raises(NotFoundError, match="no active token named 'ci'"):
        storage.revoke_token("ci")
    storage.create_token("ci", scope="admin", tenant=None, secret_hash="1" * 64)  # the name is free again
    assert [(t.name, t.active) for t in storage.list_tokens()] == [("ci", False), ("ci", True)]
