"""The analysis a study locked: the primary test exactly as declared, then the rest.

Every number comes from :mod:`evalsim.stats`: the exact McNemar test
(:func:`~evalsim.stats.two_sample.paired.mcnemar_pvalue`), Fisher's exact test
(:func:`~evalsim.stats.two_sample.fisher.fisher_pvalue` and its one-sided form), Boschloo's
exact unconditional test (:func:`~evalsim.stats.two_sample.unconditional.unconditional_pvalue`),
a sequential design's rule (:func:`~evalsim.stats.sequential.io.check_paired` /
``check_unpaired``), Wilson and Clopper-Pearson intervals, Tango's paired difference interval
and Newcombe's unpaired one, and the independence checks (runs, trend, halves). The decision
rule is :func:`evalsim.stats.decision.rejects` (reject when ``p < alpha``).

A null result is never reported as "equal": it reads "not detected at this n; the study
could have detected a difference of at least X with 80% power", with X the exact MDE of the
locked test at the n reached.

The primary analysis uses the trials of the primary comparison's two arms recorded before a
sequential stop; pairs are the conditions where both arms have an outcome, in the order the
pair was completed.
"""

from __future__ import annotations

from evalsim.study.state import StudyState

__all__ = [
    "MDE_POWER",
    "arm_outcomes",
    "completed_pairs",
    "primary_analysis",
    "secondary_analyses",
    "arm_summaries",
    "independence_by_arm",
    "sequential_decision",
]

#: Power at which a null verdict quotes the smallest detectable difference.
MDE_POWER = 0.8

_SEQ_WORDS = {"B better": "b-better", "A better": "a-better"}


def arm_outcomes(study, st: StudyState, primary_only: bool = True) -> dict[str, list]:
    """``{arm: [Outcome, ...]}`` in the order recorded (after-stop trials left out when
    ``primary_only``)."""
    out: dict[str, list] = {a: [] for a in study.protocol.arms}
    for o in st.ordered_outcomes():
        if primary_only and o.after_stop:
            continue
        out[o.trial.arm].append(o)
    return out


def completed_pairs(study, st: StudyState) -> list[tuple[str, bool, bool]]:
    """``(condition, success of a, success of b)`` of each completed pair of the primary
    comparison, in the order the pairs were completed (after-stop trials left out)."""
    a, b = study.protocol.arm_a, study.protocol.arm_b
    seen: dict[str, dict] = {}
    for o in st.ordered_outcomes():
        if o.after_stop or o.trial.arm not in (a, b):
            continue
        seen.setdefault(o.trial.condition, {})[o.trial.arm] = o
    pairs = [(c, d) for c, d in seen.items() if a in d and b in d]
    pairs.sort(key=lambda cd: max(cd[1][a].event.seq, cd[1][b].event.seq))
    return [(c, d[a].success, d[b].success) for c, d in pairs]


def sequential_decision(study, st: StudyState) -> dict:
    """The locked sequential design's decision on the outcomes so far.

    Returns
    -------
    dict
        ``status`` ("continue" or "stop"), ``verdict`` (``b-better``, ``a-better``,
        ``no difference shown``, ``futility`` or None), ``at`` (pairs or trials per arm),
        ``boundary`` (which boundary, in words), ``certified_type1`` (the design's certified
        worst-case false-win rate), ``tallies``.
    """
    from evalsim.stats.sequential.io import check_paired, check_unpaired, design_from_dict

    design = design_from_dict(study.protocol.sequential_design)
    if design.kind == "paired":
        pairs = completed_pairs(study, st)
        res = check_paired(design, [p[1] for p in pairs], [p[2] for p in pairs])
    else:
        by_arm = arm_outcomes(study, st)
        res = check_unpaired(
            design,
            [o.success for o in by_arm[study.protocol.arm_a]],
            [o.success for o in by_arm[study.protocol.arm_b]],
        )
    cert = design.certificate
    verdict = None
    if res.verdict is not None:
        verdict = _SEQ_WORDS.get(res.verdict, res.verdict)
    return {
        "status": res.status,
        "verdict": verdict,
        "at": int(res.at),
        "boundary": res.boundary,
        "certified_type1": None if cert is None else float(cert.upper),
        "tallies": {k: int(v) for k, v in res.tallies.items()},
        "interval_b_minus_a": None if res.interval is None else list(res.interval),
    }


