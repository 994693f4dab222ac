"""Blind review: a second scorer's labels against the primary scoring, and their agreement.

The console's ``/review`` page stores a second scorer's labels as ``review`` events
(:mod:`evalsim.study.web.console`). :func:`review_agreement` pairs them with the primary
scoring (the operator's live outcomes, unless the protocol's ``rubric.primary_scoring``
says ``review``) trial by trial, and gives Cohen's kappa on success/failure with its
asymptotic interval, the raw agreement, and every disagreement. The report shows it; the
review page never does (it would tell the reviewer how the operator scored).

References
----------
.. [1] Cohen, J. (1960), "A coefficient of agreement for nominal scales", Educational and
   Psychological Measurement 20(1), 37-46.
.. [2] Fleiss, J. L., Cohen, J. and Everitt, B. S. (1969), "Large sample standard errors of
   kappa and weighted kappa", Psychological Bulletin 72(5), 323-327.
.. [3] statsmodels, ``statsmodels.stats.inter_rater.cohens_kappa``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["Agreement", "review_agreement", "cohens_kappa_interval"]


def cohens_kappa_interval(table, confidence: float = 0.95) -> tuple[float, float, float]:
    """Cohen's kappa of a square agreement table and its asymptotic interval.

    Parameters
    ----------
    table : array_like, shape (k, k)
        Counts: rows the first scorer's category, columns the second's.
    confidence : float

    Returns
    -------
    kappa, low, high : float
        NaN where kappa is undefined (both scorers used one and the same category only).
    """
    from statsmodels.stats.inter_rater import cohens_kappa

    t = np.asarray(table, dtype=float)
    n = t.sum()
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    pe = float((t.sum(0) * t.sum(1)).sum() / n**2)
    if pe >= 1.0:
        return float("nan"), float("nan"), float("nan")
    from scipy.stats import norm

    res = cohens_kappa(t)  # its std_kappa: the large-sample (non-null) standard error [2]
    z = float(norm.ppf(0.5 + confidence / 2.0))
    k, se = float(res["kappa"]), float(res["std_kappa"])
    return k, k - z * se, k + z * se


@dataclass(frozen=True)
class Agreement:
    """The agreement between the primary scoring and the blind review.

    Attributes
    ----------
    primary : str
        Which scoring is primary ("operator" or "review").
    n : int
        Trials scored by both.
    agree : int
        Trials where both say the same (success or failure).
    kappa, kappa_low, kappa_high : float
        Cohen's kappa on success/failure and its interval.
    confidence : float
    table : list of list of int
        2 x 2 counts, rows the operator (success, failure), columns the review.
    disagreements : list of dict
        ``trial``, ``code``, ``operator`` and ``review`` (success or the failure type).
    """

    primary: str
    n: int
    agree: int
    kappa: float
    kappa_low: float
    kappa_high: float
    confidence: float
    table: list
    disagreements: list

    def to_dict(self) -> dict:
        d = asdict(self)
        for k in ("kappa", "kappa_low", "kappa_high"):
            d[k] = None if np.isnan(d[k]) else d[k]
        return d


def _label(success: bool, failure) -> str:
    return "success" if success else (f"failure ({failure})" if failure else "failure")


def review_agreement(state, events, primary: str = "operator", confidence: float = 0.95):
    """The agreement of the blind review with the live scoring.

    Parameters
    ----------
    state : evalsim.study.state.StudyState
        The study's state (its active outcomes).
    events : list of evalsim.study.store.Event
        The study's events; the last ``review`` event of a trial is its review label.
    primary : str
        Which scoring the protocol makes primary.
    confidence : float

    Returns
    -------
    Agreement
    """
    labels = {}
    for ev in events:
        if ev.kind == "review" and ev.trial:
            labels[ev.trial] = ev.payload
    table = np.zeros((2, 2), dtype=int)
    disagreements = []
    for trial, o in sorted(state.outcomes.items()):
        if trial not in labels:
            continue
        r = labels[trial]
        rs = bool(r.get("success"))
        table[0 if o.success else 1, 0 if rs else 1] += 1
        if o.success != rs or (not rs and (o.failure or None) != (r.get("failure") or None)):
            disagreements.append(
                {
                    "trial": trial,
                    "code": o.trial.code,
                    "operator": _label(o.success, o.failure),
                    "review": _label(rs, r.get("failure")),
                }
            )
    kappa, lo, hi = cohens_kappa_interval(table, confidence)
    return Agreement(
        primary,
        int(table.sum()),
        int(table[0, 0] + table[1, 1]),
        kappa,
        lo,
        hi,
        confidence,
        table.tolist(),
        disagreements,
    )


#: JSON Schema of the report's ``review`` entry (:func:`review_section`).
REVIEW_SCHEMA: dict = {
    "type": ["object", "null"],
    "description": "blind review: Cohen's kappa of the review against the primary scoring",
}


def review_section(study, st, events) -> dict | None:
    """The report's blind-review entry, or None when nobody has reviewed a trial."""
    if not any(ev.kind == "review" for ev in events):
        return None
    return review_agreement(st, events).to_dict()


def _kappa_text(d: dict) -> str:
    if d["kappa"] is None:
        return "kappa undefined (one category only)"
    return (
        f"Cohen's kappa {d['kappa']:.3f}, {100 * d['confidence']:.0f}% interval "
        f"[{d['kappa_low']:.3f}, {d['kappa_high']:.3f}]"
    )


def review_html(d: dict | None, escape) -> list[str]:
    """HTML lines of the report's blind-review section (``escape``: the report's escaper)."""
    if not d:
        return []
    out = [
        "<h2>Blind review</h2>",
        f'<p id="review-kappa">{escape(_kappa_text(d))}: {d["agree"]} of {d["n"]} trials '
        f"scored alike by the operator (primary scoring: {escape(d['primary'])}) and the "
        "blind reviewer.</p>",
    ]
    if d["disagreements"]:
        rows = "".join(
            f"<li>{escape(x['trial'])} ({escape(x['code'])}): operator {escape(x['operator'])}"
            f", review {escape(x['review'])}</li>"
            for x in d["disagreements"]
        )
        out.append(f'<ul id="review-disagreements">{rows}</ul>')
    return out


def review_markdown(d: dict | None) -> list[str]:
    """Markdown lines of the report's blind-review section."""
    if not d:
        return []
    out = [
        "## Blind review",
        "",
        f"{_kappa_text(d)}: {d['agree']} of {d['n']} trials scored alike "
        f"(primary scoring: {d['primary']}).",
        "",
    ]
    out += [
        f"- {x['trial']} ({x['code']}): operator {x['operator']}, review {x['review']}"
        for x in d["disagreements"]
    ]
    return out + [""]
