"""The answer of ``evalsim plan``: trials per arm to detect p1 vs p2, bench hours, and the
power and MDE at a given n (:func:`plan_comparison` -> :class:`Plan`).

References
----------
Fleiss, J. L., Levin, B., & Paik, M. C. (2003). Statistical Methods for Rates and Proportions,
3rd ed., Wiley (the normal-approximation n per arm, no continuity correction). Connor, R. J.
(1987). Sample size for testing differences in proportions for the paired-sample design.
Biometrics 43(1), 207-211 (the paired normal approximation).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from statistics import NormalDist

from evalsim.answers._format import pct
from evalsim.stats.names import TWO_SAMPLE_TESTS

# evalsim.stats modules that load numba or SciPy are imported inside the functions that use
# them: a command on a small log should not pay for them at start (issue 24).

#: Exact McNemar power is O(n) per call (evalsim.stats.two_sample.paired_design): the exact paired
#: MDE (a bisection to 1e-6) is computed up to this many pairs; above it plan and compare give
#: Connor's normal approximation and say so.
PAIRED_EXACT_MAX_N = 20_000

#: Above this many trials per arm the unpaired MDE is the normal approximation (labelled):
#: each exact Fisher power costs O(n^1.5) and the two agree to well under a point there.
FISHER_MDE_EXACT_MAX_N = 100_000

#: The exact paired n is a scan upward over n (one O(n) exact power each); it runs only when
#: the normal-approximation n is at most this many pairs.
PAIRED_SCAN_MAX_N = 2000

#: The unpaired test when none is given (the documents' test, Fisher's exact test).
DEFAULT_TEST = "fisher"


@dataclass(frozen=True)
class Plan:
    """What ``plan`` found: the n per arm (exact and normal), bench hours, power and MDE.

    Attributes
    ----------
    p1, p2, alpha, power : float
        The rates to tell apart, the two-sided level and the target power.
    paired : bool
        A paired design (each condition run by both policies), planned for exact McNemar.
    test : str
        ``"mcnemar"`` when paired, else the unpaired test's id
        (:data:`evalsim.stats.names.TWO_SAMPLE_TESTS`).
    discordance : float or None
        Share of pairs where exactly one policy succeeds (paired only).
    n_per_arm_exact, n_per_arm_exact_first : int or None
        The exact n (power stays at the target from there on) and the first n that reaches
        it (they differ where the exact power is saw-toothed); None where not searched.
    n_per_arm_normal : int
        The normal-approximation n.
    exact_window : int or None
        The saw-tooth window of the unpaired exact n (power stays >= target up to n + it).
    minutes_per_trial, hours : float or None
        Bench minutes per trial, and the bench hours of both arms at the exact n (the normal
        one where there is no exact n).
    n : int or None
        The n per arm at which ``power_at_n`` and ``mde`` are given.
    at_n_method : str or None
        ``"exact"`` or ``"normal approximation"`` (above :data:`FISHER_MDE_EXACT_MAX_N`).
    mde, power_at_n : float or None
    notes : tuple of str
    """

    p1: float
    p2: float
    alpha: float
    power: float
    paired: bool
    test: str
    discordance: float | None
    n_per_arm_exact: int | None
    n_per_arm_exact_first: int | None
    n_per_arm_normal: int
    minutes_per_trial: float | None
    hours: float | None
    n: int | None
    at_n_method: str | None
    mde: float | None
    power_at_n: float | None
    exact_window: int | None = None
    notes: tuple = field(default=())

    def hours_at(self, n_per_arm: int | None) -> float | None:
        """Bench hours of both arms at ``n_per_arm`` (None without minutes per trial)."""
        if n_per_arm is None or not self.minutes_per_trial:
            return None
        from evalsim.stats.two_sample.design import bench_hours

        return float(bench_hours(2 * n_per_arm, self.minutes_per_trial))

    def to_dict(self) -> dict:
        """The JSON record of ``plan --json``."""
        out = asdict(self)
        del out["exact_window"], out["notes"]
        return out


def _discordant_split(p1: float, p2: float, discordance: float) -> tuple[float, float]:
    """(P(A only), P(B only)) of a pair: they differ by p1 - p2 and sum to the discordance."""
    d = p1 - p2
    if not abs(d) < discordance <= min(p1 + p2, 2.0 - p1 - p2) + 1e-12:
        raise ValueError(
            f"--discordance must be in ({abs(d):g}, {min(p1 + p2, 2 - p1 - p2):g}] for "
            f"p1 = {p1:g}, p2 = {p2:g} (the share of pairs where exactly one succeeds), "
            f"got {discordance:g}"
        )
    return (discordance + d) / 2.0, (discordance - d) / 2.0


def _mcnemar_n_exact(p10: float, p01: float, alpha: float, power: float, start: int) -> int | None:
    """Smallest number of pairs, scanning up from ``start``, whose exact McNemar power
    (``evalsim.stats.two_sample.paired_design.mcnemar_power_exact``) reaches ``power``; None past
    :data:`PAIRED_SCAN_MAX_N`."""
    from evalsim.stats.two_sample.paired_design import mcnemar_power_exact

    n = max(1, start)
    while mcnemar_power_exact(n, p10, p01, alpha) < power:
        n += 1
        if n > PAIRED_SCAN_MAX_N:
            return None
    return n


def paired_mde(n: int, discordance: float, alpha: float, power: float) -> float | None:
    """Smallest |p_A - p_B| the exact McNemar test detects with ``power`` at ``n`` pairs, at a
    fixed discordance (:func:`evalsim.stats.two_sample.paired_design.mcnemar_mde_exact`, solved to
    1e-6); None when no gap reaches the power or n is above :data:`PAIRED_EXACT_MAX_N`."""
    if n > PAIRED_EXACT_MAX_N or discordance <= 0:
        return None
    from evalsim.stats.two_sample.paired_design import mcnemar_mde_exact

    mde = mcnemar_mde_exact(n, discordance, alpha=alpha, power=power)
    return None if mde != mde else float(mde)


def plan_n(test: str, p1: float, p2: float, power: float, alpha: float):
    """n per arm for exact two-sided power (saw-tooth rule of ``n_for_fisher_power``), from
    the registry's entry of ``test``."""
    return TWO_SAMPLE_TESTS[test].n_for_power(p1, p2, power=power, alpha=alpha)


