"""The light stand-ins on the ``evalsim`` command's path give the bits of what they replace:
one Wilson interval in Python (the numba kernel), Brent's root finder in Python
(``scipy.optimize.brentq``), the binomial quantile through SciPy's ufunc
(``scipy.stats.binom.ppf``) and the normal quantile and cdf through ``scipy.special``."""

from __future__ import annotations

import math
import platform

import numpy as np
import pytest
from scipy.optimize import brentq as scipy_brentq
from scipy.special import ndtri
from scipy.stats import binom

from evalsim.stats._roots import brentq
from evalsim.stats.multi.tasks import exact_stratified_test
from evalsim.stats.proportion import _kernels as _binom_kernels
from evalsim.stats.proportion.intervals import _wilson_one, wilson_interval
from evalsim.stats.two_sample.paired import _tango_statistic
from evalsim.stats.two_sample.paired_design import _binom_ppf

# Without fused multiply-adds (x86-64 wheels) the Python steps are SciPy's to the bit.
EXACT = platform.machine().lower() in ("x86_64", "amd64")


def test_one_wilson_interval_is_the_kernels_to_the_bit():
    rng = np.random.default_rng(24)
    zs = [float(-ndtri((1 - c) / 2)) for c in (0.5, 0.8, 0.9, 0.95, 0.99, 0.9999)] + [1.96]
    for z in zs:
        for n in [*range(1, 80), *rng.integers(80, 10**7, 40).tolist()]:
            ks = np.unique(np.r_[0 : min(n, 30) + 1, rng.integers(0, n + 1, 30), n - 1, n])
            ks = ks[(ks >= 0) & (ks <= n)].astype(np.int64)
            lo, hi = np.empty(ks.size), np.empty(ks.size)
            _binom_kernels.wilson_bounds(ks, np.full(ks.size, n, np.int64), z, lo, hi)
            got = np.array([_wilson_one(int(k), int(n), z) for k in ks])
            np.testing.assert_array_equal(got[:, 0], lo)
            np.testing.assert_array_equal(got[:, 1], hi)
    # the public function takes the Python path for scalars and the kernel for arrays
    iv = wilson_interval(np.array([3, 7]), np.array([10, 10]))
    assert (wilson_interval(3, 10).lower, wilson_interval(7, 10).upper) == (
        iv.lower[0],
        iv.upper[1],
    )


def test_binomial_quantile_is_scipys():
    n = np.arange(1, 20001)
    for q in (1e-6, 0.0005, 0.005, 0.025, 0.05, 0.1, 0.25, 0.4999):
        got, want = _binom_ppf(q, n, 0.5), binom.ppf(q, n, 0.5)
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype


def _same_root(got: float, want: float, xtol: float, rtol: float) -> None:
    if EXACT:
        assert got == want
    else:  # both within the final bracket of the true root
        assert abs(got - want) <= 2 * (xtol + rtol * abs(want))


def test_brentq_takes_scipys_steps_on_tango_and_smooth_functions():
    rng = np.random.default_rng(7)
    count = 0
    for _ in range(400):  # the paired Tango interval's equations
        n = int(rng.integers(1, 3000))
        b, c = (int(x) for x in rng.multinomial(n, rng.dirichlet([1, 1, 1]))[:2])
        z = float(rng.choice([1.0, 1.6448536269514722, 1.959963984540054, 2.5758293035489]))
        est = (b - c) / n
        for sign, lo, hi in ((-1, -1.0 + 1e-15, est), (1, est, 1.0 - 1e-15)):

            def f(d, b=b, c=c, n=n, z=z, sign=sign):
                return _tango_statistic(d, b, c, n) + sign * z

            if lo >= hi or np.sign(f(lo)) == np.sign(f(hi)):
                continue
            _same_root(brentq(f, lo, hi, xtol=1e-14), scipy_brentq(f, lo, hi, xtol=1e-14), 1e-14, 0)
            count += 1
    funcs = [
        lambda x: x**3 - 2 * x - 5,
        lambda x: math.exp(x) - 3.0,
        lambda x: math.atan(x - 0.3) * 1e-9,
        lambda x: math.tanh(5 * (x - 0.123456)),
        lambda x: (x - 1.0) ** 5,
    ]
    for fn in funcs:
        for a, b in ((-4.0, 4.0), (-1.0, 3.5), (0.01, 2.9)):
            if np.sign(fn(a)) == np.sign(fn(b)) or fn(a) == 0 or fn(b) == 0:
                continue
            for xtol in (2e-12, 1e-14, 1e-6):
                try:
                    want = scipy_brentq(fn, a, b, xtol=xtol)
                except RuntimeError:  # (x - 1)^5: too flat to converge in 100 steps
                    with pytest.raises(RuntimeError, match="Failed to converge"):
                        brentq(fn, a, b, xtol=xtol)
                    continue
                _same_root(brentq(fn, a, b, xtol=xtol), want, xtol, 0)
                count += 1
    assert count > 300


def test_brentq_errors_as_scipy():
    with pytest.raises(ValueError, match="different signs"):
        brentq(lambda x: x * x + 1, -1.0, 1.0)
    with pytest.raises(ValueError, match="NaN"):
        brentq(lambda x: math.nan, -1.0, 1.0)
    with pytest.raises(RuntimeError, match="converge"):
        brentq(lambda x: x - 0.3, -1.0, 1.0, maxiter=2)
    assert brentq(lambda x: x, 0.0, 1.0) == 0.0


def test_exact_stratified_interval_unchanged_by_the_root_finder(monkeypatch):
    from evalsim.stats.multi import tasks as multi

    args = ([30, 12, 40], [50, 20, 60], [38, 15, 47], [50, 20, 60])
    ours = exact_stratified_test(*args)
    monkeypatch.setattr(multi, "brentq", scipy_brentq)
    theirs = exact_stratified_test(*args)
    if EXACT:
        assert ours == theirs
    else:
        assert ours.pvalue == theirs.pvalue
