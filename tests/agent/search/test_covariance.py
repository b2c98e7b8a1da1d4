"""A law's family must not depend on the reference scale sld measures an input against."""
import numpy as np
import pytest

from agent.expressions import parse_law
from agent.problem import Table
from agent.search.covariance import reference_dependent_inputs

RNG = np.random.default_rng(0)
N = np.exp(RNG.uniform(np.log(1e7), np.log(1e9), 40))
D = np.exp(RNG.uniform(np.log(1e9), np.log(1e11), 40))
TABLE = Table({"N": N, "D": D}, np.ones((40, 1)), np.array(["g"] * 40, dtype=object))


def dependent(text, **constants):
    return reference_dependent_inputs(parse_law(text, ("N", "D"), ("loss",)), {"g": constants}, TABLE)


@pytest.mark.parametrize("text, constants", [
    ("loss = c2 + c0*(N/1e8)**(-a0) + c1*(D/1e10)**(-a1)", dict(c0=.5, c1=.7, c2=2, a0=.3, a1=.3)),
    ("loss = c0 + c1*(N/1e8)**(-a0)*(D/1e10)**(-a1)", dict(c0=2, c1=.7, a0=.3, a1=.3)),
    ("loss = c2 + (c0*(N/1e8)**(-a0) + c1*(D/1e10)**(-a1))**e0", dict(c0=.5, c1=.7, c2=2, a0=.3, a1=.3, e0=.8)),
    ("loss = c0 + c1*exp(-k0*(N/1e8)**a0) + c2*(D/1e10)**(-a1)", dict(c0=2, c1=.5, k0=.7, a0=.3, c2=.7, a1=.3)),
    ("loss = c0 + c1/((N/1e8)**a0 + k0) + c2*(D/1e10)**(-a1)", dict(c0=2, c1=.5, k0=.7, a0=.3, c2=.7, a1=.3)),
    ("loss = c0 + b0*log(N/1e8) + c1*log(N/1e8)**2 + c2*(D/1e10)**(-a1)", dict(c0=2, b0=-.1, c1=.05, c2=.7, a1=.3)),
    ("loss = c0 + c1*tanh(k*(log(N/1e8) - m))", dict(c0=2, c1=.5, k=.3, m=.2)),
])
def test_the_fields_forms_absorb_any_reference_in_their_constants(text, constants):
    assert dependent(text, **constants) == ()


@pytest.mark.parametrize("text, constants, inputs", [
    # a term with no coefficient of its own equals exactly 1 at the reference
    ("loss = c2 + c0*(N/1e8)**(-a0) + (D/1e10)**(-a1)", dict(c0=.5, c2=2, a0=.3, a1=.3), ("D",)),
    ("loss = c0 + c1*(N/1e8)**(-a0) + (k2 + D/1e10)**(-a3)", dict(c0=2, c1=.5, k2=.3, a0=.3, a3=.3), ("D",)),
    ("loss = c0 + c1*exp((D/1e10)**(-a0)) + c2*(N/1e8)**(-a2)", dict(c0=2, c1=.5, a0=.3, c2=.7, a2=.3), ("D",)),
    # a parabola in log N with its vertex pinned at the reference
    ("loss = c0 + c1*log(N/1e8)**2 + c2*(D/1e10)**(-a1)", dict(c0=2, c1=.05, c2=.7, a1=.3), ("N",)),
    # a data exponent drifting with log N: the curves' D terms all cross at D's reference
    ("loss = c0 + c1*(N/1e8)**(-a0) + c2*(D/1e10)**(-(a1 + g0*log(N/1e8)))",
     dict(c0=2, c1=.5, c2=.7, a0=.3, a1=.3, g0=.05), ("D",)),
])
def test_a_law_tied_to_where_the_reference_sits_is_named_by_its_input(text, constants, inputs):
    assert dependent(text, **constants) == inputs


def test_nothing_is_judged_where_the_law_cannot_be_evaluated():
    assert dependent("loss = c0 + c1*(N/1e8)**(-a0) + (D/1e10)**(-a1)", c0=2, c1=np.nan, a0=.3, a1=.3) == ()
    assert reference_dependent_inputs(parse_law("loss = c0 + (D/1e10)**(-a1)", ("N", "D"), ("loss",)),
                                      {"other": {"c0": 1.0, "a1": .3}}, TABLE) == ()


def test_every_group_is_judged_for_a_fit_can_hide_the_dependence_in_one():
    """``tanh(N**p)`` is 0.76 at N's reference whatever p is.  Fitted with p = 1.4 it shows that; fitted with
    p = 1300 it is a step over the rows, which no small rescaling moves.  The law is the same law."""
    law = parse_law("loss = c0 + c1*tanh((N/1e8)**p) + c2*(D/1e10)**(-a1)", ("N", "D"), ("loss",))
    table = Table({"N": np.concatenate([N, N]), "D": np.concatenate([D, D])}, np.ones((80, 1)),
                  np.array(["a_shows"] * 40 + ["b_hides"] * 40, dtype=object))
    shows = dict(c0=2.0, c1=-0.05, p=1.4, c2=0.7, a1=0.3)
    hides = dict(c0=2.0, c1=-0.05, p=1300.0, c2=0.7, a1=0.3)
    assert reference_dependent_inputs(law, {"b_hides": hides}, table) == ()
    assert reference_dependent_inputs(law, {"a_shows": shows}, table) == ("N",)
    assert reference_dependent_inputs(law, {"a_shows": shows, "b_hides": hides}, table) == ("N",)


def test_the_expanded_bowls_drift_ties_it_to_the_bowl_inputs_reference_where_the_centred_bowl_is_free():
    """Why the expanded bowl's drift is not a literature form (``library.PRIOR_SHAPES``): ``g*u*log(D)`` without
    ``log(D)`` of its own, so moving ``u``'s reference adds a ``log(D)`` term the form cannot absorb.  The
    literature's centred bowl, whose optimum ``m + g*log(D)`` moves, absorbs both references."""
    expanded = "loss = c1 + c0*(D/1e10)**(-a0) + q0*log(N/1e8)**2 + b0*log(N/1e8) + g0*log(N/1e8)*log(D/1e10)"
    centred = "loss = c1 + c0*(D/1e10)**(-a0) + q0*(log(N/1e8) - m0 - g0*log(D/1e10))**2"
    assert dependent(expanded, c1=2, c0=.5, a0=.3, q0=.05, b0=-.02, g0=.03) == ("N",)
    assert dependent(centred, c1=2, c0=.5, a0=.3, q0=.05, m0=.2, g0=.3) == ()