def _exact_power_mde(test: str, p1: float, p2: float, n: int, alpha: float, power: float):
    """Exact power of ``test`` at n per arm, and its MDE at the mean rate (from the registry's
    rejection region of the test, built once and read by both, or Fisher's own path)."""
    from evalsim.stats.two_sample.design import mde_exact

    spec = TWO_SAMPLE_TESTS[test]
    power_at_n = float(spec.power(p1, n, p2, n, alpha))
    res = mde_exact(
        n,
        alpha=alpha,
        power=power,
        baseline=(p1 + p2) / 2,
        convention="centered",
        region=spec.region(n, n, alpha),
    )
    return power_at_n, (float(res.mde) if math.isfinite(res.mde) else None)


def _normal_power_mde(p1: float, p2: float, n: int, alpha: float, power: float):
    """Power of the two-sided two-proportion z test at n per arm, and its MDE at the mean
    rate (the fast path above :data:`FISHER_MDE_EXACT_MAX_N`, where exact Fisher and the
    normal approximation agree to well under a point)."""
    z = NormalDist()
    za, zb = z.inv_cdf(1 - alpha / 2), z.inv_cdf(power)
    se = math.sqrt((p1 * (1 - p1) + p2 * (1 - p2)) / n)
    d = abs(p2 - p1)
    pw = 1.0 if se == 0 and d > 0 else (z.cdf(d / se - za) + z.cdf(-d / se - za) if se else alpha)
    b = (p1 + p2) / 2
    return float(pw), (za + zb) * math.sqrt(2 * b * (1 - b) / n)


def _check(p1, p2, paired, discordance, test) -> None:
    if p1 == p2:
        raise ValueError(f"--p1 and --p2 must differ (both {p1:g}): no gap to detect")
    if paired and discordance is None:
        raise ValueError(
            "--paired needs --discordance D (share of conditions where exactly one policy succeeds)"
        )
    if discordance is not None and not paired:
        raise ValueError("--discordance applies only with --paired")
    if paired and test != DEFAULT_TEST:
        raise ValueError(
            f"--test {test} applies to unpaired designs; a paired design is planned for the "
            "exact McNemar test"
        )
    for name, v in (("--p1", p1), ("--p2", p2)):
        if v in (0.0, 1.0):
            raise ValueError(f"{name} must be strictly between 0 and 1 for planning, got {v:g}")


