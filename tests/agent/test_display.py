"""Laws shown as written: unevaluated sympy trees and their MathML, never an evaluation of the text."""
import pytest

from agent.display import display_expressions, law_mathml
from agent.errors import LawError


def test_a_law_is_shown_as_written_not_as_sympy_rewrites_it():
    shown = display_expressions("loss = E + A*(N/1e8)**(-a)")
    assert "(N/1.0e+8)" in str(shown["loss"])  # parse_law's tree would read 100000000**a*A/N**a


def test_helper_lines_are_substituted_into_the_target():
    shown = display_expressions(["h = log(N/1e8)", "loss = E + A*exp(-b*h)"])
    assert "log" in str(shown["loss"]) and "h" not in {s.name for s in shown["loss"].free_symbols}


def test_mathml_has_one_row_per_target_and_escapes_names():
    math = law_mathml(["loss = E + A/N**a", "acc = 1 - c*N**(-d)"], ["loss", "acc"])
    assert math.startswith('<math display="block">') and math.count("<mi>loss</mi><mo>=</mo>") == 1
    assert "<mi>acc</mi><mo>=</mo>" in math and "<mfrac>" in math


@pytest.mark.parametrize("hostile", ["loss = __import__('os').system('x')", "loss = N.real", "loss = [N]",
                                     "loss = (lambda: 1)()", "loss = N if N else 1"])
def test_anything_outside_the_law_grammar_is_refused(hostile):
    with pytest.raises(LawError):
        display_expressions(hostile)


def test_terms_are_shown_in_the_order_the_law_writes_them():
    shown = law_mathml("loss = E + A/N**a + B/D**b", ["loss"])
    assert shown.index("<mi>E</mi>") < shown.index("<mi>A</mi>") < shown.index("<mi>B</mi>")