def _has_data(paired: bool, counts: dict) -> bool:
    """A test of pairs needs a pair; a test of two arms, a trial of each."""
    return counts["pairs"] > 0 if paired else min(counts["n_a"], counts["n_b"]) > 0


def _test_pvalue(test: str, alternative: str, counts: dict) -> tuple[float, dict]:
    """The p-value of one exact test on the counts, and its extra fields."""
    from evalsim.study.schema import PRIMARY_TESTS

    # SciPy's sides, with a as the first sample: b better means a's rate is less
    side = {"two-sided": "two-sided", "b-better": "less", "a-better": "greater"}[alternative]
    if PRIMARY_TESTS[test].paired:  # the exact McNemar test, on the discordant pairs
        from evalsim.stats.two_sample.paired import mcnemar_pvalue

        return mcnemar_pvalue(counts["a_only"], counts["b_only"], side), {}
    from evalsim.stats.names import TWO_SAMPLE_TESTS

    ka, na, kb, nb = counts["k_a"], counts["n_a"], counts["k_b"], counts["n_b"]
    p, cert = TWO_SAMPLE_TESTS[test].pvalue(ka, na, kb, nb, alternative=side)
    if cert is None:  # a conditional test: a finite sum, nothing to certify
        return float(p), {}
    return float(p), {
        "pvalue_upper_bound": float(cert["pvalue_upper_bound"]),
        "certified": cert["certified"],
    }


def _counts(study, st: StudyState) -> dict:
    a, b = study.protocol.arm_a, study.protocol.arm_b
    by_arm = arm_outcomes(study, st)
    pairs = completed_pairs(study, st)
    return {
        "k_a": sum(o.success for o in by_arm[a]),
        "n_a": len(by_arm[a]),
        "k_b": sum(o.success for o in by_arm[b]),
        "n_b": len(by_arm[b]),
        "pairs": len(pairs),
        "both_succeed": sum(1 for _, x, y in pairs if x and y),
        "a_only": sum(1 for _, x, y in pairs if x and not y),
        "b_only": sum(1 for _, x, y in pairs if y and not x),
        "both_fail": sum(1 for _, x, y in pairs if not x and not y),
    }


def _mde(study, counts: dict) -> dict:
    """The exact MDE of the locked test at the n reached (at the plan's level and 80% power):
    McNemar's for a paired study (the locked test is then McNemar's or the sequential rule on
    pairs), Fisher's for an unpaired one."""
    from evalsim.stats.two_sample.design import mde_exact
    from evalsim.stats.two_sample.paired_design import mcnemar_mde_exact
    from evalsim.study.plan import plan_level

    level = plan_level(study.protocol)
    if study.protocol.paired:
        n = counts["pairs"]
        planned = study.lock.get("plan", {}).get("paired", {}).get("discordance")
        observed = (counts["a_only"] + counts["b_only"]) / n if n else None
        psi, source = (planned, "planned") if planned else (observed, "observed")
        if n and psi:
            m = mcnemar_mde_exact(n, psi, alpha=level, power=MDE_POWER)
            if m == m:
                return {"mde": m, "n": n, "discordance": psi, "discordance_from": source}
        return {"mde": None, "n": n, "discordance": psi, "discordance_from": source}
    n = min(counts["n_a"], counts["n_b"])
    if n == 0:
        return {"mde": None, "n": 0}
    pooled = (counts["k_a"] + counts["k_b"]) / (counts["n_a"] + counts["n_b"])
    m = mde_exact(n, alpha=level, power=MDE_POWER, baseline=min(max(pooled, 0.02), 0.98))
    return {"mde": None if m.mde != m.mde else float(m.mde), "n": n, "pooled_rate": pooled}


