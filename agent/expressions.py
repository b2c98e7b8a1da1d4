"""Law expressions: untrusted text -> whitelisted AST -> sympy -> vectorized numpy.

A law is one or more lines ``name = expression``.  Earlier lines may define
helper names; every target column must be defined exactly once.  Names that
are neither inputs nor defined names are the law's fitted constants.

The text is never evaluated: it is parsed with :mod:`ast`, every node is
checked against a whitelist, and the sympy tree is built node by node.
"""
from __future__ import annotations

import ast
import functools
import keyword
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Mapping, Sequence

import numpy as np
import sympy as sp
from sympy.printing.latex import LatexPrinter

from agent.errors import LawError

MAX_TEXT_CHARS = 4000
MAX_LINES = 24
MAX_AST_NODES = 600
MAX_SYNTAX_DEPTH = 100  # nesting of one line as written; bounds the parser's own recursion
# The law after helper lines are substituted: a chain of helpers that each use the one before
# twice doubles it per line, and every later step (printing, compiling, derivatives) walks it.
MAX_LAW_NODES = 2000
MAX_LAW_DEPTH = 60
MAX_LITERAL_ABS = 1e100  # FLOPs reach 1e26 and laws write reference scales such as (C/1.7e+19)
MAX_LITERAL_EXPONENT = 16.0

ALLOWED_FUNCTIONS: dict[str, tuple[object, int, int]] = {
    # name -> (sympy constructor, min arity, max arity)
    "exp": (sp.exp, 1, 1),
    "log": (sp.log, 1, 1),
    "sqrt": (sp.sqrt, 1, 1),
    "abs": (sp.Abs, 1, 1),
    "tanh": (sp.tanh, 1, 1),
    "min": (sp.Min, 2, 8),
    "max": (sp.Max, 2, 8),
}
_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def _min(*args):
    return functools.reduce(np.minimum, args)


def _max(*args):
    return functools.reduce(np.maximum, args)


def _lambdify(names: Sequence[str], expr):
    """The one place sympy becomes numpy: every function of ``ALLOWED_FUNCTIONS`` has its numpy twin."""
    return sp.lambdify([sp.Symbol(n) for n in names], expr, modules=_NUMPY_MODULES, cse=True)


_NUMPY_MODULES = [{"Min": _min, "Max": _max, "Abs": np.abs}, "numpy"]


