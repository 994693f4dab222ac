"""Brent's root finder in plain Python: the steps of ``scipy.optimize.brentq`` one for one.

``scipy.optimize`` takes about half a second to import (it loads SciPy's sparse and linear
algebra packages), longer than the ``evalsim`` command's paired intervals take to compute.
:func:`brentq` takes the same steps, in the same floating-point operations and order, as
SciPy's C implementation (Brent 1973, chapter 4; SciPy's ``brentq.c``), so it returns the
same root to the bit on IEEE-754 machines that do not fuse multiply-adds (x86-64 wheels);
``tests/test_light_paths.py`` checks it against SciPy.

.. [1] Brent, R. P. (1973). Algorithms for Minimization Without Derivatives, ch. 4.
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["brentq"]

#: SciPy's defaults: absolute and relative tolerance (4 machine epsilons), iterations.
XTOL = 2e-12
RTOL = 4 * 2.220446049250313e-16
MAXITER = 100


def _f(fun: Callable[[float], float], x: float) -> float:
    value = float(fun(x))
    if value != value:
        raise ValueError(f"The function value at x={x:f} is NaN; solver cannot continue.")
    return value


def brentq(
    fun: Callable[[float], float],
    a: float,
    b: float,
    xtol: float = XTOL,
    rtol: float = RTOL,
    maxiter: int = MAXITER,
) -> float:
    """A root of ``fun`` in [a, b] (``fun(a)`` and ``fun(b)`` of opposite signs), as
    ``scipy.optimize.brentq(fun, a, b, xtol=xtol, rtol=rtol, maxiter=maxiter)``.

    Raises
    ------
    ValueError
        ``xtol <= 0``, ``rtol`` below 4 machine epsilons, no sign change, or a NaN value.
    RuntimeError
        No convergence within ``maxiter`` iterations.
    """
    if xtol <= 0:
        raise ValueError(f"xtol too small ({xtol:g} <= 0)")
    if rtol < RTOL:
        raise ValueError(f"rtol too small ({rtol:g} < {RTOL:g})")
    xpre, xcur = float(a), float(b)
    xblk = fblk = spre = scur = 0.0
    fpre = _f(fun, xpre)
    fcur = _f(fun, xcur)
    if fpre == 0:
        return xpre
    if fcur == 0:
        return xcur
    if math.copysign(1.0, fpre) == math.copysign(1.0, fcur):
        raise ValueError("f(a) and f(b) must have different signs")
    for _ in range(maxiter):
        if fpre != 0 and fcur != 0 and math.copysign(1.0, fpre) != math.copysign(1.0, fcur):
            xblk, fblk = xpre, fpre
            spre = scur = xcur - xpre
        if abs(fblk) < abs(fcur):
            xpre, xcur, xblk = xcur, xblk, xcur
            fpre, fcur, fblk = fcur, fblk, fcur
        delta = (xtol + rtol * abs(xcur)) / 2
        sbis = (xblk - xcur) / 2
        if fcur == 0 or abs(sbis) < delta:
            return xcur
        if abs(spre) > delta and abs(fcur) < abs(fpre):
            if xpre == xblk:  # interpolate
                stry = -fcur * (xcur - xpre) / (fcur - fpre)
            else:  # extrapolate (inverse quadratic)
                dpre = (fpre - fcur) / (xpre - xcur)
                dblk = (fblk - fcur) / (xblk - xcur)
                stry = -fcur * (fblk * dblk - fpre * dpre) / (dblk * dpre * (fblk - fpre))
            bound = abs(spre) if abs(spre) < 3 * abs(sbis) - delta else 3 * abs(sbis) - delta
            if 2 * abs(stry) < bound:  # good short step
                spre, scur = scur, stry
            else:  # bisect
                spre = scur = sbis
        else:  # bisect
            spre = scur = sbis
        xpre, fpre = xcur, fcur
        if abs(scur) > delta:
            xcur += scur
        else:
            xcur += delta if sbis > 0 else -delta
        fcur = _f(fun, xcur)
    raise RuntimeError(f"Failed to converge after {maxiter} iterations.")
