"""``--order COLUMN`` for ``summarize`` and ``compare``: are the trials independent?

Lesson 25: "Independence is the assumption that fails first. Servo heating, a cube that
wears, a shifted camera and the operator's resets all make trials correlated. Interleave the
policies (A, B, A, B, ...) rather than running all of A first."

With ``--order`` naming a trial index or a timestamp column, each policy's success sequence
(in that order; per task when the log has several) gets the three exact checks of
:mod:`evalsim.stats.independence.checks` -- runs, Cochran-Armitage trend, first half vs second half
-- and a plain-words warning when the smallest p-value is below alpha / 3 (Bonferroni over
the three checks, so an i.i.d. log raises it with probability at most alpha per policy).
``compare`` also says whether the two policies were interleaved, and warns when all of one
ran before the other.

This module is a log hook of ``summarize`` and ``compare``
(:data:`evalsim.cli._log_hooks.LOG_HOOKS`): :func:`add_order_argument` declares the option
and :func:`apply_hook` adds the tables, warnings and the ``independence`` key of the JSON
output. The two subcommands only keep the column when they read the log
(:func:`order_columns`).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

import numpy as np

from evalsim.cli._common import BadInput, Report, _p, _pct, column_flag

# evalsim.stats modules are imported inside the functions that use them: they load numba
# kernels and SciPy, which a command on a small log should not pay for at start (issue 24).

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "add_order_argument",
    "add_report",
    "apply_hook",
    "independence_data",
    "order_columns",
]

ORDER_DEST = "order"


def add_order_argument(p: argparse.ArgumentParser) -> None:
    """Add ``--order COLUMN`` to a subcommand's parser."""
    p.add_argument(
        "--order",
        dest=ORDER_DEST,
        metavar="COLUMN",
        help=(
            "trial index or timestamp column: check per policy that the trials look "
            "independent (exact runs, trend and first-vs-second-half tests)"
        ),
    )
    dates = p.add_mutually_exclusive_group()
    dates.add_argument(
        "--dayfirst",
        dest="dayfirst",
        action="store_const",
        const=True,
        default=None,
        help="--order dates like 03/02/2026 are day-first (3 February); by default the "
        "format is detected over the whole column and ambiguous dates are refused",
    )
    dates.add_argument(
        "--monthfirst",
        dest="dayfirst",
        action="store_const",
        const=False,
        help="--order dates like 03/02/2026 are month-first (2 March)",
    )


def order_columns(args) -> tuple[str, ...]:
    """The column(s) the log reader must keep: the ``--order`` column, lower-cased."""
    return column_flag(args, ORDER_DEST, "--order")


#: A date written with the day and the month as numbers first (03/02/2026, 3.2.26 09:00).
_NUMERIC_DATE = r"^\s*(\d{1,2})[/.\-](\d{1,2})[/.\-](\d{2,4})(?!\d)"


def date_order(text: pd.Series, column: str, dayfirst: bool | None = None) -> bool | None:
    """Whether the column's numeric dates are day-first, decided over the whole column.

    Issue 45, item 12: parsed one by one, "13/02/2026" is read day-first (13 > 12) and
    "05/02/2026" month-first, scrambling the order. A first number above 12 anywhere in the
    column makes it day-first, a second number above 12 month-first; both is an error, and
    neither (every date ambiguous) is an error unless ``dayfirst`` says which.

    Parameters
    ----------
    text : Series of str
        The column, stripped.
    column : str
        Its name, for messages.
    dayfirst : bool, optional
        ``--dayfirst`` (True) or ``--monthfirst`` (False); checked against the column.

    Returns
    -------
    bool or None
        ``dayfirst`` for the parser; None when the column holds no such dates (ISO dates,
        numbers).

    Raises
    ------
    BadInput
        Day-first and month-first dates in one column, a flag the column contradicts, or
        ambiguous dates without a flag.
    """
    parts = text.str.extract(_NUMERIC_DATE)
    has = parts[0].notna().to_numpy()
    if not has.any():
        return None
    first = parts[0].to_numpy()[has].astype(int)
    second = parts[1].to_numpy()[has].astype(int)
    rows = np.flatnonzero(has)
    day_rows, month_rows = rows[first > 12], rows[second > 12]
    if day_rows.size and month_rows.size:
        raise BadInput(
            f"--order column {column!r}: {text.iloc[day_rows[0]]!r} (data row {day_rows[0] + 1}) "
            f"is day-first but {text.iloc[month_rows[0]]!r} (data row {month_rows[0] + 1}) is "
            "month-first; one column must use one date format"
        )
    found = True if day_rows.size else (False if month_rows.size else None)
    if found is not None and dayfirst is not None and found != dayfirst:
        row = (day_rows if found else month_rows)[0]
        said, flag = ("day", "monthfirst") if found else ("month", "dayfirst")
        raise BadInput(
            f"--order column {column!r}: {text.iloc[row]!r} (data row {row + 1}) is "
            f"{said}-first, against --{flag}"
        )
    if found is None and dayfirst is None:
        raise BadInput(
            f"--order column {column!r}: dates like {text.iloc[rows[0]]!r} are ambiguous (no "
            "date in the column has a day above 12 to tell day-first from month-first); give "
            "--dayfirst or --monthfirst"
        )
    return found if found is not None else dayfirst


