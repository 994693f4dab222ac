"""Settings that several builders share, each group declared once.

A builder takes a group as one argument instead of repeating its fields (and their defaults)
in its own parameter list. The product manifest binds each field to a config key
(:func:`evalsim.products.manifest.config_keys` lists them per product); the config schema
holds the defaults, so the groups have none.

This module is data only and imports nothing heavy: the manifest, which Snakemake reads on
every invocation, builds the groups.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Bootstrap", "Draws", "Sizing"]


@dataclass(frozen=True)
class Sizing:
    """The test a sample size or a minimum detectable effect is planned for.

    Attributes
    ----------
    alpha : float
        Two-sided significance level (probability).
    power : float
        Target power, 1 - beta (probability).
    exact_fisher : bool
        Also size by the exact power of Fisher's two-sided test [1]_ next to the normal
        approximation (seconds per table instead of milliseconds).

    References
    ----------
    .. [1] Fisher, R. A. (1935). The logic of inductive inference. Journal of the Royal
       Statistical Society 98(1), 39-82.
    """

    alpha: float
    power: float
    exact_fisher: bool


@dataclass(frozen=True)
class Bootstrap:
    """A table's intervals: their level, and the seeded bootstrap behind them.

    Attributes
    ----------
    confidence : float
        Level of every interval of the table, the bootstrap's and the others' (probability).
    reps : int
        Bootstrap replicates [1]_ (count).
    study_seed : int
        The study seed; each table draws its streams from it with
        :func:`evalsim.seeding.rng_for` under a key of its own, so a stream does not depend on
        which other tables run.

    References
    ----------
    .. [1] Efron, B. and Tibshirani, R. J. (1993). An Introduction to the Bootstrap.
       Chapman & Hall.
    """

    confidence: float
    reps: int
    study_seed: int


@dataclass(frozen=True)
class Draws:
    """Evaluations drawn with replacement from the pools of one task.

    Attributes
    ----------
    task : str
        The task whose pools are drawn from: a policy's pool is its trials at this task and
        the pool's training seed (:func:`evalsim.products.resample.experiment.policy_pool`).
    evaluations : int
        Evaluations drawn per row (count); a comparison draws this many pairs, one evaluation
        of each policy.
    study_seed : int
        The study seed; each row draws its own stream from it (keyed by policy and row), so
        a row does not depend on which other rows a table holds.
    """

    task: str
    evaluations: int
    study_seed: int
