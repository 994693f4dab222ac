"""Design files and running a design on a trial log.

Design file format (JSON, ``"format": "evalsim-sequential-design"``, ``"version": 1``). All
boundaries are integers, so anyone can recompute the error rates with their own code.

Common keys: ``kind`` ("unpaired" or "paired"), ``alternative`` ("one-sided": verdict "B
better" only; "two-sided"), ``alpha``, ``n_max`` (trials per policy, or pairs),
``boundary`` (how the boundaries were made, informative only), ``futility`` (null or
``{"z": z_f, "from": t}``, informative: the integer rows below are what counts),
``certificate`` (the proven bound, see :class:`evalsim.stats.sequential.Certificate`).

Unpaired: ``looks`` is a list, one object per look, in order::

    {"n": m,                                  # trials per policy at this look
     "critical_z": c,                         # pooled z critical value (null: none)
     "b_better_if_kB_at_least": [u_0, ..., u_m],   # by k_A = 0..m; m + 1 = never
     "a_better_if_kB_at_most":  [l_0, ..., l_m],   # two-sided only; -1 = never
     "futility_if_kB_from": [...], "futility_if_kB_to": [...]}  # only with futility

At look j, with ``k_A`` and ``k_B`` successes in the first m trials of each policy, the
design stops with "B better" when ``k_B >= u[k_A]``, else "A better" when ``k_B <= l[k_A]``,
else for futility when ``from[k_A] <= k_B <= to[k_A]``. After the last look it stops with
"no difference shown".

Paired: pairs are (A, B) outcomes on the same condition; after every pair, with ``d``
discordant pairs so far and ``w`` of them won by B alone, ``rows`` holds arrays indexed by
``d = 0..d_max``::

    "b_better_if_wB_at_least", "a_better_if_wB_at_most",           # interim
    "final_b_better_if_wB_at_least", "final_a_better_if_wB_at_most",  # at n_max pairs or d_max
    "futility_if_wB_from", "futility_if_wB_to"                        # from pair futility.from

with the same sentinels (``d + 1`` never, ``-1`` never). The design stops at the first pair
where a verdict applies; when the pair count reaches ``n_max`` or d reaches ``d_max`` the
final rows decide.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr, ndtri  # norm.cdf, norm.ppf without loading scipy.stats

from evalsim.io import write_text_atomic
from evalsim.stats.sequential.core import ALTERNATIVES, Certificate, SequentialDesign

__all__ = [
    "FORMAT",
    "CheckResult",
    "check_paired",
    "check_unpaired",
    "design_from_dict",
    "design_json",
    "design_to_dict",
    "load_design",
    "replay_paired",
    "replay_unpaired",
    "save_design",
]

FORMAT = "evalsim-sequential-design"
VERSION = 1
_UNPAIRED_KEYS = {
    "upper": "b_better_if_kB_at_least",
    "lower": "a_better_if_kB_at_most",
    "fut_lo": "futility_if_kB_from",
    "fut_hi": "futility_if_kB_to",
}
_PAIRED_KEYS = {
    "upper": "b_better_if_wB_at_least",
    "lower": "a_better_if_wB_at_most",
    "final_upper": "final_b_better_if_wB_at_least",
    "final_lower": "final_a_better_if_wB_at_most",
    "fut_lo": "futility_if_wB_from",
    "fut_hi": "futility_if_wB_to",
}


def _ints(a) -> list[int]:
    return [int(v) for v in a]


def design_to_dict(design: SequentialDesign) -> dict:
    """The design file's content (see the module docstring)."""
    out = {
        "format": FORMAT,
        "version": VERSION,
        "kind": design.kind,
        "alternative": design.alternative,
        "alpha": design.alpha,
        "n_max": design.n_max,
        "boundary": design.boundary,
        "futility": design.futility,
        "certificate": None if design.certificate is None else design.certificate.to_dict(),
    }
    r = design.rows
    if design.kind == "paired":
        out["d_max"] = design.d_max
        out["rows"] = {name: _ints(r[key]) for key, name in _PAIRED_KEYS.items()}
        return out
    looks = []
    for j, m in enumerate(design.look_sizes.tolist()):
        c = float(r["crit"][j])
        look = {"n": m, "critical_z": c if math.isfinite(c) else None}
        look[_UNPAIRED_KEYS["upper"]] = _ints(r["upper"][j, : m + 1])
        if design.two_sided:
            look[_UNPAIRED_KEYS["lower"]] = _ints(r["lower"][j, : m + 1])
        if design.futility is not None:
            look[_UNPAIRED_KEYS["fut_lo"]] = _ints(r["fut_lo"][j, : m + 1])
            look[_UNPAIRED_KEYS["fut_hi"]] = _ints(r["fut_hi"][j, : m + 1])
        looks.append(look)
    out["looks"] = looks
    return out