def _paired_ns(p1, p2, discordance, alpha, power, notes):
    """(exact n, normal n) of the paired design: Connor's n, then a scan up from 0.8 x it."""
    from evalsim.stats.two_sample.paired_design import paired_n

    p10, p01 = _discordant_split(p1, p2, discordance)
    n_normal = int(paired_n(p1, p2, discordance=discordance, alpha=alpha, power=power).n)
    n_exact = None
    if n_normal <= PAIRED_SCAN_MAX_N:
        n_exact = _mcnemar_n_exact(p10, p01, alpha, power, start=max(1, int(0.8 * n_normal)))
    if n_exact is None:
        notes.append(
            f"exact McNemar n not searched above {PAIRED_SCAN_MAX_N} pairs (slow); "
            "the normal approximation is close at that size"
        )
    return n_exact, n_normal


def plan_comparison(
    p1: float,
    p2: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    paired: bool = False,
    discordance: float | None = None,
    test: str = DEFAULT_TEST,
    minutes_per_trial: float | None = None,
    n: int | None = None,
) -> Plan:
    """Trials per arm to detect ``p1`` vs ``p2`` with ``power`` at two-sided ``alpha``.

    Parameters
    ----------
    p1, p2 : float
        The two success rates, strictly between 0 and 1 and different.
    alpha, power : float
        Two-sided level and target power.
    paired : bool
        Plan a paired design for the exact McNemar test (needs ``discordance``).
    discordance : float, optional
        Share of pairs where exactly one policy succeeds.
    test : str
        The unpaired test (an id of :data:`evalsim.stats.names.TWO_SAMPLE_TESTS`).
    minutes_per_trial : float, optional
        Bench minutes per trial, for the bench hours.
    n : int, optional
        Also the power and the MDE at this n per arm.

    Returns
    -------
    Plan

    Raises
    ------
    ValueError
        Equal rates, a rate of 0 or 1, a discordance without ``paired`` (or the reverse), a
        discordance the rates cannot have, an unpaired test with ``paired``.
    """
    _check(p1, p2, paired, discordance, test)
    notes: list[str] = []
    window = None
    if paired:
        n_exact, n_normal = _paired_ns(p1, p2, discordance, alpha, power, notes)
        n_first = n_exact
    else:
        res = plan_n(test, p1, p2, power, alpha)
        n_exact, n_first, window = int(res.n), int(res.n_first), res.window
        from evalsim.stats.two_sample.design import n_per_arm_normal

        n_normal = int(n_per_arm_normal(p1, p2, alpha=alpha, power=power).n)
        if n_first != n_exact:
            short = TWO_SAMPLE_TESTS[test].short
            notes.append(
                f"exact {short} power is saw-toothed in n: it first reaches "
                f"{pct(power, 0)} at n = {n_first} per arm but dips below again before "
                f"n = {n_exact}"
            )
    mde = power_at_n = None
    at_n_method = "exact"
    if n is not None:
        if paired:
            from evalsim.stats.two_sample.paired_design import mcnemar_power_exact

            p10, p01 = _discordant_split(p1, p2, discordance)
            power_at_n = float(mcnemar_power_exact(n, p10, p01, alpha))
            mde = paired_mde(n, discordance, alpha, power)
        elif n > FISHER_MDE_EXACT_MAX_N:  # the fast path: normal approximations, labelled
            power_at_n, mde = _normal_power_mde(p1, p2, n, alpha, power)
            at_n_method = "normal approximation"
        else:
            power_at_n, mde = _exact_power_mde(test, p1, p2, n, alpha, power)
    plan = Plan(
        p1=p1,
        p2=p2,
        alpha=alpha,
        power=power,
        paired=bool(paired),
        test="mcnemar" if paired else test,
        discordance=discordance,
        n_per_arm_exact=n_exact,
        n_per_arm_exact_first=n_first,
        n_per_arm_normal=n_normal,
        minutes_per_trial=minutes_per_trial,
        hours=None,
        n=n,
        at_n_method=at_n_method if n is not None else None,
        mde=mde,
        power_at_n=power_at_n,
        exact_window=window,
        notes=tuple(notes),
    )
    hours = plan.hours_at(n_exact if n_exact is not None else n_normal)
    return replace(plan, hours=hours)