@dataclass(frozen=True)
class Law:
    """A parsed, validated law.  Immutable; cheap to pickle (compiled lazily)."""

    lines: tuple[str, ...]
    inputs: tuple[str, ...]
    targets: tuple[str, ...]
    constants: tuple[str, ...]
    expressions: tuple[sp.Expr, ...] = field(repr=False, compare=False)
    complexity: int = 0
    canonical: str = ""

    @property
    def n_constants(self) -> int:
        return len(self.constants)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def sympy(self) -> dict[str, sp.Expr]:
        return dict(zip(self.targets, self.expressions))

    def latex(self) -> str:
        printer = _LatexPrinter()
        return r" \\ ".join(
            f"{sp.latex(sp.Symbol(t))} = {printer.doprint(e)}" for t, e in zip(self.targets, self.expressions)
        )

    def depends_on(self, target: str) -> tuple[str, ...]:
        """Constants that appear in one target's expression, in law order."""
        free = {s.name for s in self.expressions[self.targets.index(target)].free_symbols}
        return tuple(c for c in self.constants if c in free)

    # -- the compiled law: what fitting, probing and prediction call (compiled once, lazily) --------
    def predictor(self, target: int):
        """``f(*inputs, *constants)`` -> the prediction of target ``target`` (an index), vectorised
        over rows; arguments in the order of ``inputs`` then ``constants``."""
        return self._compiled[target]

    def jacobian(self, target: int):
        """``g(*inputs, *constants)`` -> d(prediction)/d(constant) for every constant, in order."""
        return self._gradients[target]

    def basis(self, target: int, linear: Sequence[str], nonlinear: Sequence[str]):
        """For a prediction affine in the ``linear`` constants: ``b(*inputs, *nonlinear)`` -> the terms
        [g0, d/dc1, ..., d/dck], so that prediction = g0 + sum c_i * term_i (variable projection)."""
        expr = self.expressions[target]
        lin = [sp.Symbol(c) for c in linear]
        terms = [expr.xreplace({c: 0 for c in lin}), *(sp.diff(expr, c) for c in lin)]
        return _lambdify([*self.inputs, *nonlinear], terms)

    @functools.cached_property
    def _compiled(self):
        names = [*self.inputs, *self.constants]
        return [_lambdify(names, e) for e in self.expressions]

    @functools.cached_property
    def _gradients(self):
        names = [*self.inputs, *self.constants]
        consts = [sp.Symbol(c) for c in self.constants]
        return [_lambdify(names, [sp.diff(e, c) for c in consts]) for e in self.expressions]

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_compiled", None)
        state.pop("_gradients", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    def evaluate(self, X: Mapping[str, np.ndarray], constants: Mapping[str, object]) -> np.ndarray:
        """Predict every row at once: shape (n_rows, n_targets).

        ``constants`` maps each constant name to a scalar or to an array with
        one value per row, so rows of different groups evaluate in one call.
        Non-finite results are returned as they are; callers decide.
        """
        cols = [np.asarray(X[name], dtype=float) for name in self.inputs]
        n = len(cols[0]) if cols else len(np.atleast_1d(next(iter(constants.values()), [0.0])))
        try:
            args = [*cols, *(np.asarray(constants[c], dtype=float) for c in self.constants)]
        except KeyError as exc:
            raise LawError(f"no value for constant {exc.args[0]!r}") from None
        out = np.empty((n, len(self.targets)))
        with np.errstate(all="ignore"):
            for j in range(len(self.targets)):
                fn = self.predictor(j)
                out[:, j] = np.broadcast_to(np.asarray(fn(*args), dtype=float), (n,))
        return out


def parse_law(
    text: str | Sequence[str],
    inputs: Sequence[str],
    targets: Sequence[str],
    *,
    max_constants: int | None = None,
) -> Law:
    """Parse and validate law text.  Raises :class:`LawError` naming the reason."""
    lines = _split_lines(text)
    inputs, targets = tuple(inputs), tuple(targets)
    defined: dict[str, sp.Expr] = {}
    constants: list[str] = []
    node_budget = [MAX_AST_NODES]
    sizes: dict[sp.Basic, tuple[int, int]] = {}  # (nodes, depth) of every sub-expression built so far
    for lineno, line in enumerate(lines, 1):
        name, tree = _parse_line(line, lineno)
        if name in inputs:
            raise LawError(f"line {lineno}: cannot assign to input column {name!r}")
        if name in defined:
            raise LawError(f"line {lineno}: {name!r} is defined twice")
        builder = _Builder(inputs, defined, constants, targets, node_budget, lineno, sizes)
        defined[name] = builder.build(tree)
    missing = [t for t in targets if t not in defined]
    if missing:
        raise LawError(f"no line defines target column(s) {', '.join(missing)}")
    used = set().union(*(defined[t].free_symbols for t in targets))
    constants = [c for c in constants if sp.Symbol(c) in used]
    if max_constants is not None and len(constants) > max_constants:
        raise LawError(f"law has {len(constants)} constants, more than the cap of {max_constants}")
    expressions = tuple(defined[t] for t in targets)
    for t, e in zip(targets, expressions):
        if not e.free_symbols & {sp.Symbol(i) for i in inputs}:
            raise LawError(f"the expression for {t!r} uses no input column")
    complexity = sum(_count_nodes(e) for e in expressions)
    return Law(
        lines=tuple(lines),
        inputs=inputs,
        targets=targets,
        constants=tuple(constants),
        expressions=expressions,
        complexity=complexity,
        canonical=canonical_form(expressions, constants),
    )


def canonical_form(expressions: Sequence[sp.Expr], constants: Sequence[str]) -> str:
    """A string equal for laws that differ only in constant names or term order.

    Constants are numbered in the order of a walk that visits each node's
    arguments sorted by a key blind to constant names, so the numbering does
    not depend on what the constants were called.
    """
    consts = {sp.Symbol(c) for c in constants}
    blind = {c: sp.Symbol("_c") for c in consts}
    order: list[sp.Symbol] = []

    def walk(e):
        if e in consts:
            if e not in order:
                order.append(e)
            return
        for a in sorted(e.args, key=lambda a: sp.default_sort_key(a.xreplace(blind))):
            walk(a)

    for e in expressions:
        walk(e)
    mapping = {c: sp.Symbol(f"_k{i}") for i, c in enumerate(order)}
    return "; ".join(str(e.xreplace(mapping)) for e in expressions)


def _count_nodes(expr: sp.Expr) -> int:
    return 1 + sum(_count_nodes(a) for a in expr.args)


def _split_lines(text: str | Sequence[str]) -> list[str]:
    if isinstance(text, str):
        raw = text.replace(";", "\n").splitlines()
    elif isinstance(text, Sequence) and all(isinstance(t, str) for t in text):
        raw = [piece for t in text for piece in t.replace(";", "\n").splitlines()]
    else:
        raise LawError("a law must be a string or a list of strings")
    total = sum(len(r) for r in raw)
    if total > MAX_TEXT_CHARS:
        raise LawError(f"law text is {total} characters, more than the limit of {MAX_TEXT_CHARS}")
    lines = [r.strip() for r in raw if r.strip() and not r.strip().startswith("#")]
    if not lines:
        raise LawError("law is empty")
    if len(lines) > MAX_LINES:
        raise LawError(f"law has {len(lines)} lines, more than the limit of {MAX_LINES}")
    return lines


def _parse_line(line: str, lineno: int) -> tuple[str, ast.AST]:
    if "=" not in line:
        raise LawError(f"line {lineno}: expected 'name = expression'")
    try:
        module = ast.parse(line, mode="exec")
    except SyntaxError as exc:
        raise LawError(f"line {lineno}: syntax error: {exc.msg}") from None
    except (RecursionError, MemoryError, ValueError):
        raise LawError(f"line {lineno}: expression is nested too deeply") from None
    if len(module.body) != 1 or not isinstance(module.body[0], ast.Assign):
        raise LawError(f"line {lineno}: expected 'name = expression'")
    stmt = module.body[0]
    if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
        raise LawError(f"line {lineno}: the left side must be a single name")
    name = stmt.targets[0].id
    _check_name(name, lineno)
    return name, stmt.value


def _check_name(name: str, lineno: int) -> None:
    if not _NAME_RE.match(name) or keyword.iskeyword(name):
        raise LawError(f"line {lineno}: {name!r} is not an allowed name")
    if name in ALLOWED_FUNCTIONS:
        raise LawError(f"line {lineno}: {name!r} is a function, not a name")


class _Builder:
    """Walks one whitelisted expression AST and builds the sympy tree."""

    def __init__(self, inputs, defined, constants, targets, node_budget, lineno, sizes):
        self.numbers: dict[ast.AST, float] = {}
        self.inputs, self.defined, self.constants = inputs, defined, constants
        self.targets, self.budget, self.lineno = targets, node_budget, lineno
        self.sizes, self.depth = sizes, 0

    def fail(self, reason: str):
        raise LawError(f"line {self.lineno}: {reason}")

    def build(self, node: ast.AST) -> sp.Expr:
        return self.visit(node)

    def visit(self, node: ast.AST) -> sp.Expr:
        """Build one node; a purely numeric subtree is checked with float math
        first, because sympy would happily try to evaluate exp(exp(exp(100)))."""
        self.budget[0] -= 1
        if self.budget[0] < 0:
            self.fail(f"law is too large (more than {MAX_AST_NODES} syntax nodes)")
        method = getattr(self, f"visit_{type(node).__name__}", None)
        if method is None:
            self.fail(f"{_describe(node)} is not allowed")
        self.depth += 1
        if self.depth > MAX_SYNTAX_DEPTH:
            self.fail(f"the expression is nested more than {MAX_SYNTAX_DEPTH} levels deep "
                      "(each operator of a chain such as a + b + c counts as a level)")
        expr = method(node)
        self.depth -= 1
        self._check_size(expr)
        self._last = expr
        if expr.is_number:
            value = self.numbers.get(node)
            if value is None:
                value = self._float_value(node)
            self.numbers[node] = value
        return expr

    def _check_size(self, expr: sp.Basic) -> None:
        """Nodes and depth of ``expr`` with helper lines substituted, from its parts' known sizes,
        so that a law that doubles with each line is stopped before it becomes expensive."""
        stack = [expr]
        while stack:  # iterative: only the few nodes sympy just built are new
            e = stack[-1]
            if e in self.sizes:
                stack.pop()
                continue
            todo = [a for a in e.args if a not in self.sizes]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            parts = [self.sizes[a] for a in e.args]
            self.sizes[e] = (1 + sum(n for n, _ in parts), 1 + max((d for _, d in parts), default=0))
        nodes, depth = self.sizes[expr]
        if nodes > MAX_LAW_NODES:
            self.fail(f"the law is too large with its helper lines substituted (more than {MAX_LAW_NODES} "
                      "nodes); write it with fewer nested uses of helper names")
        if depth > MAX_LAW_DEPTH:
            self.fail(f"the law is nested more than {MAX_LAW_DEPTH} levels deep with its helper lines substituted")

    def _float_value(self, node: ast.AST) -> float:
        """Float value of a numeric subtree, computed from its children's values."""
        children = [c for c in ast.iter_child_nodes(node) if not isinstance(c, (ast.operator, ast.unaryop))]
        if isinstance(node, ast.Call):
            children = list(node.args)
        if any(c not in self.numbers for c in children):
            # sympy folded a symbolic subtree to a number (a*0, x - x): value it directly
            return float(sp.N(self._last, 15)) if self._last.is_finite else float("nan")
        kids = [self.numbers[c] for c in children]
        try:
            with np.errstate(all="raise"):
                if isinstance(node, ast.Constant):
                    value = float(node.value)
                elif isinstance(node, ast.UnaryOp):
                    value = -kids[0] if isinstance(node.op, ast.USub) else kids[0]
                elif isinstance(node, ast.BinOp):
                    a, b = kids
                    value = {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}.get(type(node.op))
                    if value is None:
                        value = a / b if isinstance(node.op, ast.Div) else float(np.float64(a) ** b)
                elif isinstance(node, ast.Call):
                    fn = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "abs": np.abs, "tanh": np.tanh,
                          "min": min, "max": max}[node.func.id]
                    value = float(fn(*kids) if node.func.id in ("min", "max") else fn(kids[0]))
                else:
                    value = float("nan")
        except (FloatingPointError, ZeroDivisionError, OverflowError, ValueError, IndexError):
            value = float("nan")
        if not np.isfinite(value) or abs(value) > MAX_LITERAL_ABS:
            self.fail("a numeric sub-expression is too large or not a finite real number")
        return value

    def visit_Constant(self, node: ast.Constant) -> sp.Expr:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(f"literal {value!r} is not a number")
        if not np.isfinite(float(value)) or abs(float(value)) > MAX_LITERAL_ABS:
            self.fail(f"number literal {value!r} is too large (limit {MAX_LITERAL_ABS:g})")
        if isinstance(value, int):
            return sp.Integer(value)
        try:
            return sp.Rational(Decimal(repr(value)).normalize().to_eng_string())
        except (InvalidOperation, ValueError):
            self.fail(f"bad number literal {value!r}")

    def visit_Name(self, node: ast.Name) -> sp.Expr:
        name = node.id
        _check_name(name, self.lineno)
        if name in self.defined:
            return self.defined[name]
        if name in self.targets:
            self.fail(f"target {name!r} is used before it is defined")
        if name not in self.inputs and name not in self.constants:
            self.constants.append(name)
        return sp.Symbol(name)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> sp.Expr:
        if isinstance(node.op, ast.USub):
            return -self.visit(node.operand)
        if isinstance(node.op, ast.UAdd):
            return self.visit(node.operand)
        self.fail(f"operator {type(node.op).__name__} is not allowed")

    def visit_BinOp(self, node: ast.BinOp) -> sp.Expr:
        op = _BINOPS.get(type(node.op))
        if op is None:
            hint = " (use ** for powers)" if isinstance(node.op, ast.BitXor) else ""
            self.fail(f"operator {type(node.op).__name__} is not allowed{hint}")
        left, right = self.visit(node.left), self.visit(node.right)
        if op == "+":
            return left + right
        if op == "-":
            return left - right
        if op == "*":
            return left * right
        if op == "/":
            if right == 0:
                self.fail("division by the literal zero")
            return left / right
        if right.is_number and abs(self.numbers[node.right]) > MAX_LITERAL_EXPONENT:
            self.fail(f"exponent {self.numbers[node.right]:g} is too large (limit {MAX_LITERAL_EXPONENT:g})")
        return sp.Pow(left, right)

    def visit_Call(self, node: ast.Call) -> sp.Expr:
        if not isinstance(node.func, ast.Name):
            self.fail(f"{_describe(node.func)} cannot be called; allowed functions: {_allowed()}")
        name = node.func.id
        if name not in ALLOWED_FUNCTIONS:
            self.fail(f"unknown function {name!r}; allowed functions: {_allowed()}")
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            self.fail(f"{name}() takes plain positional arguments only")
        fn, lo, hi = ALLOWED_FUNCTIONS[name]
        if not lo <= len(node.args) <= hi:
            self.fail(f"{name}() takes {lo if lo == hi else f'{lo} to {hi}'} argument(s)")
        return fn(*(self.visit(a) for a in node.args))