def _need(d: dict, key: str, where: str = "design"):
    if key not in d:
        raise ValueError(f"{where}: missing key {key!r}")
    return d[key]


def _int_row(values, length: int, name: str) -> np.ndarray:
    if not isinstance(values, list) or len(values) != length:
        got = len(values) if isinstance(values, list) else type(values).__name__
        raise ValueError(f"design: {name} must be a list of {length} integers, got {got}")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise ValueError(f"design: {name} must hold integers only")
    return np.asarray(values, dtype=np.int64)


def design_from_dict(d: dict) -> SequentialDesign:
    """Rebuild a design from a design file's content; ValueError names the bad key."""
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        raise ValueError(f"not an evalsim sequential design (format must be {FORMAT!r})")
    if d.get("version") != VERSION:
        raise ValueError(f"design: version must be {VERSION}, got {d.get('version')!r}")
    kind = _need(d, "kind")
    if kind not in ("unpaired", "paired"):
        raise ValueError(f"design: kind must be unpaired or paired, got {kind!r}")
    alternative = _need(d, "alternative")
    if alternative not in ALTERNATIVES:
        raise ValueError(
            f"design: alternative must be one of {', '.join(ALTERNATIVES)}, got {alternative!r}"
        )
    alpha = float(_need(d, "alpha"))
    n_max = _need(d, "n_max")
    if not isinstance(n_max, int) or n_max < 1:
        raise ValueError(f"design: n_max must be a positive integer, got {n_max!r}")
    cert = d.get("certificate")
    common = {
        "kind": kind,
        "alternative": alternative,
        "alpha": alpha,
        "n_max": n_max,
        "boundary": dict(d.get("boundary") or {}),
        "futility": d.get("futility"),
        "certificate": None if cert is None else Certificate.from_dict(cert),
    }
    if kind == "paired":
        d_max = _need(d, "d_max")
        if not isinstance(d_max, int) or not 1 <= d_max <= n_max:
            raise ValueError(f"design: d_max must be an integer in 1..n_max={n_max}, got {d_max!r}")
        rows_in = _need(d, "rows")
        rows = {
            key: _int_row(_need(rows_in, name, "design rows"), d_max + 1, name)
            for key, name in _PAIRED_KEYS.items()
        }
        return SequentialDesign(
            look_sizes=np.arange(1, n_max + 1, dtype=np.int64), rows=rows, d_max=d_max, **common
        )
    looks = _need(d, "looks")
    if not isinstance(looks, list) or not looks:
        raise ValueError("design: looks must be a non-empty list")
    sizes = np.asarray(
        [_need(look, "n", f"look {j}") for j, look in enumerate(looks)], dtype=np.int64
    )
    if sizes[0] < 1 or sizes[-1] != n_max or np.any(np.diff(sizes) <= 0):
        raise ValueError(f"design: look sizes must increase strictly from >= 1 to n_max={n_max}")
    shape = (len(sizes), n_max + 1)
    rows = {
        "upper": np.zeros(shape, dtype=np.int64),
        "lower": np.full(shape, -1, dtype=np.int64),
        "fut_lo": np.zeros(shape, dtype=np.int64),
        "fut_hi": np.full(shape, -1, dtype=np.int64),
        "crit": np.full(len(sizes), np.inf),
    }
    for j, (look, m) in enumerate(zip(looks, sizes.tolist(), strict=True)):
        rows["upper"][j, :] = m + 1
        for key, name in _UNPAIRED_KEYS.items():
            if name in look:
                rows[key][j, : m + 1] = _int_row(look[name], m + 1, f"look {j} {name}")
            elif key == "upper":
                raise ValueError(f"design: look {j}: missing key {name!r}")
        c = look.get("critical_z")
        rows["crit"][j] = np.inf if c is None else float(c)
    return SequentialDesign(look_sizes=sizes, rows=rows, **common)


