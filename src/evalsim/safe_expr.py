"""Arithmetic expressions of ``config/claims.yaml`` evaluated from a whitelisted syntax tree.

A claim's ``expr:`` is config text. ``eval`` with empty builtins is no sandbox (attribute
chains such as ``().__class__.__mro__[1].__subclasses__()`` reach every class of the
interpreter), so :func:`evaluate` parses the text with :mod:`ast` and walks the tree itself,
accepting only:

- numbers (int, float) and the names given (the claim's ``values``);
- ``+ - * / // % **``, unary ``+ -``;
- comparisons ``< <= > >= == !=`` (a chain ``a < b < c`` as in Python);
- lists and tuples of the above (a claim stating several numbers);
- calls of the functions in :data:`FUNCTIONS` with positional arguments.

Anything else (attributes other than the dotted function names, subscripts, keyword
arguments, lambdas, comprehensions, strings, ...) raises :class:`ExpressionError` naming the
construct.

References
----------
.. [1] Python documentation, "ast -- Abstract Syntax Trees",
   https://docs.python.org/3/library/ast.html
"""

from __future__ import annotations

import ast
import operator

import numpy as np
from scipy import stats

__all__ = ["FUNCTIONS", "ExpressionError", "evaluate", "parse"]


class ExpressionError(ValueError):
    """An expression uses syntax or a name outside the whitelist, or does not parse."""


def _flat(args) -> np.ndarray:
    return np.concatenate([np.atleast_1d(a) for a in args])


def _max(*args):
    """max over any mix of scalars and arrays: max(a, b) and max(array) both work."""
    return np.max(_flat(args))


def _min(*args):
    """min over any mix of scalars and arrays."""
    return np.min(_flat(args))


def _diff(values):
    """Steps between consecutive values; one value (or a scalar) has no step: [0]."""
    values = np.atleast_1d(np.asarray(values, dtype=float))
    return np.diff(values) if values.size > 1 else np.zeros(1)


#: The callable names an expression may use (dotted names are looked up as a whole).
FUNCTIONS = {
    "sqrt": np.sqrt,
    "abs": np.abs,
    "max": _max,
    "min": _min,
    "round": np.round,
    "ceil": np.ceil,
    "floor": np.floor,
    "log10": np.log10,
    "diff": _diff,
    "norm.ppf": stats.norm.ppf,
    "norm.cdf": stats.norm.cdf,
    "norm.sf": stats.norm.sf,
    "binom.pmf": stats.binom.pmf,
    "binom.cdf": stats.binom.cdf,
    "binom.sf": stats.binom.sf,
}

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_COMPARE = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}


def _dotted(node: ast.expr) -> str | None:
    """``norm.ppf`` -> "norm.ppf"; a plain name -> itself; anything else -> None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def _check(node: ast.expr, names) -> None:
    """Raise :class:`ExpressionError` unless every node of the tree is whitelisted."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise ExpressionError(f"constant {node.value!r} is not a number")
        return
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise ExpressionError(f"unknown name {node.id!r}; known: {sorted(names)}")
        return
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        children = [node.left, node.right]
    elif isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        children = [node.operand]
    elif isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
        children = [node.left, *node.comparators]
    elif isinstance(node, ast.List | ast.Tuple):
        children = list(node.elts)
    elif isinstance(node, ast.Call):
        name = _dotted(node.func)
        if name not in FUNCTIONS:
            shown = ast.unparse(node.func)
            raise ExpressionError(f"call of {shown!r}; allowed functions: {sorted(FUNCTIONS)}")
        if node.keywords:
            raise ExpressionError(f"keyword arguments in the call of {name!r}")
        children = list(node.args)
    else:
        raise ExpressionError(f"{type(node).__name__} not allowed: {ast.unparse(node)!r}")
    for child in children:
        _check(child, names)


def _eval(node: ast.expr, names: dict):
    """Value of a tree that :func:`_check` accepted."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return names[node.id]
    if isinstance(node, ast.BinOp):
        return _BINARY[type(node.op)](_eval(node.left, names), _eval(node.right, names))
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_eval(node.operand, names))
    if isinstance(node, ast.Compare):
        left = _eval(node.left, names)
        result = True
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _eval(right_node, names)
            result = np.logical_and(result, _COMPARE[type(op)](left, right))
            left = right
        return result
    if isinstance(node, ast.List | ast.Tuple):
        return [_eval(e, names) for e in node.elts]
    return FUNCTIONS[_dotted(node.func)](*[_eval(a, names) for a in node.args])


def parse(text: str, names) -> ast.Expression:
    """Parse ``text`` and check it against the whitelist, without evaluating it.

    Parameters
    ----------
    text : str
        The expression.
    names : collection of str
        The names it may use (the claim's ``values``).

    Raises
    ------
    ExpressionError
        If the text does not parse or uses anything outside the whitelist.
    """
    try:
        tree = ast.parse(str(text), mode="eval")
    except SyntaxError as err:
        raise ExpressionError(f"does not parse: {err.msg}") from None
    _check(tree.body, set(names))
    return tree


def evaluate(text: str, names: dict | None = None):
    """Value of the arithmetic expression ``text`` with the given named values.

    Parameters
    ----------
    text : str
        The expression, e.g. ``"norm.ppf(0.975) * sqrt(p * (1 - p) / 1000)"``.
    names : dict, optional
        Name -> number or array (a claim's ``values``).

    Returns
    -------
    number, numpy.ndarray or list
        What the arithmetic gives (a list for a list expression).

    Raises
    ------
    ExpressionError
        If the text does not parse or uses anything outside the whitelist.
    """
    names = dict(names or {})
    return _eval(parse(text, names).body, names)