def _verdict(direction: str | None, la: str, lb: str, mde: dict, unit_n: str) -> str:
    if direction == "b-better":
        return f"{lb} detected better than {la}"
    if direction == "a-better":
        return f"{la} detected better than {lb}"
    x = mde.get("mde")
    tail = (
        f"the study could have detected a difference of at least {100 * x:.0f} percentage "
        f"points with {100 * MDE_POWER:.0f}% power"
        if x is not None
        else "at this n no difference of any size could be detected with 80% power"
    )
    return f"not detected at this n; {tail}"


def primary_analysis(study, st: StudyState, unblinded: bool) -> dict:
    """The locked primary test on the trials recorded so far.

    Parameters
    ----------
    study : Study
    st : StudyState
    unblinded : bool
        Name the arms (True) or their blind codes (False) in the verdict.

    Returns
    -------
    dict
        ``test``, ``label``, ``alpha``, ``alternative``, ``counts``, ``pvalue`` (None for a
        sequential design), ``rejects``, ``direction`` (``b-better``, ``a-better`` or None),
        ``verdict`` (plain words), ``mde``, ``complete`` (every scheduled trial of the two
        arms done, or the sequential design stopped), ``sequential`` (its decision).
    """
    from evalsim.stats.decision import rejects
    from evalsim.study.schema import PRIMARY_TESTS

    p = study.protocol
    test = p.primary_test
    la, lb = study.label(p.arm_a, unblinded), study.label(p.arm_b, unblinded)
    counts = _counts(study, st)
    out: dict = {
        "test": test,
        "label": PRIMARY_TESTS[test].label,
        "alpha": p.alpha,
        "alternative": p.alternative,
        "arm_a": la,
        "arm_b": lb,
        "counts": counts,
        "pvalue": None,
        "sequential": None,
    }
    unit_n = (
        f"{counts['pairs']} pairs" if p.paired else (f"{counts['n_a']} and {counts['n_b']} trials")
    )
    direction = None
    if PRIMARY_TESTS[test].sequential:
        dec = sequential_decision(study, st)
        out["sequential"] = dec
        out["rejects"] = dec["status"] == "stop" and dec["verdict"] in ("b-better", "a-better")
        direction = dec["verdict"] if out["rejects"] else None
        out["complete"] = dec["status"] == "stop"
    else:
        if _has_data(p.paired, counts):  # the locked test is paired exactly when the design is
            pv, extra = _test_pvalue(test, p.alternative, counts)
            out["pvalue"] = pv
            out.update(extra)
            out["rejects"] = bool(rejects(pv, p.alpha))
        else:
            out["rejects"] = False
        if out["rejects"]:
            if p.paired:
                b_ahead = counts["b_only"] > counts["a_only"]
            else:
                b_ahead = counts["k_b"] * counts["n_a"] > counts["k_a"] * counts["n_b"]
            direction = "b-better" if b_ahead else "a-better"
        scheduled = sum(1 for t in st.schedule if t.arm in (p.arm_a, p.arm_b))
        done = counts["n_a"] + counts["n_b"]
        out["complete"] = done >= scheduled
    out["direction"] = direction
    out["mde"] = _mde(study, counts) if direction is None else None
    empty = counts["pairs"] == 0 if p.paired else min(counts["n_a"], counts["n_b"]) == 0
    if empty:
        what = "pairs" if p.paired else "trials of both arms"
        out["verdict"] = f"no {what} recorded yet: nothing is decided"
    else:
        out["verdict"] = _verdict(direction, la, lb, out["mde"] or {}, unit_n)
    return out


def secondary_analyses(study, st: StudyState) -> list[dict]:
    """Each declared secondary test on the same trials, labelled as not primary."""
    from evalsim.stats.decision import rejects
    from evalsim.study.schema import PRIMARY_TESTS

    p = study.protocol
    counts = _counts(study, st)
    out = []
    for test in p.secondary_tests:
        if not _has_data(PRIMARY_TESTS[test].paired, counts):
            continue
        pv, extra = _test_pvalue(test, p.alternative, counts)
        out.append(
            {
                "test": test,
                "pvalue": pv,
                "rejects_at_alpha": bool(rejects(pv, p.alpha)),
                "note": "secondary: not pre-registered as primary",
                **extra,
            }
        )
    return out