def save_design(design: SequentialDesign, path: str | os.PathLike) -> None:
    """Write the design file atomically."""
    write_text_atomic(path, design_json(design))


def design_json(design: SequentialDesign) -> str:
    """The design file's text: readable keys, one line per look (or per row when paired)."""
    content = design_to_dict(design)
    bulky = "looks" if "looks" in content else "rows"
    items = content.pop(bulky)
    head = json.dumps(content, indent=1)[:-2]
    if bulky == "looks":
        body = ",\n".join("  " + json.dumps(look, separators=(",", ":")) for look in items)
        return f'{head},\n "looks": [\n{body}\n ]\n}}\n'
    body = ",\n".join(
        f"  {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}" for k, v in items.items()
    )
    return f'{head},\n "rows": {{\n{body}\n }}\n}}\n'


def load_design(path: str | os.PathLike) -> SequentialDesign:
    """Read a design file (ValueError on a file that is not one)."""
    try:
        with open(path, encoding="utf-8") as fh:
            content = json.load(fh)
    except OSError as e:
        raise ValueError(f"cannot read design file {os.fspath(path)!r}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise ValueError(
            f"design file {os.fspath(path)!r} is not JSON: {e.msg} at line {e.lineno}"
        ) from None
    return design_from_dict(content)


# ----------------------------------------------------------------------------- replay


def replay_unpaired(design: SequentialDesign, success_a, success_b):
    """Run an unpaired design on many experiments at once.

    Parameters
    ----------
    success_a, success_b : array_like of bool, shape (E, n)
        Outcomes of each experiment in trial order (n >= n_max to run every experiment to
        its end; fewer leaves some running).

    Returns
    -------
    look : int64[E]
        Index of the look where each experiment stopped (-1: still running).
    verdict : int64[E]
        0 no difference shown (at the last look), 1 B better, 2 A better, 3 futility, -1
        still running.
    """
    a = np.atleast_2d(np.asarray(success_a, dtype=bool))
    b = np.atleast_2d(np.asarray(success_b, dtype=bool))
    n = min(a.shape[1], b.shape[1])
    ka = np.concatenate([np.zeros((a.shape[0], 1), np.int64), np.cumsum(a[:, :n], axis=1)], axis=1)
    kb = np.concatenate([np.zeros((b.shape[0], 1), np.int64), np.cumsum(b[:, :n], axis=1)], axis=1)
    e = a.shape[0]
    look = np.full(e, -1, dtype=np.int64)
    verdict = np.full(e, -1, dtype=np.int64)
    r = design.rows
    n_looks = len(design.look_sizes)
    for j, m in enumerate(design.look_sizes.tolist()):
        if m > n:
            break
        live = look < 0
        x, y = ka[live, m], kb[live, m]
        v = np.zeros(x.shape, dtype=np.int64)
        v[(y >= r["fut_lo"][j, x]) & (y <= r["fut_hi"][j, x])] = 3
        v[y <= r["lower"][j, x]] = 2
        v[y >= r["upper"][j, x]] = 1
        idx = np.flatnonzero(live)
        stop = v > 0 if j < n_looks - 1 else np.ones(v.shape, dtype=bool)
        look[idx[stop]] = j
        verdict[idx[stop]] = v[stop]
    return look, verdict


