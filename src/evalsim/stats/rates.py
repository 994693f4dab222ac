"""Success rates of the results that carry two policies' successes and trials, and the
questions such a result answers next: the interval of B - A, the power at its rates, its
record (as SciPy's ``BinomTestResult.proportion_ci()`` answers the next question)."""

from __future__ import annotations

from dataclasses import asdict

__all__ = ["TwoArmRates"]


class TwoArmRates:
    """Mixin: ``rate_a`` and ``rate_b`` of a result with fields ``k_a, n_a, k_b, n_b``, its
    :meth:`difference_interval`, :meth:`power` and :meth:`to_dict`.

    A's and B's successes (``k_a``, ``k_b``) and trials (``n_a``, ``n_b``, each >= 1) are the
    fields of the class that uses it (a frozen dataclass); the rates are derived, not stored.

    Attributes
    ----------
    rate_a, rate_b : float
        ``k_a / n_a`` and ``k_b / n_b``.
    """

    __slots__ = ()

    @property
    def rate_a(self) -> float:
        """A's success rate, ``k_a / n_a``."""
        return self.k_a / self.n_a

    @property
    def rate_b(self) -> float:
        """B's success rate, ``k_b / n_b``."""
        return self.k_b / self.n_b

    def difference_interval(self, method: str = "newcombe", confidence: float = 0.95):
        """The interval of ``rate_b - rate_a`` from the two independent samples.

        Parameters
        ----------
        method : str
            One of :data:`evalsim.stats.two_sample.paired.DIFF_METHODS` (Newcombe's hybrid
            score, Wald, Agresti-Caffo).
        confidence : float

        Returns
        -------
        evalsim.stats.proportion.intervals.Interval
            It knows its ``method`` and ``confidence``
            (:func:`evalsim.stats.two_sample.paired.diff_interval` of B against A).
        """
        from evalsim.stats.two_sample.paired import diff_interval

        return diff_interval(self.k_b, self.n_b, self.k_a, self.n_a, method, confidence)

    def power(self, alpha: float = 0.05, n_per_arm: int | None = None) -> float:
        """Exact power of the two-sided Fisher test at the observed rates ``rate_a`` and
        ``rate_b`` (a post-hoc power: the chance a rerun at these rates rejects), at this
        result's trials or at ``n_per_arm`` in each arm
        (:func:`evalsim.stats.two_sample.power.fisher_power`)."""
        from evalsim.stats.two_sample.power import fisher_power

        n_a, n_b = (self.n_a, self.n_b) if n_per_arm is None else (n_per_arm, n_per_arm)
        return fisher_power(self.rate_a, n_a, self.rate_b, n_b, alpha=alpha)

    def to_dict(self) -> dict:
        """The result's fields (a dataclass's, recursively) with ``rate_a`` and ``rate_b``."""
        return {**asdict(self), "rate_a": self.rate_a, "rate_b": self.rate_b}
