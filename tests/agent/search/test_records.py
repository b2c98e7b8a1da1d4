"""Candidates round-trip through JSON, and candidates stored before they had a kind still read."""
import json

from agent.search.records import FINALIST, SEARCHED, Candidate


def test_a_candidate_round_trips_through_json_with_its_kind():
    finalist = Candidate(id=7, generation=3, lines=("loss = c0*N**(-a0)",), proposer="finalist:log",
                         status="ok", parent_ids=(2,), score=1.5, kind=FINALIST)
    again = Candidate.from_dict(json.loads(json.dumps(finalist.to_dict())))
    assert again == finalist and again.finalist


def test_a_rejected_candidate_keeps_its_minus_infinite_score():
    rejected = Candidate(id=0, generation=0, lines=("loss = ",), proposer="offline", status="rejected",
                         reason="parse: empty")
    again = Candidate.from_dict(json.loads(json.dumps(rejected.to_dict())))
    assert again.score == float("-inf") and again.kind == SEARCHED and not again.finalist


def test_candidates_stored_before_kind_existed_are_finalists_by_their_proposer_name():
    old = {"id": 4, "generation": 2, "lines": ["loss = c0"], "status": "ok", "score": 1.0}
    assert Candidate.from_dict({**old, "proposer": "finalist:huber_log"}).kind == FINALIST
    assert Candidate.from_dict({**old, "proposer": "offline"}).kind == SEARCHED
    assert Candidate.from_dict({**old, "proposer": "llm:qwen"}).kind == SEARCHED