def replay_paired(design: SequentialDesign, success_a, success_b):
    """Run a paired design on many experiments at once (arrays (E, n) of pair outcomes).

    Returns
    -------
    stop_pair : int64[E]
        Number of pairs at the stop (-1: still running).
    verdict : int64[E]
        As in :func:`replay_unpaired`.
    """
    a = np.atleast_2d(np.asarray(success_a, dtype=bool))
    b = np.atleast_2d(np.asarray(success_b, dtype=bool))
    n = min(a.shape[1], b.shape[1], design.n_max)
    e = a.shape[0]
    r = design.rows
    d = np.zeros(e, dtype=np.int64)
    w = np.zeros(e, dtype=np.int64)
    stop = np.full(e, -1, dtype=np.int64)
    verdict = np.full(e, -1, dtype=np.int64)
    fut_from = design.futility["from"] if design.futility else design.n_max + 1
    for t in range(1, n + 1):
        live = stop < 0
        if not live.any():
            break
        disc = live & (a[:, t - 1] != b[:, t - 1])
        d += disc
        w += disc & b[:, t - 1]
        idx = np.flatnonzero(live)
        dd, ww = d[idx], w[idx]
        last = (t == design.n_max) | (dd == design.d_max)
        v = np.zeros(idx.size, dtype=np.int64)
        fin = last
        v[fin & (ww <= r["final_lower"][dd])] = 2
        v[fin & (ww >= r["final_upper"][dd])] = 1
        mid = ~fin
        if t >= fut_from:
            v[mid & (ww >= r["fut_lo"][dd]) & (ww <= r["fut_hi"][dd])] = 3
        v[mid & (ww <= r["lower"][dd])] = 2
        v[mid & (ww >= r["upper"][dd])] = 1
        done = (v > 0) | fin
        stop[idx[done]] = t
        verdict[idx[done]] = v[done]
    return stop, verdict


@dataclass(frozen=True)
class CheckResult:
    """What a design says about a running trial log.

    Attributes
    ----------
    status : {"continue", "stop"}
    verdict : str or None
        The verdict when stopped.
    at : int
        Trials per policy (pairs when paired) at the stop, or used so far.
    tallies : dict
        Unpaired: ``k_a``, ``k_b``, ``n`` at that point; paired: ``pairs``, ``discordant``,
        ``b_only``, ``a_only``.
    boundary : str
        The boundary crossed (or the next one to watch).
    interval : tuple of float or None
        Approximate repeated confidence interval for ``p_B - p_A`` at the stop, at the
        crossed look's critical z [1]_ (None while running).
    confidence : float or None
        Its nominal pointwise confidence ``2 Phi(c) - 1``.
    reachable : dict or None
        While running: for each verdict the design can declare ("B better", and "A better"
        when two-sided), whether some outcome of the trials left up to ``n_max`` still
        reaches it (None once stopped).

    References
    ----------
    .. [1] Jennison, C. & Turnbull, B. W. (1989), "Interim analyses: the repeated confidence
       interval approach", J. R. Statist. Soc. B 51(3), 305-361.
    """

    status: str
    verdict: str | None
    at: int
    tallies: dict
    boundary: str
    interval: tuple[float, float] | None
    confidence: float | None
    reachable: dict | None = None

    def line(self) -> str:
        head = "continue" if self.status == "continue" else f"stop: {self.verdict}"
        return f"{head} ({self.boundary})"


_WORDS = {
    0: "no difference shown",
    1: "B better",
    2: "A better",
    3: "futility (no difference shown)",
}


def _conf(z: float) -> float:
    return float(min(max(2.0 * ndtr(z) - 1.0, 0.5), 1.0 - 1e-12))


def _crossed(verdict: int, at: str, upper: str, lower: str, band: str, none: str) -> str:
    """The words of the boundary a stop crossed: ``at`` (where the statistic stood) ``>=``
    the ``upper`` boundary, ``<=`` the ``lower`` one, or in the futility band (then ``band``
    follows), for verdicts 1, 2 and 3 of :data:`~evalsim.stats.sequential.core.VERDICTS`;
    ``none`` when no boundary was crossed."""
    if verdict == 1:
        return f"{at} >= {upper}"
    if verdict == 2:
        return f"{at} <= {lower}"
    if verdict == 3:
        return f"{at} in the futility band{band}"
    return none