def _order_key(values: pd.Series, column: str, dayfirst: bool | None = None) -> np.ndarray:
    """Sortable int64/float keys from a numeric or timestamp column; BadInput otherwise.
    Numeric dates are day-first or month-first over the whole column (:func:`date_order`)."""
    import pandas as pd  # heavy: only with --order, which reads the log with pandas

    if pd.api.types.is_numeric_dtype(values) and values.notna().all():
        return values.to_numpy(dtype=np.float64)
    text = values.astype(str).str.strip()
    empty = (text == "") | values.isna()
    if empty.any():
        raise BadInput(f"--order column {column!r} is empty in data row {int(empty.argmax()) + 1}")
    num = pd.to_numeric(text, errors="coerce")
    if num.notna().all():
        return num.to_numpy(dtype=np.float64)
    first = date_order(text, column, dayfirst)
    when = pd.to_datetime(text, errors="coerce", utc=True, format="mixed", dayfirst=bool(first))
    if when.notna().all():
        return when.astype("int64").to_numpy()
    bad = num.isna() & when.isna()
    i = int(bad.to_numpy().argmax())
    raise BadInput(
        f"--order column {column!r}: {text.iloc[i]!r} in data row {i + 1} is neither a number "
        "nor a timestamp"
    )


def _words(policy: str, checks) -> str:
    """One plain-words warning for a flagged sequence (the most telling check first)."""
    h, t, r = checks.halves, checks.trend, checks.runs
    first, second = _pct(h.rate_first, 0), _pct(h.rate_second, 0)
    if "trend" in checks.flagged or "halves" in checks.flagged:
        verb = "fell" if t.statistic < t.expected else "rose"
        which, p = ("trend", t.pvalue) if "trend" in checks.flagged else ("halves", h.pvalue)
        what = f"success {verb} from {first} to {second} over the session ({which} p = {_p(p)})"
        if "runs" in checks.flagged:
            what += f", and successes and failures come in streaks (runs p = {_p(r.pvalue)})"
    elif r.runs < r.expected_runs:
        what = (
            f"successes and failures come in streaks: {r.runs} runs where about "
            f"{r.expected_runs:.0f} are expected (runs p = {_p(r.pvalue)})"
        )
    else:
        what = (
            f"successes and failures alternate more than chance allows: {r.runs} runs where "
            f"about {r.expected_runs:.0f} are expected (runs p = {_p(r.pvalue)})"
        )
    return (
        f"warning: {policy}: {what}: the trials are not independent, so the binomial interval "
        "and the tests above are too optimistic; look for drift (servo heating, a worn cube, "
        "a moved camera, resets) and interleave the policies"
    )


