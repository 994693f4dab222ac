"""Success rates of the results that carry two policies' successes and trials."""

from __future__ import annotations

__all__ = ["TwoArmRates"]


class TwoArmRates:
    """Mixin: ``rate_a`` and ``rate_b`` of a result with fields ``k_a, n_a, k_b, n_b``.

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