def check_unpaired(design: SequentialDesign, success_a, success_b) -> CheckResult:
    """Apply an unpaired design to one log (outcomes of A and of B in trial order)."""
    from evalsim.stats.two_sample.paired import diff_interval

    a = np.asarray(success_a, dtype=bool)
    b = np.asarray(success_b, dtype=bool)
    look, verdict = replay_unpaired(design, a[None, :], b[None, :])
    r = design.rows
    sizes = design.look_sizes
    if look[0] < 0:
        n = min(a.size, b.size)
        nxt = int(np.searchsorted(sizes, n, side="right"))
        j = min(nxt, len(sizes) - 1)
        m = int(sizes[j])
        ka, kb = int(a[:n].sum()), int(b[:n].sum())
        reach = _unpaired_reach(design, n, ka, kb)
        if nxt < len(sizes):
            watch = f"next look at {m} trials each; {n} each so far (A {ka}/{n}, B {kb}/{n})"
            u = int(r["upper"][j, ka]) if m == n + 1 else None
            if u is not None and u <= min(m, kb + 1):
                watch += f"; at the next look B better if k_B >= {u} with k_A = {ka}"
        else:
            watch = "no look reached"
        watch += _reach_words(design, reach)
        return CheckResult(
            "continue",
            None,
            n,
            {"n": n, "k_a": ka, "k_b": kb},
            watch,
            None,
            None,
            {v: look is not None for v, look in reach.items()},
        )
    j = int(look[0])
    m = int(sizes[j])
    ka, kb = int(a[:m].sum()), int(b[:m].sum())
    v = int(verdict[0])
    at_ka = f"at k_A = {ka}"
    bound = _crossed(
        v,
        f"look {j + 1} at {m} each: k_B = {kb}",
        f"{int(r['upper'][j, ka])} (B-better threshold {at_ka})",
        f"{int(r['lower'][j, ka])} (A-better threshold {at_ka})",
        f" {int(r['fut_lo'][j, ka])}..{int(r['fut_hi'][j, ka])} {at_ka}",
        f"last look at {m} each: no boundary crossed",
    )
    c = float(r["crit"][j])
    if not math.isfinite(c):
        finite = r["crit"][np.isfinite(r["crit"])]
        c = float(finite[-1]) if finite.size else float(ndtri(1 - design.alpha))
    conf = _conf(c)
    iv = diff_interval(kb, m, ka, m, method="newcombe", confidence=conf)
    return CheckResult(
        "stop", _WORDS[v], m, {"n": m, "k_a": ka, "k_b": kb}, bound, (iv.lower, iv.upper), conf
    )


def _verdicts(design: SequentialDesign) -> tuple[str, ...]:
    """The verdicts other than "no difference shown" a design can declare."""
    return ("B better", "A better") if design.two_sided else ("B better",)


def _unpaired_reach(design: SequentialDesign, n: int, ka: int, kb: int) -> dict:
    """For each verdict of :func:`_verdicts`: the first later look at which some outcome of
    the trials left still declares it (its size), or None. From ``n`` trials each, by look
    ``m`` each arm gains 0..m - n successes: "B better" needs ``k_B >= upper[k_A]`` for some
    ``k_A`` in ``ka..ka + m - n`` and ``k_B <= kb + m - n``; "A better" ``k_B <= lower[k_A]``
    with ``k_B >= kb``."""
    r = design.rows
    out = {}
    for verdict in _verdicts(design):
        out[verdict] = None
        for j, m in enumerate(design.look_sizes.tolist()):
            if m <= n:
                continue
            xs = slice(ka, ka + m - n + 1)
            if verdict == "B better":
                hit = int(r["upper"][j, xs].min()) <= min(kb + m - n, m)
            else:
                hit = int(r["lower"][j, xs].max()) >= kb
            if hit:
                out[verdict] = m
                break
    return out


