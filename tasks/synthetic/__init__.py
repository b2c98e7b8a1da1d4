"""A development suite whose truth is known: scaling-law problems generated from a seed.

Each problem is data drawn from a law of the literature (additive, pow-sum, drifting
exponents, broken power laws, data repetition, saturating forms, hyperparameter and
vocabulary bowls, mixtures of experts, data mixtures, multi-target laws, an effective
size set by sparsity or precision, a student distilled towards its teacher's loss) over varied
column names, scales, designs and realistic noise, with test rows beyond the training
range.  Nothing is downloaded and no published data set is copied.  The search core never
imports this package; ``sld bench --suite synthetic`` runs it.
"""
from tasks.synthetic.record import Noise, SyntheticProblem
from tasks.synthetic.suite import (
    SUITE_SEED, UnknownProblem, family_names, get_problem, problem_names, problems_in_family, synthetic_suite,
)

__all__ = [
    "Noise", "SUITE_SEED", "SyntheticProblem", "UnknownProblem", "family_names", "get_problem", "problem_names",
    "problems_in_family", "synthetic_suite",
]
