"""The locked schedule: blocks in the file's order, conditions shuffled within each block,
each condition run under every arm in a balanced random order, and a blind code per arm.

Randomness comes from one study seed through :func:`evalsim.seeding.rng_for` (a
``numpy.random.SeedSequence`` spawned by stable keys), so the same seed gives the same
schedule and codes whatever else the program did before.

Arm orders within a block form a *balanced permutation design*: the orders are drawn in
groups of K cyclic rotations of a random permutation of the K arms (a Latin square: each arm
in each slot once per group), the groups are concatenated, cut to the block's size and
shuffled. So when the block holds a multiple of K conditions every arm runs in every slot
equally often (for two arms: exactly as many AB as BA); otherwise the counts differ by at
most one. The blind codes are random strings drawn from the seed, never derived from the
arms' names.

References
----------
.. [1] Williams, E. J. (1949), "Experimental designs balanced for the estimation of residual
   effects of treatments", Australian Journal of Scientific Research A 2(2), 149-168.
.. [2] Fisher, R. A. (1935), The Design of Experiments, Oliver & Boyd (ch. II, randomisation).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from evalsim.seeding import rng_for
from evalsim.study.protocol import Protocol

__all__ = [
    "CODE_ALPHABET",
    "CODE_LENGTH",
    "ScheduledTrial",
    "arm_orders",
    "blind_codes",
    "make_schedule",
    "trial_id",
]

#: Letters and digits of a blind code (no 0/O, 1/I/L, 2/Z, 5/S, 8/B look-alikes).
CODE_ALPHABET = "ACDEFGHJKMNPQRTUVWXY34679"
CODE_LENGTH = 4


@dataclass(frozen=True)
class ScheduledTrial:
    """One trial of the schedule.

    Attributes
    ----------
    trial : str
        Its id (``T001`` ...), in run order.
    index : int
        0-based position in the run order.
    condition, position, block : str
        See :class:`evalsim.study.protocol.Condition`.
    x_cm, y_cm : float
    replicate : int
    arm : str
        The arm's name (never shown before the study is unblinded).
    code : str
        The arm's blind code.
    slot : int
        1-based place of this arm in its condition's order (1 runs first).
    """

    trial: str
    index: int
    condition: str
    position: str
    x_cm: float
    y_cm: float
    block: str
    replicate: int
    arm: str
    code: str
    slot: int

    def to_dict(self, blind: bool = True) -> dict:
        """The trial as JSON; ``blind`` leaves the arm's name out."""
        d = asdict(self)
        if blind:
            d.pop("arm")
        return d


def trial_id(index: int, total: int) -> str:
    """``T`` and the 1-based index, zero-padded to the schedule's width (at least 3)."""
    return f"T{index + 1:0{max(3, len(str(total)))}d}"


def blind_codes(arms, seed: int) -> dict[str, str]:
    """A distinct random code per arm, drawn from ``seed`` (not from the arms' names).

    Parameters
    ----------
    arms : sequence of str
    seed : int

    Returns
    -------
    dict of str to str
        ``{arm: code}``, codes of :data:`CODE_LENGTH` characters of :data:`CODE_ALPHABET`.
    """
    rng = rng_for(int(seed), "study", "blind-codes")
    codes: dict[str, str] = {}
    used: set[str] = set()
    for arm in arms:
        while True:
            idx = rng.integers(0, len(CODE_ALPHABET), size=CODE_LENGTH)
            code = "".join(CODE_ALPHABET[i] for i in idx)
            if code not in used:
                break
        used.add(code)
        codes[arm] = code
    return codes


def arm_orders(m: int, k: int, rng: np.random.Generator) -> list[tuple[int, ...]]:
    """Arm orders for ``m`` conditions of one block: a balanced permutation design.

    Parameters
    ----------
    m : int
        Conditions in the block.
    k : int
        Arms (>= 2).
    rng : numpy.random.Generator

    Returns
    -------
    list of tuple of int
        ``m`` permutations of ``range(k)``; each arm holds each slot ``m // k`` or
        ``m // k + 1`` times.
    """
    orders: list[tuple[int, ...]] = []
    while len(orders) < m:
        base = rng.permutation(k)
        group = [tuple(int(base[(s + j) % k]) for s in range(k)) for j in range(k)]
        picked = rng.permutation(k)
        orders.extend(group[int(i)] for i in picked)
    orders = orders[:m]
    perm = rng.permutation(m)
    return [orders[int(i)] for i in perm]


def make_schedule(protocol: Protocol, seed: int) -> tuple[dict[str, str], list[ScheduledTrial]]:
    """The schedule and blind codes of a study at ``seed``.

    Blocks run in the file's order; within a block the conditions are shuffled and each
    runs every arm back to back in its order from :func:`arm_orders`.

    Returns
    -------
    codes : dict of str to str
    trials : list of ScheduledTrial
    """
    arms = protocol.arms
    codes = blind_codes(arms, seed)
    by_block: dict[str, list] = {}
    for c in protocol.conditions():
        by_block.setdefault(c.block, []).append(c)
    k = len(arms)
    total = sum(len(v) for v in by_block.values()) * k
    trials: list[ScheduledTrial] = []
    for label, conds in by_block.items():
        rng = rng_for(int(seed), "study", "block", label)
        order = rng.permutation(len(conds))
        orders = arm_orders(len(conds), k, rng)
        for ci, arm_order in zip(order, orders, strict=True):
            c = conds[int(ci)]
            for slot, a in enumerate(arm_order, start=1):
                i = len(trials)
                arm = arms[a]
                trials.append(
                    ScheduledTrial(
                        trial_id(i, total),
                        i,
                        c.id,
                        c.position,
                        c.x_cm,
                        c.y_cm,
                        c.block,
                        c.replicate,
                        arm,
                        codes[arm],
                        slot,
                    )
                )
    return codes, trials