def _paired_reach(design: SequentialDesign, t: int, d: int, b_only: int) -> dict:
    """For each verdict of :func:`_verdicts`: whether some outcome of the pairs left (up to
    ``n_max``, with at most ``d_max`` discordant) still declares it, at an interim look or at
    the final one. With ``d' >= d`` discordant pairs, B alone can be ``b_only..b_only + d' -
    d``; an interim look follows each new discordant pair, the final one any ``d'``."""
    r = design.rows
    out = {}
    top = min(design.d_max, d + design.n_max - t)
    for verdict in _verdicts(design):
        hit = False
        for dd in range(d, top + 1):
            keys = ("final_upper", "final_lower")  # n_max can be reached with any dd here
            if dd > d:
                keys += ("upper", "lower")
            for key in keys:
                bound = int(r[key][dd])
                if verdict == "B better" and key.endswith("upper"):
                    hit |= bound <= b_only + dd - d
                elif verdict == "A better" and key.endswith("lower"):
                    hit |= bound >= b_only
        out[verdict] = bool(hit)
    return out


def _reach_words(design: SequentialDesign, reach: dict) -> str:
    """What the running log can still end with: verdicts that can no longer be reached within
    ``n_max``, and a one-sided design's "never declares 'A better'" (issue 45, item 21)."""
    words = ""
    gone = [v for v, x in reach.items() if x is None or x is False]
    if gone:
        names = " or ".join(f"'{v}'" for v in gone)
        ending = (
            "the design can only end with 'no difference shown'"
            if len(gone) == len(reach)
            else "the other verdict can still be reached"
        )
        words += f"; {names} can no longer be reached within n_max = {design.n_max}: {ending}"
    if not design.two_sided:
        words += "; one-sided design: it never declares 'A better'"
    return words


def check_paired(design: SequentialDesign, success_a, success_b) -> CheckResult:
    """Apply a paired design to one log of pairs (A's and B's outcome per pair, in order)."""
    from evalsim.stats.sequential.paired import sign_z
    from evalsim.stats.two_sample.paired import PairedCounts, paired_wald_interval

    a = np.asarray(success_a, dtype=bool)
    b = np.asarray(success_b, dtype=bool)
    stop, verdict = replay_paired(design, a[None, :], b[None, :])
    t = int(stop[0]) if stop[0] > 0 else min(a.size, design.n_max)
    aa, bb = a[:t], b[:t]
    a_only = int((aa & ~bb).sum())
    b_only = int((bb & ~aa).sum())
    d = a_only + b_only
    tallies = {"pairs": t, "discordant": d, "b_only": b_only, "a_only": a_only}
    r = design.rows
    if stop[0] < 0:
        reach = _paired_reach(design, t, d, b_only)
        left = design.n_max - t  # pairs still to run: the discordant count grows by at most this
        early = [
            k
            for k in range(d + 1, min(design.d_max, d + left) + 1)
            if r["upper"][k] - b_only <= k - d
        ]
        if early:
            k = early[0]
            watch = (
                f"after {t} pairs: {d} discordant, B alone {b_only}; the earliest stop 'B better' "
                f"is at {k} discordant pairs with B alone {int(r['upper'][k])}"
            )
        else:
            watch = f"after {t} pairs: {d} discordant, B alone {b_only}; run on to the final look"
        watch += _reach_words(design, reach)
        return CheckResult(
            "continue", None, t, tallies, watch, None, None, {v: x for v, x in reach.items()}
        )
    v = int(verdict[0])
    final = t == design.n_max or d == design.d_max
    up = r["final_upper" if final else "upper"][d]
    lo = r["final_lower" if final else "lower"][d]
    where = "final boundary" if final else "boundary"
    bound = _crossed(
        v,
        f"pair {t}: B alone {b_only} of {d} discordant",
        f"{int(up)} ({where})",
        f"{int(lo)} ({where})",
        "",
        f"pair {t}: maximum reached, no boundary crossed",
    )
    z = float(sign_z(up, d)) if 0 < up <= d else float(ndtri(1 - design.alpha))
    conf = _conf(abs(z))
    counts = PairedCounts(
        both_succeed=int((aa & bb).sum()),
        a_only=a_only,
        b_only=b_only,
        both_fail=int((~aa & ~bb).sum()),
    )
    iv = paired_wald_interval(counts, confidence=conf)
    return CheckResult("stop", _WORDS[v], t, tallies, bound, (-iv.upper, -iv.lower), conf)
