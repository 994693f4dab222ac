"""Argument checks shared by every public function in :mod:`evalsim.stats`.

Each check raises ``ValueError`` quoting the offending value (for an array, the first bad
element and its index) and returns the value in a canonical form: Python ``int``/``float``
for scalar input, a NumPy ``int64``/``float64`` array for array input. Kernels behind the
public functions assume these checks have run and do no validation of their own.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "MAX_COUNT",
    "check_alpha",
    "check_confidence",
    "check_counts",
    "check_n",
    "check_open_interval",
    "check_outcomes",
    "check_probability",
    "check_z",
]

#: Largest count accepted. The Fisher kernels multiply two counts in int64 (products up to
#: ~4 n^2 must stay below 2^63) and a count must be exact as a float64; 2^31 - 1 keeps both.
MAX_COUNT = 2**31 - 1


def _first_bad(arr: np.ndarray, bad: np.ndarray) -> str:
    """Describe the first element of ``arr`` where ``bad`` is true."""
    idx = np.unravel_index(int(np.argmax(bad)), arr.shape)
    idx_s = idx[0] if len(idx) == 1 else idx
    return f"{arr[idx].item()!r} at index {idx_s}"


def _as_integers(x, name: str):
    """``x`` as an int (scalar) or int64 array; integral floats are accepted, others refused."""
    if isinstance(x, bool | np.bool_):
        raise ValueError(f"{name} must be an integer count, got the boolean {x!r}")
    if isinstance(x, numbers.Integral):
        if abs(int(x)) > MAX_COUNT:
            raise ValueError(f"{name} must be an integer count <= {MAX_COUNT}, got {x!r}")
        return int(x)
    if isinstance(x, numbers.Real):
        xf = float(x)
        if not np.isfinite(xf) or xf != int(xf):
            raise ValueError(f"{name} must be an integer count, got {x!r}")
        if abs(xf) > MAX_COUNT:
            raise ValueError(f"{name} must be an integer count <= {MAX_COUNT}, got {x!r}")
        return int(xf)
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be an integer or an array of integers, got {x!r}") from None
    if arr.dtype == bool:
        raise ValueError(f"{name} must hold integer counts, got a boolean array")
    if arr.dtype == object:  # Python ints too large for int64, or mixed objects
        raise ValueError(f"{name} must hold integer counts <= {MAX_COUNT}, got {x!r}")
    if np.issubdtype(arr.dtype, np.integer):
        bad = (arr > MAX_COUNT) | (arr < -MAX_COUNT)
        if bad.any():
            raise ValueError(
                f"{name} must hold integer counts <= {MAX_COUNT}, got {_first_bad(arr, bad)}"
            )
        return arr.astype(np.int64)
    if not np.issubdtype(arr.dtype, np.floating):
        raise ValueError(f"{name} must be an integer or an array of integers, got {x!r}")
    bad = ~np.isfinite(arr) | (arr != np.round(arr))
    if bad.any():
        raise ValueError(f"{name} must hold integer counts, got {_first_bad(arr, bad)}")
    bad = np.abs(arr) > MAX_COUNT
    if bad.any():
        raise ValueError(
            f"{name} must hold integer counts <= {MAX_COUNT}, got {_first_bad(arr, bad)}"
        )
    return arr.astype(np.int64)


def check_n(n, name: str = "n", minimum: int = 1):
    """Check that ``n`` is an integer count (scalar or array) with every value >= ``minimum``.

    Parameters
    ----------
    n : int or array_like of int
        Number of trials. Integral floats (``10.0``) are accepted.
    name : str
        Name used in the error message.
    minimum : int
        Smallest allowed value (1 for a sample size, 0 for a count).

    Returns
    -------
    int or numpy.ndarray of int64
    """
    n = _as_integers(n, name)
    if isinstance(n, int):
        if n < minimum:
            raise ValueError(f"{name} must be an integer >= {minimum}, got {n!r}")
        return n
    bad = n < minimum
    if bad.any():
        raise ValueError(f"{name} must be integers >= {minimum}, got {_first_bad(n, bad)}")
    return n


def check_counts(k, n):
    """Check ``k`` successes out of ``n`` trials: integers with 0 <= k <= n and n >= 1.

    ``k`` and ``n`` may be scalars or arrays (broadcast against each other).

    Returns
    -------
    (k, n)
        Python ints for scalar input, else two broadcast ``int64`` arrays.

    Raises
    ------
    ValueError
        For a negative or non-integer value, ``n < 1`` or ``k > n``, quoting the value.
    """
    k = _as_integers(k, "k")
    n = check_n(n, "n")
    if isinstance(k, int) and isinstance(n, int):
        if k < 0:
            raise ValueError(f"k must be a count >= 0, got k={k!r}")
        if k > n:
            raise ValueError(f"k must be <= n, got k={k!r} > n={n!r}")
        return k, n
    k_arr, n_arr = np.broadcast_arrays(np.asarray(k, dtype=np.int64), np.asarray(n, dtype=np.int64))
    bad = k_arr < 0
    if bad.any():
        raise ValueError(f"k must be counts >= 0, got k={_first_bad(k_arr, bad)}")
    bad = k_arr > n_arr
    if bad.any():
        i = int(np.argmax(bad.ravel()))
        raise ValueError(
            f"k must be <= n, got k={k_arr.ravel()[i].item()!r} > n={n_arr.ravel()[i].item()!r} "
            f"at index {i}"
        )
    return k_arr.copy(), n_arr.copy()


def check_probability(p, name: str = "p"):
    """Check that ``p`` (scalar or array) is a finite probability in [0, 1].

    Returns
    -------
    float or numpy.ndarray of float64
    """
    if isinstance(p, bool | np.bool_):
        raise ValueError(f"{name} must be a probability in [0, 1], got the boolean {p!r}")
    if isinstance(p, numbers.Real):
        pf = float(p)
        if not (0.0 <= pf <= 1.0):  # also refuses NaN
            raise ValueError(f"{name} must be a probability in [0, 1], got {p!r}")
        return pf
    try:
        arr = np.asarray(p, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a probability in [0, 1], got {p!r}") from None
    bad = ~((arr >= 0.0) & (arr <= 1.0))
    if bad.any():
        raise ValueError(f"{name} must be probabilities in [0, 1], got {_first_bad(arr, bad)}")
    return arr


def check_outcomes(x, name: str = "x") -> np.ndarray:
    """Check a 1-D sequence of 0/1 outcomes (booleans or the numbers 0 and 1).

    Parameters
    ----------
    x : array_like
        The outcomes, one per trial.
    name : str, optional
        The argument's name, quoted in the error.

    Returns
    -------
    numpy.ndarray
        ``x`` as an int64 array of 0 and 1.

    Raises
    ------
    ValueError
        For anything but a 1-D sequence of booleans or 0/1 numbers, quoting the shape, the
        dtype or the first bad value and its index.
    """
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-d sequence of 0/1 outcomes, got shape {arr.shape}")
    if not (arr.dtype == bool or np.issubdtype(arr.dtype, np.number)):
        raise ValueError(f"{name} must hold 0/1 outcomes, got dtype {arr.dtype}")
    bad = ~np.isin(arr, (0, 1))
    if bad.any():
        raise ValueError(f"{name} must hold 0/1 outcomes, got {_first_bad(arr, bad)}")
    return arr.astype(np.int64)


def check_open_interval(x, name: str, upper: float = 1.0, what: str = "") -> float:
    """Check a number in the open interval (0, ``upper``). Returns a float.

    Parameters
    ----------
    x : float
        The value; booleans and non-numbers are refused, as is NaN.
    name : str
        The argument's name, quoted in the error.
    upper : float, optional
        The open upper end (default 1).
    what : str, optional
        What the value is, added in parentheses to the error (e.g. "a significance level").

    Returns
    -------
    float
        ``x`` as a float.

    Raises
    ------
    ValueError
        Quoting ``x``, when it is not a number with 0 < x < ``upper``.
    """
    span = f"(0, {upper:g})" + (f" ({what})" if what else "")
    if isinstance(x, bool | np.bool_) or not isinstance(x, numbers.Real):
        raise ValueError(f"{name} must be a number in {span}, got {x!r}")
    xf = float(x)
    if not (0.0 < xf < upper):
        raise ValueError(f"{name} must be a number in {span}, got {x!r}")
    return xf


def check_alpha(alpha) -> float:
    """Check a significance level: a number in the open interval (0, 1). Returns a float."""
    return check_open_interval(alpha, "alpha", what="a significance level such as 0.05")


def check_confidence(c) -> float:
    """Check a confidence level: a number in the open interval (0, 1). Returns a float."""
    return check_open_interval(c, "confidence", what="a confidence level such as 0.95")


def check_z(z, name: str = "z_alpha", positive: bool = True) -> float:
    """Check a standard-normal quantile: finite, and > 0 when ``positive``. Returns a float.

    A critical value ``z_alpha`` must be positive (a negative one would make a test reject
    more often than half the time); ``z_beta = Phi^-1(power)`` is negative for power < 1/2.
    """
    if isinstance(z, bool | np.bool_) or not isinstance(z, numbers.Real):
        raise ValueError(f"{name} must be a number such as 1.96, got {z!r}")
    zf = float(z)
    if not np.isfinite(zf) or (positive and zf <= 0.0):
        what = "a finite number > 0" if positive else "a finite number"
        raise ValueError(f"{name} must be {what} (such as 1.96), got {z!r}")
    return zf
