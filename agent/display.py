"""How a law is shown to people: its lines as written, as math.

``parse_law`` builds evaluated sympy trees for fitting, which rewrite what was written
(``(N/1.4e9)**(-a)`` becomes ``1400000000**a * N**(-a)``) and cost tens of milliseconds for
canonical forms.  A leaderboard shows dozens of laws per page, so here each line's whitelisted AST
becomes an *unevaluated* sympy tree (no flattening, no simplification: the form as written), with
helper lines substituted, and sympy's presentation printer writes it as MathML.
"""
from __future__ import annotations

import ast
from typing import Sequence

import sympy as sp
from markupsafe import escape

from agent.errors import LawError
from agent.expressions import ALLOWED_FUNCTIONS, _parse_line, _split_lines


def display_expressions(lines: str | Sequence[str]) -> dict[str, sp.Expr]:
    """Every line's name -> its unevaluated expression, helpers substituted as written."""
    defined: dict[str, sp.Expr] = {}
    for lineno, line in enumerate(_split_lines(lines), 1):
        name, tree = _parse_line(line, lineno)
        defined[name] = _unevaluated(tree, defined, lineno)
    return defined


def law_mathml(lines: str | Sequence[str], targets: Sequence[str]) -> str:
    """Presentation MathML of a law's target lines (one row per target)."""
    shown = display_expressions(lines)
    # order="none": terms as the law writes them; sympy's canonical ordering would reorder them
    # and is most of the cost (4.5 ms a law, 0.8 ms without: a leaderboard page shows 25)
    rows = [f"<mrow><mi>{escape(t)}</mi><mo>=</mo>{sp.mathml(shown[t], printer='presentation', order='none')}</mrow>"
            for t in targets if t in shown]
    return '<math display="block">' + '<mspace linebreak="newline"/>'.join(rows) + "</math>"


def _unevaluated(node: ast.AST, defined: dict[str, sp.Expr], lineno: int) -> sp.Expr:
    def walk(n: ast.AST) -> sp.Expr:
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool):
            return sp.Integer(n.value) if isinstance(n.value, int) else sp.Float(repr(n.value), 4)
        if isinstance(n, ast.Name):
            return defined.get(n.id, sp.Symbol(n.id))
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            inner = walk(n.operand)
            return sp.Mul(-1, inner, evaluate=False) if isinstance(n.op, ast.USub) else inner
        if isinstance(n, ast.BinOp):
            a, b = walk(n.left), walk(n.right)
            if isinstance(n.op, ast.Add):
                return sp.Add(a, b, evaluate=False)
            if isinstance(n.op, ast.Sub):
                return sp.Add(a, sp.Mul(-1, b, evaluate=False), evaluate=False)
            if isinstance(n.op, ast.Mult):
                return sp.Mul(a, b, evaluate=False)
            if isinstance(n.op, ast.Div):
                return sp.Mul(a, sp.Pow(b, -1, evaluate=False), evaluate=False)
            if isinstance(n.op, ast.Pow):
                return sp.Pow(a, b, evaluate=False)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ALLOWED_FUNCTIONS \
                and not n.keywords:
            fn = ALLOWED_FUNCTIONS[n.func.id][0]
            return fn(*(walk(a) for a in n.args), evaluate=False)
        raise LawError(f"line {lineno}: {type(n).__name__} cannot be shown")
    return walk(node)
