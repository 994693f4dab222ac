"""The study report as one self-contained HTML page: inline CSS, figures inline as PNG data
URIs, no script and no external resource, so it opens offline. Every user-given string (title,
rubric, arm names, notes, reasons, failure types) is escaped with :func:`html.escape`.

The figure is the grid of start positions drawn to scale, one panel per arm, each position
coloured by that arm's success fraction there (a colour-blind-safe diverging map, red-yellow-
blue), with ``k/n`` under it: the hard positions show at a glance.
"""

from __future__ import annotations

import base64
import io
from html import escape

from evalsim.study.review import review_html

__all__ = ["render_html", "outcome_map_png", "plan_sentence"]

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:62rem;
margin:2rem auto;padding:0 1rem;color:#1b1b1b;line-height:1.45}
h1{font-size:1.5rem;margin-bottom:.2rem}h2{font-size:1.15rem;margin-top:2rem;
border-bottom:1px solid #ddd}
.headline{font-size:1.1rem;background:#eef4fa;border-left:4px solid #0072B2;padding:.7rem 1rem}
.qualified{color:#8a3b00}.muted{color:#666;font-size:.9rem}
table{border-collapse:collapse;margin:.6rem 0}td,th{border-bottom:1px solid #e3e3e3;
padding:.25rem .6rem;text-align:left}td.num,th.num{text-align:right;font-variant-numeric:
tabular-nums}.flag{color:#D55E00;font-weight:600}img{max-width:100%;height:auto}
code{font-size:.85rem}
"""


def _pct(x) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _iv(iv) -> str:
    return "n/a" if iv is None else f"[{100 * iv[0]:.1f}%, {100 * iv[1]:.1f}%]"


def plan_sentence(plan: dict) -> str:
    """The locked plan in one sentence: n, and what it could detect at the expected rates."""
    unit = plan.get("unit", "")
    parts = [f"{plan.get('n')} {unit} at alpha {plan.get('alpha')} ({plan.get('alternative')})"]
    exp = plan.get("expected") or {}
    if exp.get("a") is not None and exp.get("b") is not None:
        parts.append(f"expected rates a {exp['a']:g}, b {exp['b']:g}")
    pp, up = plan.get("paired") or {}, plan.get("unpaired") or {}
    if pp.get("power") is not None:
        parts.append(f"exact McNemar power {_pct(pp['power'])}")
    if pp.get("mde") is not None:
        parts.append(f"paired MDE {100 * pp['mde']:.1f} points at 80% power")
    if up.get("power") is not None:
        parts.append(f"Fisher power {_pct(up['power'])}")
    if up.get("mde") is not None:
        parts.append(f"unpaired MDE {100 * up['mde']:.1f} points")
    return "; ".join(parts) + "."


def outcome_map_png(doc: dict) -> bytes:
    """PNG of the positions per arm, coloured by success fraction (see module docstring)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import colormaps
    from matplotlib.figure import Figure

    arms = [a["arm"] for a in doc["arms"]]
    pos = doc["positions"]
    xs = [p["x_cm"] for p in pos]
    ys = [p["y_cm"] for p in pos]
    span_x = max(xs) - min(xs) + 4
    span_y = max(ys) - min(ys) + 4
    panel_w = 4.2
    panel_h = max(1.6, min(5.0, panel_w * span_y / span_x))
    fig = Figure(figsize=(panel_w * len(arms), panel_h + 0.8))
    axes = fig.subplots(1, len(arms), squeeze=False)[0]
    cmap = colormaps["RdYlBu"]
    many = len(pos) > 60
    for ax, arm in zip(axes, arms, strict=True):
        fx, fy, colours, labels = [], [], [], []
        for p in pos:
            cell = p["per_arm"].get(arm)
            fx.append(p["x_cm"])
            fy.append(p["y_cm"])
            if cell and cell["n"]:
                colours.append(cmap(cell["k"] / cell["n"]))
                labels.append(f"{cell['k']}/{cell['n']}")
            else:
                colours.append("#DDDDDD")
                labels.append("")
        ax.scatter(fx, fy, c=colours, s=30 if many else 180, edgecolors="black", linewidths=0.4)
        if not many:
            for x, y, lab, p in zip(fx, fy, labels, pos, strict=True):
                ax.annotate(
                    p["position"],
                    (x, y),
                    xytext=(0, 9),
                    textcoords="offset points",
                    ha="center",
                    fontsize=6,
                )
                ax.annotate(
                    lab,
                    (x, y),
                    xytext=(0, -12),
                    textcoords="offset points",
                    ha="center",
                    fontsize=6,
                )
        ax.set_aspect("equal")
        ax.set_xlim(min(xs) - 2, max(xs) + 2)
        ax.set_ylim(min(ys) - 2, max(ys) + 2)
        ax.set_title(arm, fontsize=9)
        ax.set_xlabel("x (cm)", fontsize=7)
        ax.set_ylabel("y (cm)", fontsize=7)
        ax.tick_params(labelsize=6)
    fig.suptitle("success at each start position (red 0% ... blue 100%; grey: not run)", fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, metadata={"Software": None})
    return buf.getvalue()


def _table(headers, rows, cls=None, ident=None) -> str:
    attrs = (f' id="{ident}"' if ident else "") + (f' class="{cls}"' if cls else "")
    head = "".join(
        f'<th class="num">{escape(h[1:])}</th>' if h.startswith("#") else f"<th>{escape(h)}</th>"
        for h in headers
    )
    body = []
    for r in rows:
        cells = []
        for h, c in zip(headers, r, strict=True):
            klass, text = c if isinstance(c, tuple) else (None, c)
            num = h.startswith("#")
            cl = " ".join(x for x in ("num" if num else None, klass) if x)
            cells.append(
                f"<td{f' class={chr(34)}{cl}{chr(34)}' if cl else ''}>{escape(str(text))}</td>"
            )
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table{attrs}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def render_html(doc: dict, study=None) -> str:
    """The report document as one self-contained HTML page."""
    s = doc["study"]
    h = doc["headline"]
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(s['title'] or 'Study report')}</title><style>{_CSS}</style></head>",
        "<body>",
        f"<h1>{escape(s['title'] or 'Study report')}</h1>",
        f'<p class="muted">evalsim study report, schema {escape(doc["schema"])} '
        f"v{doc['schema_version']}. "
        + (
            "Blind: the arms are named by their codes."
            if doc["blind"]
            else f"Unblinded by {escape(str(doc['unblinded']['by']))} at "
            f"{escape(doc['unblinded']['at'])}."
        )
        + "</p>",
        "<h2>Primary analysis, as locked</h2>",
        f'<p id="headline" class="headline">{escape(h["text"])}</p>',
    ]
    for q in h["qualifications"]:
        out.append(f'<p class="qualified">Qualified: {escape(q)}</p>')
    prog = doc["progress"]
    out.append(
        f'<p>Progress: <span id="done">{prog["done"]}</span> of '
        f'<span id="total">{prog["total"]}</span> scheduled trials recorded.</p>'
    )
    out.append("<h2>Per arm</h2>")
    rows = []
    for a in doc["arms"]:
        rows.append(
            [a["arm"], a["k"], a["n"], _pct(a["rate"]), _iv(a["wilson"]), _iv(a["clopper_pearson"])]
        )
    out.append(
        _table(
            ["arm", "#k", "#n", "#rate", "#Wilson 95%", "#Clopper-Pearson 95%"], rows, ident="arms"
        )
    )
    if doc["paired"]:
        p = doc["paired"]
        a_, b_ = h["arm_a"], h["arm_b"]
        out.append(f"<p>Paired table ({escape(a_)} = a, {escape(b_)} = b):</p>")
        out.append(
            _table(
                ["", f"#{b_} success", f"#{b_} failure"],
                [
                    [f"{a_} success", p["both_succeed"], p["a_only"]],
                    [f"{a_} failure", p["b_only"], p["both_fail"]],
                ],
                ident="paired",
            )
        )
        out.append(
            f"<p>p<sub>b</sub> - p<sub>a</sub> = {100 * p['difference_b_minus_a']:.1f} "
            f"points, 95% {escape(p['method'])} {_iv(p['interval'])}.</p>"
        )
    if doc["unpaired_difference"]:
        u = doc["unpaired_difference"]
        out.append(
            f"<p>Unpaired: p<sub>b</sub> - p<sub>a</sub> = "
            f"{100 * u['difference_b_minus_a']:.1f} points, 95% {escape(u['method'])} "
            f"{_iv(u['interval'])}.</p>"
        )
    out.append("<h2>Failure types</h2>")
    types = list(
        dict.fromkeys(
            [*s.get("failure_types", []), *(k for a in doc["arms"] for k in a["failure_types"])]
        )
    )
    out.append(
        _table(
            ["arm", *(f"#{t}" for t in types)],
            [[a["arm"], *(a["failure_types"].get(t, 0) for t in types)] for a in doc["arms"]],
            ident="failures",
        )
    )
    out.append("<h2>Outcomes by start position</h2>")
    png = base64.b64encode(outcome_map_png(doc)).decode("ascii")
    out.append(
        f'<img alt="success at each start position, per arm" src="data:image/png;base64,{png}">'
    )
    out.append("<h2>Independence over time</h2>")
    out.append(
        '<p class="muted">Runs, trend and halves tests of each arm\'s outcomes in the '
        "order recorded, overall and per block; each flagged below alpha/3 "
        "(Bonferroni at 0.05).</p>"
    )
    irows = []
    for r in doc["independence"]:
        pv = r["pvalues"] or {}
        flag = ", ".join(r["flagged"])
        irows.append(
            [
                r["arm"],
                r["block"],
                r["n"],
                *(
                    f"{pv[k]:.3g}" if k in pv else "not checked"
                    for k in ("runs", "trend", "halves")
                ),
                ("flag", flag) if flag else "none",
            ]
        )
    out.append(
        _table(
            ["arm", "block", "#n", "#runs p", "#trend p", "#halves p", "flagged"],
            irows,
            ident="independence",
        )
    )
    out += _deviations(doc)
    out += review_html(doc.get("review"), escape)
    if doc["secondary"]:
        out.append("<h2>Secondary analyses (not pre-registered as primary)</h2>")
        out.append(
            _table(
                ["test", "#p-value", "note"],
                [[x["test"], f"{x['pvalue']:.4g}", x["note"]] for x in doc["secondary"]],
                ident="secondary",
            )
        )
    out.append("<h2>Protocol</h2>")
    plan = doc.get("plan") or {}
    if plan:
        out.append(f'<p id="plan">Plan, stored in the lock: {escape(plan_sentence(plan))}</p>')
    out.append(f"<p>Success rubric: {escape(s.get('rubric', ''))}</p>")
    out.append(
        f'<p class="muted">Lock sha256 <code id="lock">{escape(s["study_sha256"])}'
        f'</code>, seed <span id="seed">{s["seed"]}</span>, evalsim '
        f"{escape(s['evalsim_version_lock'])} at the lock, "
        f"{escape(s['evalsim_version_report'])} for this report.</p>"
    )
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _deviations(doc: dict) -> list[str]:
    dev = doc["deviations"]
    items = []
    for u in dev["undone"]:
        items.append(
            f"undone: trial {u['trial']} (event {u['event']}), reason: {u['why'] or 'none given'}"
        )
    for key, words in (
        ("out_of_order", "recorded out of scheduled order"),
        ("skipped", "skipped (open while later trials were recorded)"),
        ("after_stop", "recorded after the sequential stop, not in the primary analysis"),
    ):
        if dev[key]:
            items.append(f"{words}: {', '.join(dev[key])}")
    for a in dev["amendments"]:
        if a["kind"] == "amends":
            items.append(f"this study amends {a['folder']} ({a['study_sha256'][:12]}): {a['why']}")
        else:
            items.append(f"amended by {a['to']} ({a['study_sha256'][:12]}): {a['why']}")
    body = "".join(f"<li>{escape(i)}</li>" for i in items) or "<li>none</li>"
    return ["<h2>Deviations</h2>", f'<ul id="deviations">{body}</ul>']
