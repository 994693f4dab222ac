"""Checks the ledger computes itself: statements no result table holds a number for.

A claim's source ``{check: <name>, args: {...}}`` calls one function of :data:`CHECKS`. Each
returns ``(values, detail)``: the reproduced value(s) and a short description of what was read
or computed, shown in the ledger's ``source`` column. They compute from the library's tested
kernels (intervals, exact coverage, Fisher's test) or read the installed SciPy and statsmodels
themselves (a default argument from the signature, a tolerance from the source), so the
ledger's answer changes when the installed library does.

References
----------
.. [1] Brown, Cai and DasGupta (2001), "Interval estimation for a binomial proportion",
   Statistical Science 16(2): 101-133 (coverage of Wilson and Clopper-Pearson over p).
.. [2] Clopper and Pearson (1934), Biometrika 26(4): 404-413 (coverage at least nominal).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable

import numpy as np

from evalsim.ledger.models import MODELS
from evalsim.safe_expr import evaluate
from evalsim.stats.proportion.coverage import coverage_curve
from evalsim.stats.proportion.intervals import interval
from evalsim.stats.two_sample.fisher import fisher_pvalue

#: Points of the p grid of a coverage check, besides the interval bounds themselves.
P_GRID = 2001


def _widths(method: str, n: int, confidence: float) -> np.ndarray:
    ci = interval(np.arange(n + 1), n, method=method, confidence=confidence)
    return np.asarray(ci.upper, dtype=float) - np.asarray(ci.lower, dtype=float)


def not_wider_cases(
    method: str = "clopper_pearson",
    than: str = "wilson",
    n_max: int = 100,
    confidence: float = 0.95,
) -> tuple[np.ndarray, str]:
    """How many (k, n), 1 <= n <= ``n_max``, give ``method`` an interval not wider than ``than``."""
    cases = []
    for n in range(1, int(n_max) + 1):
        ks = np.flatnonzero(_widths(method, n, confidence) <= _widths(than, n, confidence))
        cases += [(int(k), n) for k in ks]
    shown = ", ".join(f"{k}/{n}" for k, n in cases[:4])
    detail = (
        f"{method} interval no wider than {than}'s at {len(cases)} of the (k, n), "
        f"n = 1..{n_max}" + (f" (first: {shown}, ...)" if cases else "")
    )
    return np.array([float(len(cases))]), detail


def _p_grid(method: str, n: int, confidence: float) -> np.ndarray:
    """A grid of p with the points just inside and outside every bound (where coverage jumps)."""
    ci = interval(np.arange(n + 1), n, method=method, confidence=confidence)
    edges = np.concatenate([np.asarray(ci.lower, float), np.asarray(ci.upper, float)])
    eps = 1e-9
    grid = np.concatenate([np.linspace(0.0005, 0.9995, P_GRID), edges - eps, edges + eps])
    return np.unique(grid[(grid > 0) & (grid < 1)])


def min_coverage(
    method: str, n_values=(10, 20, 50, 100), confidence: float = 0.95
) -> tuple[np.ndarray, str]:
    """Smallest exact coverage of ``method`` over p in (0, 1), at each n of ``n_values``."""
    mins = []
    for n in n_values:
        grid = _p_grid(method, int(n), confidence)
        mins.append(float(np.min(coverage_curve(method, int(n), grid, confidence))))
    detail = f"minimum exact coverage over p of {method} at n = {list(n_values)}"
    return np.array([min(mins)]), detail


def coverage_contrast(
    method: str = "wilson",
    than: str = "clopper_pearson",
    reading: str = "minimum",
    n_values=(10, 20, 50, 100),
    confidence: float = 0.95,
) -> tuple[np.ndarray, str]:
    """How much better ``method``'s coverage is than ``than``'s (positive: better).

    ``reading = "minimum"``: the smaller of the two minimum coverages over p (the guarantee);
    the value is min cov(method) - min cov(than), worst over ``n_values``.
    ``reading = "closeness"``: mean |coverage - nominal| over a uniform p grid; the value is
    that of ``than`` minus that of ``method``, worst over ``n_values``.
    """
    diffs = []
    for n in n_values:
        grid = np.linspace(0.0005, 0.9995, P_GRID)
        if reading == "minimum":
            a = float(np.min(coverage_curve(method, int(n), _p_grid(method, int(n), confidence))))
            b = float(np.min(coverage_curve(than, int(n), _p_grid(than, int(n), confidence))))
            diffs.append(a - b)
        elif reading == "closeness":
            dev = {
                m: float(np.mean(np.abs(coverage_curve(m, int(n), grid, confidence) - confidence)))
                for m in (method, than)
            }
            diffs.append(dev[than] - dev[method])
        else:
            raise ValueError(f"unknown reading {reading!r}; allowed: minimum, closeness")
    what = "minimum coverage over p" if reading == "minimum" else "mean |coverage - nominal|"
    detail = f"{what}: {method} against {than} at n = {list(n_values)} (worst n)"
    return np.array([min(diffs)]), detail


def scipy_fisher_tolerance() -> tuple[np.ndarray, str]:
    """The relative tolerance the installed ``scipy.stats.fisher_exact`` uses for ties."""
    import scipy
    from scipy import stats

    src = inspect.getsource(inspect.getmodule(stats.fisher_exact))
    body = src[src.index("def fisher_exact(") :]
    m = re.search(r"\bepsilon\s*=\s*([0-9.eE+-]+)", body)
    if m is None:
        raise LookupError("no 'epsilon = ...' in the installed scipy.stats.fisher_exact")
    return np.array([float(m.group(1))]), f"epsilon in scipy {scipy.__version__} fisher_exact"


def _default(func: Callable, name: str):
    return inspect.signature(func).parameters[name].default


def library_defaults(scipy_method: str, statsmodels_method: str) -> tuple[np.ndarray, str]:
    """The installed libraries' default interval method and level, against the document's.

    Returns [SciPy's default confidence level, 1 if SciPy's default method is
    ``scipy_method`` else 0, 1 if statsmodels' is ``statsmodels_method`` else 0]; the detail
    names each default as read.
    """
    import scipy
    import statsmodels
    from scipy import stats
    from statsmodels.stats.proportion import proportion_confint

    ci = stats.binomtest(1, 2).proportion_ci
    sp_level, sp_method = _default(ci, "confidence_level"), _default(ci, "method")
    sm_alpha, sm_method = (
        _default(proportion_confint, "alpha"),
        _default(proportion_confint, "method"),
    )
    values = [
        float(sp_level),
        float(sp_method == scipy_method),
        float(sm_method == statsmodels_method),
    ]
    detail = (
        f"scipy {scipy.__version__} binomtest().proportion_ci(confidence_level={sp_level}, "
        f"method={sp_method!r}); statsmodels {statsmodels.__version__} "
        f"proportion_confint(alpha={sm_alpha}, method={sm_method!r})"
    )
    return np.array(values), detail


def fisher_p(k1: int, n1: int, k2: int, n2: int) -> tuple[np.ndarray, str]:
    """Two-sided Fisher exact p-value of k1/n1 against k2/n2."""
    p = float(fisher_pvalue(int(k1), int(n1), int(k2), int(n2)))
    return np.array([p]), f"two-sided Fisher exact p, {k1}/{n1} vs {k2}/{n2}"


def model(f: str, **args) -> tuple[np.ndarray, str]:
    """One function of :data:`evalsim.ledger.models.MODELS` at the given arguments.

    A string argument is an expression of :mod:`evalsim.safe_expr` ("221 / 300").
    """
    args = {k: float(evaluate(v, {})) if isinstance(v, str) else v for k, v in args.items()}
    value = np.atleast_1d(np.asarray(MODELS[f](**args), dtype=float))
    return value, f"{f}({', '.join(f'{k} = {v:g}' for k, v in args.items())})"


CHECKS: dict[str, Callable[..., tuple[np.ndarray, str]]] = {
    "not_wider_cases": not_wider_cases,
    "min_coverage": min_coverage,
    "coverage_contrast": coverage_contrast,
    "scipy_fisher_tolerance": scipy_fisher_tolerance,
    "library_defaults": library_defaults,
    "fisher_p": fisher_p,
    "model": model,
}
