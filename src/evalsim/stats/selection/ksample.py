"""K checkpoints on shared conditions: Cochran's Q (exact where tractable), pairwise exact
McNemar with Holm, and the ordered ladder (exact trend test; the first checkpoint from which
no later one is detectably better).

A paired log is a table with one row per condition (a starting state every checkpoint ran
from) and one 0/1 column per checkpoint. Under the null that the checkpoints do not differ,
the outcomes within a row are exchangeable across the columns: each row's successes fall on
a uniformly random subset of its size. The exact tests here are permutation tests of that
within-row null [1]_ [2]_ (rows with all or no successes carry no information and only shift
the statistics).

References
----------
.. [1] Cochran, W. G. (1950). The comparison of percentages in matched samples. Biometrika
   37, 256-266.
.. [2] Patil, K. D. (1975). Cochran's Q test: exact distribution. J. Amer. Statist. Assoc.
   70, 186-189.
.. [3] Armitage, P. (1955). Tests for linear trends in proportions and frequencies.
   Biometrics 11, 375-386; exact conditional form: Mehta, C. R. and Patel, N. R., StatXact
   manual (permutation distribution of the linear-by-linear statistic).
.. [4] Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scand. J.
   Statist. 6, 65-70.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass

import numpy as np

from evalsim.stats._validate import check_alpha, check_counts, check_n
from evalsim.stats.selection import _kernels as _k

__all__ = [
    "EXACT_Q_MAX_STATES",
    "CochranQResult",
    "LadderResult",
    "PairwiseMcNemar",
    "cochran_q_test",
    "ladder_test",
    "paired_table",
    "pairwise_mcnemar",
]

#: Cochran's Q is exact while the column-total state space, (informative rows + 1) ** K,
#: stays at or under this many states; above it the chi-square (K - 1 df) is used, labelled
#: asymptotic. (K = 3: up to 125 informative rows; K = 4: 36; K = 5: 17; K = 6: 10.)
EXACT_Q_MAX_STATES = 2_000_000

#: Relative slack when comparing a statistic with the observed one (floating sums).
_SLACK = 1e-9


def paired_table(table) -> np.ndarray:
    """Check a conditions x checkpoints 0/1 table (at least 1 row, 2 columns)."""
    arr = np.asarray(table)
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 2:
        raise ValueError(
            f"the paired table must be conditions x checkpoints with K >= 2 columns and at "
            f"least one condition, got shape {arr.shape}"
        )
    if not (arr.dtype == bool or np.issubdtype(arr.dtype, np.number)):
        raise ValueError(f"the paired table must hold 0/1 outcomes, got dtype {arr.dtype}")
    if not np.isin(arr, (0, 1)).all():
        raise ValueError("the paired table must hold 0/1 outcomes only")
    return np.ascontiguousarray(arr.astype(np.int64))


@dataclass(frozen=True)
class CochranQResult:
    """Result of :func:`cochran_q_test`.

    ``method`` is ``"exact permutation"`` or ``"asymptotic chi-square"``; ``pvalue`` is that
    method's; ``pvalue_asymptotic`` is always the chi-square (K - 1 df) value, as
    ``statsmodels.stats.contingency_tables.cochrans_q``; ``limit`` states when the exact law
    is used.
    """

    statistic: float
    df: int
    pvalue: float
    method: str
    pvalue_asymptotic: float
    n_conditions: int
    n_informative: int
    limit: str

    def to_dict(self) -> dict:
        """Plain-Python fields (for JSON)."""
        return asdict(self)


def _q_from_sumsq(sumsq, k, big_n, rows_sq):
    den = k * big_n - rows_sq
    return 0.0 if den == 0 else (k - 1) * (k * sumsq - big_n * big_n) / den


def cochran_q_test(table, max_states: int = EXACT_Q_MAX_STATES) -> CochranQResult:
    """Cochran's Q test that K checkpoints share one success rate, on paired outcomes.

    Parameters
    ----------
    table : array_like of 0/1, shape (conditions, K)
    max_states : int
        The exact law is computed while ``(informative rows + 1) ** K <= max_states``.

    Returns
    -------
    CochranQResult

    Notes
    -----
    ``Q = (K - 1) (K sum_j C_j^2 - N^2) / (K N - sum_i R_i^2)`` with ``C_j`` the column
    totals, ``R_i`` the row totals and ``N`` the total [1]_. With the row totals fixed by
    the within-row permutation, Q increases with ``sum_j C_j^2``, whose exact law is built by
    dynamic programming over the column-total vector [2]_; the exact p-value is
    ``P(sum C^2 >= observed)``. With no informative row, Q = 0 and p = 1.
    """
    from scipy.stats import chi2

    x = paired_table(table)
    k = x.shape[1]
    rows = x.sum(axis=1)
    info = rows[(rows > 0) & (rows < k)]
    cols = x.sum(axis=0)
    big_n = int(rows.sum())
    rows_sq = int((rows * rows).sum())
    sumsq = int((cols * cols).sum())
    q = float(_q_from_sumsq(sumsq, k, big_n, rows_sq))
    p_asym = float(chi2.sf(q, k - 1)) if info.size else 1.0
    limit = (
        f"exact while (informative conditions + 1)^K <= {max_states:,} states; "
        "chi-square with K - 1 df above"
    )
    method, p = "asymptotic chi-square", p_asym
    if info.size == 0:
        method, p = "exact permutation", 1.0
    elif (info.size + 1) ** k <= check_n(max_states, "max_states"):
        vals, probs = _k.cochran_sumsq_law(info.astype(np.int64), k, max_states)
        # rows with every checkpoint successful add the same count to every column total
        full = int((rows == k).sum())
        # sum_j (c_j + full)^2 = sum c_j^2 + 2 full sum c_j + k full^2, and sum c_j is fixed
        info_total = int(info.sum())
        shifted = vals + 2 * full * info_total + k * full * full
        p = float(min(1.0, probs[shifted >= sumsq - _SLACK].sum()))
        method = "exact permutation"
    return CochranQResult(
        statistic=q,
        df=k - 1,
        pvalue=p,
        method=method,
        pvalue_asymptotic=p_asym,
        n_conditions=int(x.shape[0]),
        n_informative=int(info.size),
        limit=limit,
    )


@dataclass(frozen=True)
class PairwiseMcNemar:
    """One pair of checkpoints: ``first_only``/``second_only`` discordant conditions, the
    exact McNemar p (two-sided, or one-sided "second better") and its Holm adjustment."""

    first: str
    second: str
    first_only: int
    second_only: int
    pvalue: float
    pvalue_holm: float
    differ: bool

    def to_dict(self) -> dict:
        """Plain-Python fields (for JSON)."""
        return asdict(self)


def pairwise_mcnemar(
    table, names, alpha: float = 0.05, pairs=None, alternative: str = "two-sided"
) -> list:
    """Exact McNemar on every pair of checkpoints (or on ``pairs``), Holm-adjusted [4]_.

    ``alternative="less"`` tests "the second of each pair is better" (one-sided).
    """
    from evalsim.stats.multi.tasks import adjust_pvalues
    from evalsim.stats.two_sample.paired import mcnemar_pvalue

    x = paired_table(table)
    alpha = check_alpha(alpha)
    names = [str(n) for n in names]
    if len(names) != x.shape[1]:
        raise ValueError(f"names must name the {x.shape[1]} columns, got {names!r}")
    idx = list(itertools.combinations(range(x.shape[1]), 2)) if pairs is None else list(pairs)
    raw, counts = [], []
    for i, j in idx:
        b = int((x[:, i] & (1 - x[:, j])).sum())
        c = int((x[:, j] & (1 - x[:, i])).sum())
        raw.append(mcnemar_pvalue(b, c, alternative))
        counts.append((b, c))
    holm = adjust_pvalues(raw, "holm", alpha)
    return [
        PairwiseMcNemar(names[i], names[j], b, c, float(p), float(h), bool(h < alpha))
        for (i, j), (b, c), p, h in zip(idx, counts, raw, holm, strict=True)
    ]


@dataclass(frozen=True)
class LadderResult:
    """Result of :func:`ladder_test`.

    Attributes
    ----------
    names : tuple of str
        The checkpoints, in ladder order.
    paired : bool
        Within-condition permutation (paired) or the conditional test on counts (unpaired).
    trend_statistic : int
        ``T = sum_j s_j C_j`` (scores s_j = 0..K-1, ``C_j`` the successes of checkpoint j).
    trend_pvalue_increasing, trend_pvalue_decreasing : float
        Exact one-sided p-values ``P(T >= T_obs)`` and ``P(T <= T_obs)``.
    trend_pvalue : float
        Two-sided: twice the smaller, capped at 1.
    plateau : str
        The first checkpoint from which no later one is detectably better (one-sided exact
        McNemar or Fisher on every pair j < l, Holm over all of them).
    later_better : list of (str, str, float)
        (earlier, later, Holm p) for the pairs where the later is detectably better.
    alpha : float
    """

    names: tuple
    paired: bool
    trend_statistic: int
    trend_pvalue_increasing: float
    trend_pvalue_decreasing: float
    trend_pvalue: float
    plateau: str
    later_better: list
    alpha: float

    def to_dict(self) -> dict:
        """Plain-Python fields (for JSON)."""
        out = asdict(self)
        out["names"] = list(self.names)
        out["later_better"] = [list(t) for t in self.later_better]
        return out


def _tails(law: np.ndarray, t_obs: int) -> tuple[float, float]:
    return float(min(1.0, law[t_obs:].sum())), float(min(1.0, law[: t_obs + 1].sum()))


def ladder_test(names, alpha: float = 0.05, table=None, k=None, n=None) -> LadderResult:
    """Exact trend test across an ordered ladder of checkpoints, and its plateau.

    Give either ``table`` (conditions x K, paired: within-condition permutation, the exact
    form of Cochran-Armitage / Page's test for binary outcomes on matched rows) or the
    counts ``k``, ``n`` (unpaired: the exact conditional Cochran-Armitage test [3]_, all
    trials' outcomes permuted over the checkpoints).
    """
    from evalsim.stats.multi.tasks import adjust_pvalues
    from evalsim.stats.two_sample.fisher import fisher_pvalue_one_sided

    alpha = check_alpha(alpha)
    names = tuple(str(s) for s in names)
    kk = len(names)
    if kk < 2:
        raise ValueError(f"a ladder needs at least 2 checkpoints, got {list(names)}")
    scores = np.arange(kk, dtype=np.int64)
    pairs = list(itertools.combinations(range(kk), 2))
    if table is not None:
        x = paired_table(table)
        if x.shape[1] != kk:
            raise ValueError(f"names must name the {x.shape[1]} columns, got {list(names)}")
        t_obs = int((x.sum(axis=0) * scores).sum())
        law = _k.within_row_score_law(x, scores)
        res = pairwise_mcnemar(x, names, alpha, pairs=pairs, alternative="less")
        holm = [r.pvalue_holm for r in res]
        paired = True
    else:
        k_arr, n_arr = check_counts(np.atleast_1d(k), np.atleast_1d(n))
        if k_arr.size != kk or n_arr.size != kk:
            raise ValueError(f"k and n must have one entry per checkpoint ({kk})")
        if (n_arr < 1).any():
            raise ValueError("every checkpoint of the ladder needs at least one trial")
        t_obs = int((k_arr * scores).sum())
        law = _k.hypergeometric_score_law(n_arr, scores, int(k_arr.sum()))
        raw = [
            fisher_pvalue_one_sided(
                int(k_arr[i]), int(n_arr[i]), int(k_arr[j]), int(n_arr[j]), "less"
            )
            for i, j in pairs
        ]
        holm = list(adjust_pvalues(raw, "holm", alpha))
        paired = False
    p_inc, p_dec = _tails(law, t_obs)
    better = [
        (names[i], names[j], float(h)) for (i, j), h in zip(pairs, holm, strict=True) if h < alpha
    ]
    later_better_of = {i: any(a == names[i] for a, _, _ in better) for i in range(kk)}
    plateau = next(names[i] for i in range(kk) if not later_better_of[i])
    return LadderResult(
        names=names,
        paired=paired,
        trend_statistic=t_obs,
        trend_pvalue_increasing=p_inc,
        trend_pvalue_decreasing=p_dec,
        trend_pvalue=float(min(1.0, 2.0 * min(p_inc, p_dec))),
        plateau=plateau,
        later_better=better,
        alpha=alpha,
    )