def _allowed() -> str:
    return ", ".join(ALLOWED_FUNCTIONS)


def _describe(node: ast.AST) -> str:
    kinds = {
        "Attribute": "attribute access", "Subscript": "subscripting", "Lambda": "lambda",
        "ListComp": "a comprehension", "GeneratorExp": "a comprehension", "SetComp": "a comprehension",
        "DictComp": "a comprehension", "Compare": "a comparison", "BoolOp": "a boolean operator",
        "IfExp": "a conditional expression", "JoinedStr": "a string", "List": "a list",
        "Tuple": "a tuple", "Dict": "a dict", "Set": "a set", "NamedExpr": "the walrus operator",
        "Await": "await", "Yield": "yield", "Starred": "star-unpacking", "Call": "a call",
    }
    return kinds.get(type(node).__name__, f"syntax {type(node).__name__}")


def law_to_text(target: str, expr: sp.Expr, names: Mapping[str, str] | None = None, order: str | None = None) -> str:
    """Render a sympy expression back into a law line the parser accepts.

    ``names``: text to print for some symbols instead of their names (a
    parenthesised expression, such as an input over its reference scale).
    ``order``: sympy's term order; ``"none"`` keeps the expression's own (a constant first).
    """
    return f"{target} = {_LawPrinter(names, order).doprint(expr)}"


