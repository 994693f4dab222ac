"""What a study's design can detect before it runs: exact power and MDE, paired and unpaired.

Every number comes from :mod:`evalsim.stats`: the exact McNemar power and MDE
(:func:`~evalsim.stats.two_sample.paired_design.mcnemar_power_exact`,
:func:`~evalsim.stats.two_sample.paired_design.mcnemar_mde_exact`), Fisher's exact power and MDE
(:func:`~evalsim.stats.two_sample.power.fisher_power`,
:func:`~evalsim.stats.two_sample.design.mde_exact`), Boschloo's exact power
(:func:`~evalsim.stats.two_sample.unconditional_power.exact_power`) and, for a sequential
design, its exact operating characteristics. The plan is stored in the lock.

A one-sided alternative is planned at the two-sided level ``2 alpha`` (the exact tests here
are two-sided; a one-sided exact test at alpha rejects the same tables in its direction).

References
----------
.. [1] Fagerland, M. W., Lydersen, S. & Laake, P. (2013), "The McNemar test for binary
   matched-pairs data: mid-p and asymptotic are better than exact conditional", BMC Medical
   Research Methodology 13, 91.
"""

from __future__ import annotations

from evalsim.stats.names import TWO_SAMPLE_TESTS
from evalsim.study.protocol import Protocol

__all__ = ["PLAN_POWER", "plan_study", "plan_level"]

#: Power the MDE is quoted at unless the study says otherwise.
PLAN_POWER = 0.8


def plan_level(protocol: Protocol) -> float:
    """The two-sided level the exact tests are planned at (``2 alpha`` when one-sided)."""
    a = protocol.alpha
    return a if protocol.alternative == "two-sided" else min(2 * a, 0.999)


def _discordance(protocol: Protocol, pa: float | None, pb: float | None) -> float | None:
    given = protocol.data.get("plan", {}).get("discordance")
    if given is not None:
        return float(given)
    if pa is None or pb is None:
        return None
    return pa * (1 - pb) + pb * (1 - pa)


def plan_study(protocol: Protocol) -> dict:
    """The plan of a study: what its n can detect, at the rates it expects.

    Returns
    -------
    dict
        ``n``, ``alpha``, ``planned_level``, ``power_target``, ``expected`` (rates of arms a
        and b, or None), ``paired`` (exact McNemar power at the expected rates and
        discordance, MDE at that discordance) and ``unpaired`` (Fisher's exact power and MDE
        at the pooled expected rate; Boschloo's power when it is the primary test), and
        ``sequential`` (exact operating characteristics) for a sequential design.
    """
    from evalsim.stats.two_sample.design import mde_exact
    from evalsim.stats.two_sample.paired_design import mcnemar_mde_exact, mcnemar_power_exact
    from evalsim.stats.two_sample.power import fisher_power

    n = protocol.n
    plan = protocol.data.get("plan", {})
    target = float(plan.get("power", PLAN_POWER))
    expected = plan.get("expected", {})
    pa = expected.get(protocol.arm_a)
    pb = expected.get(protocol.arm_b)
    level = plan_level(protocol)
    out: dict = {
        "n": n,
        "unit": "pairs" if protocol.paired else "trials per arm",
        "alpha": protocol.alpha,
        "alternative": protocol.alternative,
        "primary_test": protocol.primary_test,
        "planned_level": level,
        "power_target": target,
        "expected": {"a": pa, "b": pb},
    }
    psi = _discordance(protocol, pa, pb)
    paired: dict = {"discordance": psi, "power": None, "mde": None}
    if psi is not None and psi > 0:
        if pa is not None and pb is not None:
            d = pa - pb
            if abs(d) <= psi:
                p10, p01 = (psi + d) / 2, (psi - d) / 2
                paired["power"] = mcnemar_power_exact(n, p10, p01, alpha=level)
            else:
                paired["note"] = "the expected gap exceeds the discordance; no such pairs"
        mde = mcnemar_mde_exact(n, psi, alpha=level, power=target)
        paired["mde"] = None if mde != mde else mde
    out["paired"] = paired
    pbar = 0.5 if pa is None or pb is None else (pa + pb) / 2
    unpaired: dict = {"pooled_rate": pbar, "power": None, "mde": None}
    if pa is not None and pb is not None:
        unpaired["power"] = fisher_power(pa, n, pb, n, alpha=level)
        spec = TWO_SAMPLE_TESTS.get(protocol.primary_test)
        if spec is not None and spec.certified and n <= 300:  # its own exact power beside
            unpaired["primary_test_power"] = spec.power(pa, n, pb, n, alpha=level)
    m = mde_exact(n, alpha=level, power=target, baseline=min(max(pbar, 0.01), 0.99))
    unpaired["mde"] = None if m.mde != m.mde else float(m.mde)
    out["unpaired"] = unpaired
    if protocol.sequential_design is not None and pa is not None and pb is not None:
        out["sequential"] = _sequential_oc(protocol, pa, pb, psi)
    return out


def _sequential_oc(protocol: Protocol, pa: float, pb: float, psi) -> dict:
    from evalsim.stats.sequential.io import design_from_dict

    design = design_from_dict(protocol.sequential_design)
    from evalsim.stats.sequential.designs import operating_characteristics

    d = pa - pb
    if design.kind == "paired" and psi is not None and abs(d) <= psi:
        oc = operating_characteristics(design, p10=(psi + d) / 2, p01=(psi - d) / 2)
    else:
        oc = operating_characteristics(design, p_a=pa, p_b=pb)
    cert = design.certificate
    return {
        "label": design.label,
        "expected_n": float(oc.ess),
        "power": float(oc.power),
        "verdicts": {k: float(v) for k, v in oc.verdicts.items()},
        "certified_type1": None if cert is None else float(cert.upper),
    }
