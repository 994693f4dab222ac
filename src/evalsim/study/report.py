"""The study report: one document (:func:`report_document`), rendered as JSON, Markdown and a
self-contained HTML page (:mod:`evalsim.study.report_html`).

The document follows the lock: its headline is the primary analysis exactly as locked, with
its verdict in plain words (a null reads "not detected at this n; the study could have
detected a difference of at least X ... with 80% power", never "equal"), qualified beside it
when an independence check fails or the study is not complete. Then per arm k/n with Wilson
and Clopper-Pearson intervals, the paired table and the difference interval, failure types,
the outcomes per position, independence over time per arm and block, the deviations
(undone entries, trials out of order, skipped trials, trials after a stop, amendments), the
secondary analyses labelled as not pre-registered as primary, and the lock hash, the seed and
the evalsim versions. Before the study is unblinded every arm is named by its blind code.

The JSON carries :data:`REPORT_SCHEMA_ID` and :data:`REPORT_SCHEMA_VERSION`; its JSON Schema
is :data:`REPORT_SCHEMA` (checked in ``tests/test_study_report.py``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from evalsim.study.review import REVIEW_SCHEMA, review_markdown, review_section

__all__ = [
    "REPORT_SCHEMA",
    "REPORT_SCHEMA_ID",
    "REPORT_SCHEMA_VERSION",
    "REPORT_FILES",
    "report_document",
    "render_markdown",
    "write_report",
]


REPORT_SCHEMA_ID = "evalsim-study-report"
REPORT_SCHEMA_VERSION = 1
#: The files ``evalsim study report`` writes, by kind.
REPORT_FILES = {"html": "report.html", "json": "report.json", "markdown": "report.md"}

_NUM = {"type": ["number", "null"]}
_INTERVAL = {"type": ["array", "null"], "items": {"type": "number"}, "minItems": 2, "maxItems": 2}
_STR_LIST = {"type": "array", "items": {"type": "string"}}

REPORT_SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "evalsim study report",
    "type": "object",
    "required": [
        "schema",
        "schema_version",
        "study",
        "blind",
        "progress",
        "headline",
        "arms",
        "paired",
        "unpaired_difference",
        "positions",
        "independence",
        "deviations",
        "secondary",
        "plan",
    ],
    "additionalProperties": False,
    "properties": {
        "review": REVIEW_SCHEMA,  # the console's blind review (issue 42), optional
        "schema": {"const": REPORT_SCHEMA_ID},
        "schema_version": {"const": REPORT_SCHEMA_VERSION},
        "study": {
            "type": "object",
            "required": [
                "title",
                "study_sha256",
                "seed",
                "evalsim_version_lock",
                "evalsim_version_report",
                "amends",
                "amended_by",
            ],
            "properties": {
                "title": {"type": "string"},
                "study_sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                "seed": {"type": "integer"},
                "evalsim_version_lock": {"type": "string"},
                "evalsim_version_report": {"type": "string"},
                "amends": {"type": ["object", "null"]},
                "amended_by": {"type": "array"},
                "rubric": {"type": "string"},
                "failure_types": _STR_LIST,
            },
        },
        "blind": {"type": "boolean"},
        "unblinded": {"type": ["object", "null"]},
        "codes": {"type": ["object", "null"]},
        "progress": {
            "type": "object",
            "required": ["done", "total", "complete"],
            "properties": {
                "done": {"type": "integer", "minimum": 0},
                "total": {"type": "integer", "minimum": 1},
                "complete": {"type": "boolean"},
            },
        },
        "headline": {
            "type": "object",
            "required": [
                "text",
                "verdict",
                "test",
                "alpha",
                "pvalue",
                "rejects",
                "direction",
                "mde",
                "qualifications",
                "counts",
            ],
            "properties": {
                "text": {"type": "string"},
                "verdict": {"type": "string"},
                "test": {"type": "string"},
                "alpha": {"type": "number"},
                "pvalue": _NUM,
                "rejects": {"type": "boolean"},
                "direction": {"enum": ["b-better", "a-better", None]},
                "mde": {"type": ["object", "null"]},
                "qualifications": _STR_LIST,
                "counts": {"type": "object"},
            },
        },
        "arms": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["arm", "k", "n", "rate", "wilson", "clopper_pearson", "failure_types"],
                "properties": {
                    "arm": {"type": "string"},
                    "k": {"type": "integer"},
                    "n": {"type": "integer"},
                    "rate": _NUM,
                    "wilson": _INTERVAL,
                    "clopper_pearson": _INTERVAL,
                    "failure_types": {"type": "object"},
                },
            },
        },
        "paired": {"type": ["object", "null"]},
        "unpaired_difference": {"type": ["object", "null"]},
        "positions": {"type": "array"},
        "independence": {"type": "array"},
        "deviations": {
            "type": "object",
            "required": ["undone", "out_of_order", "skipped", "after_stop", "amendments"],
        },
        "secondary": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["test", "pvalue", "note"],
                "properties": {"note": {"const": "secondary: not pre-registered as primary"}},
            },
        },
        "sequential": {"type": ["object", "null"]},
        "plan": {"type": "object"},
    },
}


def _headline(study, st, unblinded: bool, indep: list, total_done: int, total: int) -> dict:
    from evalsim.study.analysis import primary_analysis

    pa = primary_analysis(study, st, unblinded)
    p = study.protocol
    c = pa["counts"]
    unit = f"{c['pairs']} pairs" if p.paired else f"{c['n_a']} + {c['n_b']} trials"
    if pa["sequential"] is not None:  # the locked test is the sequential design's rule
        dec = pa["sequential"]
        rate = dec["certified_type1"]
        cert = f"certified false-win rate <= {rate:.4f}" if rate is not None else "uncertified"
        if dec["status"] == "continue":
            text = (
                f"Sequential design, as locked: continue -- no boundary crossed after "
                f"{dec['at']} {'pairs' if p.paired else 'trials per arm'} ({cert})."
            )
        else:
            text = (
                f"Sequential design, as locked: stopped at {dec['at']} "
                f"{'pairs' if p.paired else 'trials per arm'}: {pa['verdict']} ({cert}; "
                f"{dec['boundary']})."
            )
    else:
        if pa["pvalue"] is None:
            stat = f"alpha = {pa['alpha']:g}"
        else:
            sign = "<" if pa["rejects"] else ">="
            stat = f"p = {pa['pvalue']:.4g} {sign} alpha = {pa['alpha']:g}"
        label = pa["label"][0].upper() + pa["label"][1:]
        text = f"{label} as locked ({unit}, {p.alternative}): {pa['verdict']} ({stat})."
    quals = []
    if not pa["complete"]:
        quals.append(
            f"interim: {total_done} of {total} scheduled trials recorded; the locked analysis "
            "is at the full n"
        )
    for row in indep:
        if row["flagged"] and row["block"] == "all":
            quals.append(
                f"outcomes of {row['arm']} are not exchangeable over time "
                f"({', '.join(row['flagged'])} check flagged): the verdict assumes they are"
            )
    if quals:
        text += " Qualified: " + "; ".join(quals) + "."
    return {
        "text": text,
        "verdict": pa["verdict"],
        "test": pa["test"],
        "label": pa["label"],
        "alpha": pa["alpha"],
        "alternative": pa["alternative"],
        "pvalue": pa["pvalue"],
        "rejects": bool(pa["rejects"]),
        "direction": pa["direction"],
        "mde": pa["mde"],
        "qualifications": quals,
        "counts": c,
        "arm_a": pa["arm_a"],
        "arm_b": pa["arm_b"],
        "sequential": pa["sequential"],
    }


def _positions(study, st, unblinded: bool) -> list[dict]:
    out: dict[str, dict] = {}
    for t in study.schedule:
        out.setdefault(
            t.position, {"position": t.position, "x_cm": t.x_cm, "y_cm": t.y_cm, "per_arm": {}}
        )
    for o in st.outcomes.values():
        row = out[o.trial.position]["per_arm"].setdefault(
            study.label(o.trial.arm, unblinded), {"k": 0, "n": 0}
        )
        row["k"] += int(o.success)
        row["n"] += 1
    return list(out.values())


def _amended_by(study, st) -> list[dict]:
    return [dict(e.payload, recorded_at=e.recorded_at) for e in st.amendments]


def report_document(study, events=None) -> dict:
    """The report of a study as one JSON-ready dict (schema :data:`REPORT_SCHEMA`)."""
    import evalsim
    from evalsim.study.analysis import (
        arm_summaries,
        independence_by_arm,
        paired_difference,
        secondary_analyses,
        unpaired_difference,
    )

    events = study.events() if events is None else events
    st = study.state(events)
    unblinded = st.unblinded is not None
    indep = independence_by_arm(study, st, unblinded)
    head = _headline(study, st, unblinded, indep, st.done, len(study.schedule))
    proto = study.protocol
    dev = {
        "undone": [
            {
                "trial": g.trial,
                "event": g.id,
                "undo": u.id,
                "why": u.payload.get("why"),
                "at": u.recorded_at,
            }
            for g, u in st.undone
        ],
        "out_of_order": [o.trial.trial for o in st.out_of_order],
        "skipped": [t.trial for t in st.skipped()],
        "after_stop": [o.trial.trial for o in st.after_stop],
        "amendments": (
            ([{"kind": "amends", **study.lock["amends"]}] if study.lock.get("amends") else [])
            + [{"kind": "amended_by", **a} for a in _amended_by(study, st)]
        ),
    }
    return {
        "schema": REPORT_SCHEMA_ID,
        "schema_version": REPORT_SCHEMA_VERSION,
        "study": {
            "title": proto.data.get("title", ""),
            "study_sha256": study.sha256,
            "seed": int(study.lock["seed"]),
            "evalsim_version_lock": study.lock["evalsim_version"],
            "evalsim_version_report": evalsim.__version__,
            "amends": study.lock.get("amends"),
            "amended_by": _amended_by(study, st),
            "rubric": proto.data["rubric"]["success"],
            "failure_types": list(proto.failure_types),
        },
        "blind": not unblinded,
        "unblinded": None
        if not unblinded
        else {"by": st.unblinded.payload.get("by"), "at": st.unblinded.recorded_at},
        "codes": study.codes if unblinded else None,
        "progress": {
            "done": st.done,
            "total": len(study.schedule),
            "complete": st.done == len(study.schedule),
        },
        "headline": head,
        "arms": arm_summaries(study, st, unblinded),
        "paired": paired_difference(study, st) if proto.paired else None,
        "unpaired_difference": unpaired_difference(study, st),
        "positions": _positions(study, st, unblinded),
        "independence": indep,
        "deviations": dev,
        "secondary": secondary_analyses(study, st),
        "sequential": head["sequential"],
        "plan": study.lock.get("plan", {}),
        "review": review_section(study, st, events),
    }


def _iv(iv) -> str:
    return "n/a" if iv is None else f"[{100 * iv[0]:.1f}%, {100 * iv[1]:.1f}%]"


def _md(text) -> str:
    return str(text).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def render_markdown(doc: dict) -> str:
    """The report as Markdown (tables and sentences; no figures)."""
    s = doc["study"]
    lines = [
        f"# {_md(s['title'] or 'Study report')}",
        "",
        f"**{_md(doc['headline']['text'])}**",
        "",
    ]
    lines += [
        "| arm | k/n | rate | Wilson 95% | Clopper-Pearson 95% | failure types |",
        "|:---|---:|---:|---:|---:|:---|",
    ]
    for a in doc["arms"]:
        fails = ", ".join(f"{_md(k)} {v}" for k, v in a["failure_types"].items()) or "none"
        rate = "n/a" if a["rate"] is None else f"{100 * a['rate']:.1f}%"
        lines.append(
            f"| {_md(a['arm'])} | {a['k']}/{a['n']} | {rate} | {_iv(a['wilson'])} | "
            f"{_iv(a['clopper_pearson'])} | {fails} |"
        )
    if doc["paired"]:
        p = doc["paired"]
        lines += [
            "",
            f"Paired table: both succeed {p['both_succeed']}, a only {p['a_only']}, "
            f"b only {p['b_only']}, both fail {p['both_fail']}; p_b - p_a = "
            f"{100 * p['difference_b_minus_a']:.1f} points, {p['method']} "
            f"{_iv(p['interval'])}.",
        ]
    dev = doc["deviations"]
    lines += ["", "## Deviations", ""]
    items = [
        f"- undone: {u['trial']} (event {_md(u['event'])}, why: {_md(u['why'])})"
        for u in dev["undone"]
    ]
    items += [
        f"- {k.replace('_', ' ')}: {', '.join(dev[k])}"
        for k in ("out_of_order", "skipped", "after_stop")
        if dev[k]
    ]
    items += [
        f"- {a['kind'].replace('_', ' ')}: {_md(a.get('folder') or a.get('to'))}, "
        f"why: {_md(a['why'])}"
        for a in dev["amendments"]
    ]
    lines += items or ["none"]
    if doc["secondary"]:
        lines += ["", "## Secondary analyses (not pre-registered as primary)", ""]
        lines += [f"- {x['test']}: p = {x['pvalue']:.4g}" for x in doc["secondary"]]
    if doc.get("plan"):
        from evalsim.study.report_html import plan_sentence

        lines += ["", f"Plan, stored in the lock: {_md(plan_sentence(doc['plan']))}"]
    lines += [
        "",
        f"Lock sha256 `{s['study_sha256']}`, seed {s['seed']}, evalsim "
        f"{s['evalsim_version_lock']} (lock) / {s['evalsim_version_report']} (report).",
        "Blind: arms named by their codes."
        if doc["blind"]
        else f"Unblinded by {_md(doc['unblinded']['by'])} at {doc['unblinded']['at']}.",
        "",
    ]
    lines += review_markdown(doc.get("review"))
    return "\n".join(lines)


def write_report(
    study, out_dir: str | os.PathLike | None = None, stem: str = "report"
) -> tuple[dict, dict]:
    """Write ``<stem>.html``, ``<stem>.json`` and ``<stem>.md`` (default ``DIR/report``).

    Returns
    -------
    paths : dict of str to Path
    doc : dict
        The report document.
    """
    from evalsim.study.errors import StudyError
    from evalsim.study.files import write_new
    from evalsim.study.report_html import render_html

    out = Path(out_dir) if out_dir is not None else study.folder / "report"
    if out.exists() and not out.is_dir():
        raise StudyError(f"{out}: not a folder")
    if not out.exists():
        if not out.absolute().parent.is_dir():
            raise StudyError(f"{out}: its parent folder does not exist")
        out.mkdir()
    doc = report_document(study)
    texts = {
        "json": json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
        "markdown": render_markdown(doc),
        "html": render_html(doc, study),
    }
    paths = {}
    for kind, name in REPORT_FILES.items():
        path = out / name.replace("report", stem, 1)
        write_new(path, texts[kind].encode("utf-8"), replace=True)
        paths[kind] = path
    return paths, doc