def _group_checks(df: pd.DataFrame, key: np.ndarray, alpha: float) -> list[dict]:
    from evalsim.stats.independence.checks import independence_checks

    checks_of = independence_checks
    keys = ["policy"] + (["task"] if "task" in df.columns and df["task"].nunique() > 1 else [])
    success = df["success"].to_numpy()
    out = []
    for values, rows in sorted(df.groupby(keys, sort=True).indices.items()):
        values = values if isinstance(values, tuple) else (values,)
        row = dict(zip(keys, values, strict=True))
        label = " / ".join(str(v) for v in values)
        order = key[rows]
        x = success[rows][np.argsort(order, kind="stable")]
        row.update(
            {
                "n": int(x.size),
                "n_success": int(x.sum()),
                "ties": int(x.size) - int(np.unique(order).size),
            }
        )
        if x.size < 4:
            row.update({"checked": False, "dependent": False, "warning": None})
            out.append(row)
            continue
        c = checks_of(x, alpha)
        row.update(
            {
                "checked": True,
                "runs": {
                    "runs": c.runs.runs,
                    "expected": c.runs.expected_runs,
                    "pvalue": c.runs.pvalue,
                },
                "trend": {
                    "statistic": c.trend.statistic,
                    "expected": c.trend.expected,
                    "pvalue": c.trend.pvalue,
                    "method": c.trend.method,
                },
                "halves": {
                    "k_first": c.halves.k_first,
                    "n_first": c.halves.n_first,
                    "k_second": c.halves.k_second,
                    "n_second": c.halves.n_second,
                    "pvalue": c.halves.pvalue,
                },
                "flagged": list(c.flagged),
                "dependent": c.dependent,
                "warning": _words(label, c) if c.dependent else None,
            }
        )
        out.append(row)
    return out


def _interleaving(df: pd.DataFrame, order: np.ndarray, a: str, b: str) -> dict:
    """How the trials of A and B were ordered in the session."""
    labels = df["policy"].to_numpy()[np.argsort(order, kind="stable")]
    n_a, n_b = int((labels == a).sum()), int((labels == b).sum())
    switches = int((labels[1:] != labels[:-1]).sum())
    most = 2 * min(n_a, n_b) - (1 if n_a == n_b else 0)
    o_a, o_b = order[df["policy"].to_numpy() == a], order[df["policy"].to_numpy() == b]
    if o_a.max() < o_b.min():
        status, first = "blocked", a
    elif o_b.max() < o_a.min():
        status, first = "blocked", b
    elif switches == most:
        status, first = "interleaved", None
    else:
        status, first = "partly interleaved", None
    return {"status": status, "first": first, "switches": switches, "max_switches": most}


def independence_data(
    df: pd.DataFrame, column: str, alpha: float, pair=None, dayfirst: bool | None = None
) -> dict:
    """The ``independence`` section: per-group checks, warnings and (for a pair) interleaving.

    Parameters
    ----------
    df : DataFrame
        The trial log with ``policy``, ``success`` and the order column.
    column : str
        The order column (lower-case).
    alpha : float
        Family-wise level of the three checks (each at alpha / 3).
    pair : (str, str), optional
        ``compare``'s A and B: also report how they were interleaved.
    dayfirst : bool, optional
        ``--dayfirst`` / ``--monthfirst`` for numeric dates (:func:`date_order`).
    """
    key = _order_key(df[column], column, dayfirst)
    groups = _group_checks(df, key, alpha)
    warnings = [g["warning"] for g in groups if g["warning"]]
    data = {"order_column": column, "alpha": alpha, "level_each": alpha / 3, "groups": groups}
    if pair is not None:
        a, b = pair
        inter = _interleaving(df, key, a, b)
        data["interleaving"] = inter
        if inter["status"] == "blocked":
            second = b if inter["first"] == a else a
            warnings.append(
                f"warning: all of {inter['first']} ran before {second} (by {column}): any drift "
                "over the session (servo heating, a worn cube) is mixed into the difference "
                "between the policies; interleave them (A, B, A, B, ...) as lesson 25 advises"
            )
    data["warnings"] = warnings
    return data


