"""A multi-target law built from each target's best line, found in different candidates."""
from agent.expressions import parse_law
from agent.problem import Problem
from agent.search.compose import compose_best_lines
from agent.search.records import Candidate

PROBLEM = Problem(("N",), ("loss", "acc"), axis=("N",))


def candidate(id, lines, target_decades, implausibility=0.0, complexity=10):
    return Candidate(id=id, generation=0, lines=lines, proposer="seed", status="ok", score=-1.0,
                     complexity=complexity,
                     validation={"target_decades": target_decades, "implausibility": implausibility})


GOOD_LOSS = candidate(0, ("loss = a*N**(-b) + c", "acc = d*log(N)"), [-3.0, -0.5])   # best line for loss
GOOD_ACC = candidate(1, ("loss = a*N + c", "acc = 1 - e*N**(-f)"), [-0.2, -2.5])     # best line for acc
WILD = candidate(2, ("loss = a*N**(-b) + c*N", "acc = 1 - e*exp(-f*N)"), [-4.0, -4.0], implausibility=1.0)


def test_each_target_takes_its_best_line_with_constants_renamed_apart():
    composed = compose_best_lines(PROBLEM, [GOOD_LOSS, GOOD_ACC, WILD], complexity_weight=0.004)
    law = parse_law(composed.lines, PROBLEM.inputs, PROBLEM.targets)
    loss, acc = law.expressions
    assert {s.name for s in loss.free_symbols} == {"N", "a0_1", "b1_1", "c2_1"}  # GOOD_LOSS's loss line
    assert {s.name for s in acc.free_symbols} == {"N", "e0_2", "f1_2"}           # GOOD_ACC's acc line
    assert composed.parent_ids == (0, 1)  # the implausible candidate, best on both, gave nothing


def test_one_target_or_a_target_without_a_plausible_line_composes_nothing():
    single = Problem(("N",), ("loss",), axis=("N",))
    assert compose_best_lines(single, [GOOD_LOSS], complexity_weight=0.004) is None
    assert compose_best_lines(PROBLEM, [WILD], complexity_weight=0.004) is None