def _number_text(n: int) -> str:
    """An integer as the parser reads it: big round ones in scientific notation (1.7e+19)."""
    if abs(n) < 10**15:
        return str(n)
    text = f"{n:.15g}"
    return text if int(Decimal(text)) == n else str(n)


class _LatexPrinter(LatexPrinter):
    """Big round numbers (reference scales such as 1.7e+19) as 1.7 \\cdot 10^{19}."""

    def _print_Integer(self, e):
        text = _number_text(int(e.p))
        if "e" not in text:
            return str(e.p)
        mantissa, exponent = text.split("e")
        return (f"{mantissa} \\cdot " if mantissa not in ("1", "-1") else "-" * mantissa.startswith("-")) + \
            f"10^{{{int(exponent)}}}"

    def _print_Rational(self, e):
        if e.q == 1:
            return self._print_Integer(e)
        sign, p = ("- ", -e.p) if e.p < 0 else ("", e.p)
        return rf"{sign}\frac{{{self._print_Integer(sp.Integer(p))}}}{{{self._print_Integer(sp.Integer(e.q))}}}"


class _LawPrinter(sp.printing.str.StrPrinter):
    def __init__(self, names: Mapping[str, str] | None = None, order: str | None = None):
        super().__init__({"order": order})
        self.names = dict(names or {})

    def _print_Symbol(self, e):
        return self.names.get(e.name) or super()._print_Symbol(e)

    def _print_Integer(self, e):
        return _number_text(int(e.p))

    def _print_Abs(self, e):
        return f"abs({self._print(e.args[0])})"

    def _print_Min(self, e):
        return "min(" + ", ".join(self._print(a) for a in e.args) + ")"

    def _print_Max(self, e):
        return "max(" + ", ".join(self._print(a) for a in e.args) + ")"

    def _print_Rational(self, e):
        return f"({_number_text(e.p)}/{_number_text(e.q)})" if e.q != 1 else _number_text(e.p)

    def _print_Float(self, e):
        return repr(float(e))

    def _print_Exp1(self, e):
        return "exp(1)"

    def _print_Pi(self, e):
        return repr(float(sp.pi))