def add_report(rep: Report, df: pd.DataFrame, args, alpha: float, pair=None) -> None:
    """Append the ``--order`` section to a subcommand's report (no-op without ``--order``)."""
    cols = order_columns(args)
    if not cols:
        return
    data = independence_data(df, cols[0], alpha, pair, getattr(args, "dayfirst", None))
    rep.data["independence"] = data
    rows = []
    for g in data["groups"]:
        label = " / ".join(str(g[k]) for k in ("policy", "task") if k in g)
        if not g["checked"]:
            rows.append([label, g["n"], "—", "—", "—", "—", "too few trials (< 4)"])
            continue
        h = g["halves"]
        first, second = h["k_first"] / h["n_first"], h["k_second"] / h["n_second"]
        rows.append(
            [
                label,
                g["n"],
                f"{g['runs']['runs']} vs {g['runs']['expected']:.1f}: p {_p(g['runs']['pvalue'])}",
                _p(g["trend"]["pvalue"]),
                f"{_pct(first, 0)} -> {_pct(second, 0)}",
                _p(h["pvalue"]),
                "DEPENDENT (" + ", ".join(g["flagged"]) + ")"
                if g["dependent"]
                else "looks independent",
            ]
        )
    rep.table(
        f"Independence over trial order (--order {cols[0]}; exact tests, flagged below "
        f"alpha/3 = {alpha / 3:.3g})",
        ["policy", "n", "runs (obs vs exp)", "trend p", "1st -> 2nd half", "halves p", "verdict"],
        rows,
    )
    ties = sum(g["ties"] for g in data["groups"])
    if ties:
        rep.line(f"note: {ties} trial(s) share an order value with another; kept in file order")
    if "interleaving" in data:
        inter = data["interleaving"]
        rep.line(
            f"order of the policies: {inter['status']} ({inter['switches']} of at most "
            f"{inter['max_switches']} switches between them)"
        )
    for w in data["warnings"]:
        rep.line(w)


def apply_hook(args, df: pd.DataFrame, rep: Report) -> None:
    """The log hook: ``summarize`` at alpha = 1 - ``--confidence``; ``compare`` at its
    ``--alpha``, on the trials of ``--a`` and ``--b``, with their interleaving."""
    if not order_columns(args):
        return
    if getattr(args, "a", None) is not None and getattr(args, "b", None) is not None:
        pair = (args.a, args.b)
        add_report(rep, df[df["policy"].isin(pair)], args, args.alpha, pair=pair)
    else:
        add_report(rep, df, args, 1 - args.confidence)


def verdict_qualifications(data: dict) -> list[str]:
    """Why a verdict cannot be read at face value: the order checks a report carries.

    Issue 45, item 13: a verdict printed under "DEPENDENT" or "all of A ran before B" must
    say so itself. Reads the ``independence`` section (:func:`independence_data`) and the
    whole-session one (:mod:`evalsim.cli._session`) of a report's JSON record.

    Returns
    -------
    list of str
        One reason per failed independence check or blocked order, in report order; empty
        when the order was not checked or nothing failed.
    """
    reasons = []
    ind = data.get("independence") or {}
    for g in ind.get("groups", []):
        if g.get("dependent"):
            label = " / ".join(str(g[k]) for k in ("policy", "task") if k in g)
            reasons.append(
                f"{label}: the trials are not independent ({', '.join(g['flagged'])} "
                f"below alpha/3 over {ind['order_column']})"
            )
    inter = ind.get("interleaving")
    if inter and inter["status"] == "blocked":
        others = sorted({str(g["policy"]) for g in ind["groups"]} - {inter["first"]})
        reasons.append(
            f"all of {inter['first']} ran before {' and '.join(others) or 'the other'} (by "
            f"{ind['order_column']}): drift is mixed into the difference"
        )
    for g in (data.get("session_independence") or {}).get("groups", []):
        if g.get("dependent"):
            reasons.append(
                f"{g['policy']}: its success rate moves over the whole session "
                f"({', '.join(g['flagged'])})"
            )
    return reasons


def qualify_verdict(rep: Report, verdict: str) -> str:
    """The verdict line of ``rep``, qualified by :func:`verdict_qualifications`; sets the
    JSON keys ``qualified`` (bool), ``qualified_reasons`` (list) and ``verdict``."""
    reasons = verdict_qualifications(rep.data)
    rep.data["qualified"] = bool(reasons)
    rep.data["qualified_reasons"] = reasons
    if not reasons:
        rep.data["verdict"] = verdict
        return f"verdict: {verdict}"
    why = "; ".join(reasons)
    rep.data["verdict"] = f"qualified ({why}): {verdict}"
    return f"verdict (qualified: {why}): {verdict}"
