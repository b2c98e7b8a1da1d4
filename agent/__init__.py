"""sld's search core: law expressions, fitting, scoring, proposers and the search loop.

This package imports nothing from ``app`` or ``tasks``: it knows no bundled task.
"""
from agent.errors import DataError, FitError, LawError, SldError
from agent.expressions import Law, parse_law
from agent.problem import Problem, Table, make_table
from agent.scoring import Scores, score

__all__ = [
    "DataError", "FitError", "Law", "LawError", "Problem", "Scores", "SldError", "Table",
    "make_table", "parse_law", "score",
]