def arm_summaries(study, st: StudyState, unblinded: bool, confidence: float = 0.95) -> list:
    """Per arm: k/n, Wilson and Clopper-Pearson intervals, failure types."""
    from evalsim.stats.proportion.intervals import clopper_pearson_interval, wilson_interval

    rows = []
    for arm, outs in arm_outcomes(study, st).items():
        k, n = sum(o.success for o in outs), len(outs)
        row = {"arm": study.label(arm, unblinded), "k": k, "n": n, "rate": k / n if n else None}
        if n:
            w = wilson_interval(k, n, confidence=confidence)
            c = clopper_pearson_interval(k, n, confidence=confidence)
            row["wilson"] = [float(w.lower), float(w.upper)]
            row["clopper_pearson"] = [float(c.lower), float(c.upper)]
        else:
            row["wilson"] = row["clopper_pearson"] = None
        fails: dict[str, int] = {}
        for o in outs:
            if not o.success:
                key = o.failure or "unspecified"
                fails[key] = fails.get(key, 0) + 1
        row["failure_types"] = fails
        rows.append(row)
    return rows


def paired_difference(study, st: StudyState, confidence: float = 0.95) -> dict | None:
    """The paired table and Tango's interval for p_b - p_a (None without pairs)."""
    from evalsim.stats.two_sample.paired import PairedCounts, paired_diff_interval

    c = _counts(study, st)
    if not c["pairs"]:
        return None
    counts = PairedCounts(c["both_succeed"], c["a_only"], c["b_only"], c["both_fail"])
    iv = paired_diff_interval(counts, method="tango", confidence=confidence)
    # Tango's interval is for p_a - p_b; the report states p_b - p_a.
    return {
        "both_succeed": c["both_succeed"],
        "a_only": c["a_only"],
        "b_only": c["b_only"],
        "both_fail": c["both_fail"],
        "difference_b_minus_a": (c["b_only"] - c["a_only"]) / c["pairs"],
        "interval": [-float(iv.upper), -float(iv.lower)],
        "method": "Tango score interval",
    }


def unpaired_difference(study, st: StudyState, confidence: float = 0.95) -> dict | None:
    """Newcombe's interval for p_b - p_a from the two arms' totals."""
    from evalsim.stats.two_sample.paired import diff_interval

    c = _counts(study, st)
    if not (c["n_a"] and c["n_b"]):
        return None
    iv = diff_interval(c["k_b"], c["n_b"], c["k_a"], c["n_a"], "newcombe", confidence)
    return {
        "difference_b_minus_a": c["k_b"] / c["n_b"] - c["k_a"] / c["n_a"],
        "interval": [float(iv.lower), float(iv.upper)],
        "method": "Newcombe hybrid score interval",
    }


def independence_by_arm(study, st: StudyState, unblinded: bool, alpha: float = 0.05) -> list:
    """Runs, trend and halves checks of each arm's outcomes in time order, overall and per
    block (session); a sequence shorter than 4 is not checked."""
    from evalsim.stats.independence.checks import independence_checks

    rows = []
    for arm, outs in arm_outcomes(study, st).items():
        groups = [("all", outs)]
        blocks = list(dict.fromkeys(o.trial.block for o in outs))
        if len(blocks) > 1:
            groups += [(b, [o for o in outs if o.trial.block == b]) for b in blocks]
        for name, seq in groups:
            x = [int(o.success) for o in seq]
            row = {"arm": study.label(arm, unblinded), "block": name, "n": len(x)}
            if len(x) < 4 or len(set(x)) < 2:
                row.update({"checked": False, "flagged": [], "pvalues": None})
            else:
                c = independence_checks(x, alpha=alpha)
                row.update(
                    {
                        "checked": True,
                        "flagged": list(c.flagged),
                        "pvalues": {k: float(v) for k, v in c.pvalues.items()},
                    }
                )
            rows.append(row)
    return rows
