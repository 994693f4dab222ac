"""``evalsim study ...``: a locked study from the command line.

Subcommands (:data:`STUDY_SUBCOMMANDS`, in ``--help`` order)::

    evalsim study init DIR                     write a commented example study.yaml
    evalsim study plan DIR                     exact power and MDE of the design
    evalsim study lock DIR [--seed S]          freeze: lock.json, schedule, codes, sheets
    evalsim study amend DIR --why TEXT [--to NEW] [--seed S]
    evalsim study record DIR TRIAL success|failure [--failure TYPE] [--note TEXT] [--id ID]
    evalsim study undo DIR EVENT_OR_TRIAL [--why TEXT]
    evalsim study import DIR FILE.csv
    evalsim study status DIR [--json]
    evalsim study export DIR [--out FILE.csv|FILE.parquet]
    evalsim study unblind DIR --by NAME
    evalsim study report DIR [--out-dir D]

Every command except ``init``, ``plan`` and ``lock`` first checks that ``study.yaml`` still
matches the lock, and refuses in one line if it does not. The work is done by
:mod:`evalsim.study`; this module parses, calls it and renders.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from evalsim.cli import study_bench
from evalsim.cli._common import BadInput, Report, Subcommand, add_subcommands, arg, passed_on

__all__ = ["register", "STUDY_SUBCOMMANDS"]


def _pct(x) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


# --------------------------------------------------------------------------- init / plan / lock
def _init(args) -> Report:
    from evalsim.study import init_study

    path = init_study(args.dir)
    r = Report({"study_file": str(path)})
    r.line(f"wrote {path}: an example study (2 arms, 4 x 5 grid, 2 object blocks, 20 pairs).")
    r.line(f"Edit it, then: evalsim study plan {args.dir}; evalsim study lock {args.dir} --seed S")
    return r


def _plan_report(plan: dict, protocol) -> Report:
    r = Report({"plan": plan})
    unit = plan["unit"]
    r.line(
        f"Design: {plan['n']} {unit}, alpha {plan['alpha']:g} ({plan['alternative']}), "
        f"primary test {protocol.primary_test}."
    )
    exp = plan["expected"]
    rows = [
        [
            "paired (exact McNemar)",
            _pct(plan["paired"]["power"]),
            _pct(plan["paired"]["mde"]),
            f"discordance {plan['paired']['discordance']:.3f}"
            if plan["paired"]["discordance"] is not None
            else "no discordance",
        ],
        [
            "unpaired (Fisher exact)",
            _pct(plan["unpaired"]["power"]),
            _pct(plan["unpaired"]["mde"]),
            f"around {plan['unpaired']['pooled_rate']:.2f}",
        ],
    ]
    r.table(
        f"What {plan['n']} {unit} can detect (expected a {exp['a']}, b {exp['b']}; "
        f"MDE at {100 * plan['power_target']:.0f}% power)",
        ["analysis", "power", "MDE", "assuming"],
        rows,
    )
    if plan["unpaired"].get("primary_test_power") is not None:
        from evalsim.stats.names import TWO_SAMPLE_TESTS

        power = _pct(plan["unpaired"]["primary_test_power"])
        label = TWO_SAMPLE_TESTS[plan["primary_test"]].label
        r.line(f"{label} test (the primary test): power {power}.")
    if plan.get("sequential"):
        s = plan["sequential"]
        r.line(
            f"Sequential design {s['label']}: power {_pct(s['power'])}, expected "
            f"{s['expected_n']:.1f} {unit} at the stop, certified type I <= "
            f"{s['certified_type1']}."
        )
    if plan["planned_level"] != plan["alpha"]:
        r.line(f"One-sided alternative: planned at the two-sided level {plan['planned_level']:g}.")
    return r


def _plan(args) -> Report:
    from evalsim.study.plan import plan_study
    from evalsim.study.protocol import load_protocol

    protocol = load_protocol(args.dir)
    return _plan_report(plan_study(protocol), protocol)


def _lock(args) -> Report:
    from evalsim.study import lock_study

    doc = lock_study(args.dir, seed=args.seed)
    r = Report(
        {k: doc[k] for k in ("study_sha256", "seed", "sheets")}
        | {"trials": len(doc["schedule"]), "codes": sorted(doc["blind_codes"].values())}
    )
    r.line(
        f"locked {args.dir}: sha256 {doc['study_sha256']}, seed {doc['seed']}, "
        f"{len(doc['schedule'])} trials scheduled."
    )
    r.line(
        "Blind codes: "
        + ", ".join(sorted(doc["blind_codes"].values()))
        + " (which arm is which stays hidden until `evalsim study unblind`)."
    )
    if doc["sheets"]:
        r.line(f"Sheets: {', '.join(str(Path(args.dir) / 'sheets' / n) for n in doc['sheets'])}")
    return r


def _amend(args) -> Report:
    from evalsim.study import amend_study

    new, doc = amend_study(args.dir, args.why, new_folder=args.to, seed=args.seed)
    r = Report(
        {"new_folder": str(new), "study_sha256": doc["study_sha256"], "amends": doc["amends"]}
    )
    r.line(
        f"new study {new} (sha256 {doc['study_sha256'][:12]}) amends {args.dir} "
        f"({doc['amends']['study_sha256'][:12]}): {args.why}"
    )
    r.line(f"{args.dir} keeps its lock and its trials; its study.yaml is back to the locked text.")
    return r


# --------------------------------------------------------------------------- record / undo / import
def _open(args):
    from evalsim.study import open_study

    return open_study(args.dir)


def _record(args) -> Report:
    study = _open(args)
    res = study.record(
        args.trial,
        args.outcome,
        event_id=args.id,
        source="cli",
        **passed_on(args, "failure", "note", "by"),
    )
    t = study.by_trial[res.event.trial]
    data = {
        "event": res.event.to_dict(),
        "duplicate": res.duplicate,
        "out_of_order": res.out_of_order,
        "after_stop": res.after_stop,
        "decision": res.decision,
    }
    r = Report(data)
    word = "already recorded" if res.duplicate else "recorded"
    r.line(
        f"{word}: {t.trial} ({t.code}, {t.position}, {t.block}) "
        f"{'success' if res.event.payload['success'] else 'failure'} [event {res.event.id}]"
    )
    if res.out_of_order:
        r.line("deviation: recorded out of its scheduled order")
    if res.after_stop:
        r.line("deviation: recorded after the sequential stop; kept, not in the primary analysis")
    if res.decision:
        d = res.decision
        head = "continue" if d["status"] == "continue" else f"STOP: {d['verdict']}"
        r.line(
            f"sequential design: {head} ({d['boundary']}); certified type I <= "
            f"{d['certified_type1']}"
        )
    return r


def _undo(args) -> Report:
    study = _open(args)
    target = args.event
    if target in study.by_trial:  # a trial id: its outcome event
        held = study.state().outcomes.get(target)
        if held is None:
            raise BadInput(f"trial {target} has no outcome to undo")
        target = held.event.id
    ev = study.undo(target, why=args.why, undo_id=args.id, by=args.by)
    r = Report({"event": ev.to_dict()})
    r.line(f"undone: event {target} (trial {ev.trial}) by undo event {ev.id}")
    return r


def _import(args) -> Report:
    from evalsim.study.exchange import import_outcomes

    study = _open(args)
    res = import_outcomes(study, args.file, by=args.by)
    r = Report(res)
    r.line(
        f"{args.file}: {res['rows']} rows; {res['recorded']} recorded, {res['already']} "
        "already recorded from this file."
    )
    if res["out_of_order"]:
        r.line("deviation: out of scheduled order: " + ", ".join(res["out_of_order"]))
    return r


# --------------------------------------------------------------------------- status / export
def _status(args) -> Report:
    study = _open(args)
    d = study.status()
    r = Report(d)
    r.line(
        f"{d['done']}/{d['total']} trials done; lock {d['study_sha256'][:12]}"
        + ("; unblinded" if d["unblinded"] else "; blind")
    )
    r.table(
        "Progress by block",
        ["block", "done", "scheduled"],
        [[b, v["done"], v["total"]] for b, v in d["blocks"].items()],
    )
    n = d["next"]
    if n is None:
        r.line("every scheduled trial has an outcome")
    else:
        r.line(
            f"next: {n['trial']}  code {n['code']}  position {n['position']} "
            f"({n['x_cm']:g}, {n['y_cm']:g} cm)  block {n['block']}"
        )
    if d["stop"]:
        r.line(
            f"sequential design stopped: {d['stop'].get('verdict')} ({d['stop'].get('boundary')})"
        )
    dev = d["deviations"]
    rows = [
        ["undone", ", ".join(f"{u['trial']} ({u['event']})" for u in dev["undone"])],
        ["out of order", ", ".join(dev["out_of_order"])],
        ["skipped", ", ".join(dev["skipped"])],
        ["after the stop", ", ".join(dev["after_stop"])],
        ["amendments", "; ".join(f"{a['to']}: {a['why']}" for a in dev["amendments"])],
    ]
    rows = [x for x in rows if x[1]]
    if rows:
        r.table("Deviations", ["kind", "trials"], rows)
    else:
        r.line("no deviations")
    return r


def _export(args) -> Report:
    from evalsim.study.exchange import EXPORT_COLUMNS, export_rows, rows_csv
    from evalsim.study.files import check_replaceable, write_new

    study = _open(args)
    rows = export_rows(study)
    if args.out is None:
        return _Raw(rows_csv(rows))
    out = Path(args.out)
    suffix = out.suffix.lower()
    if suffix not in (".csv", ".parquet"):
        raise BadInput(f"--out must end in .csv or .parquet, got {args.out!r}")
    if suffix == ".csv":
        write_new(out, rows_csv(rows).encode("utf-8"), replace=True)
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        from evalsim.io import atomic_path

        table = (
            pa.Table.from_pylist(rows)
            if rows
            else pa.table({c: pa.array([], pa.string()) for c in EXPORT_COLUMNS})
        )
        check_replaceable(out)
        with atomic_path(out) as tmp:
            pq.write_table(table, tmp)
    r = Report({"out": str(out), "trials": len(rows)})
    r.line(f"wrote {out}: {len(rows)} trials")
    return r


class _Raw(Report):
    """Text printed as is (the CSV of ``export`` without ``--out``)."""

    def __init__(self, text: str):
        super().__init__({"csv": text})
        self.text = text

    def render(self, fmt: str = "text") -> str:
        return self.text if fmt != "json" else super().render(fmt)


# --------------------------------------------------------------------------- unblind / report
def _unblind(args) -> Report:
    study = _open(args)
    ev, first = study.unblind(args.by)
    r = Report({"event": ev.to_dict(), "first": first, "codes": study.codes})
    if not first:
        r.line(f"already unblinded by {ev.payload['by']} at {ev.recorded_at}")
    else:
        r.line(f"unblinded by {args.by} (event {ev.id})")
    for arm, code in study.codes.items():
        r.line(f"  {code} = {arm}")
    return r


def _report(args) -> Report:
    from evalsim.study.report import write_report

    study = _open(args)
    paths, doc = write_report(study, args.out_dir)
    r = Report({"files": {k: str(v) for k, v in paths.items()}, "headline": doc["headline"]})
    r.line(doc["headline"]["text"])
    for kind, p in paths.items():
        r.line(f"{kind}: {p}")
    return r


# --------------------------------------------------------------------------- parsers
def _seed(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not 0 <= v < (1 << 63):
        raise argparse.ArgumentTypeError(f"must be in [0, 2**63), got {text}")
    return v


_DIR = arg("dir", metavar="DIR", help="the study folder")
_BY = arg("--by", default=None)  # who did it, in the event (undo, import)


def _in_dir(name: str, help: str, run, *arguments) -> Subcommand:
    """A subcommand on the study folder: ``DIR`` first, then ``arguments``, then ``--json``."""
    return Subcommand(name, help, run, (_DIR, *arguments))


#: Each ``evalsim study`` subcommand (:class:`~evalsim.cli._common.Subcommand`), in ``--help``
#: order. Another module adds its subcommands by appending its own declarations here.
STUDY_SUBCOMMANDS: tuple[Subcommand, ...] = (
    _in_dir("init", "write a commented example study.yaml into DIR", _init),
    _in_dir("plan", "what the design can detect: exact power and MDE", _plan),
    _in_dir(
        "lock",
        "freeze the study: hash, schedule, blind codes, sheets",
        _lock,
        arg("--seed", type=_seed, default=None, help="study seed (default: random)"),
    ),
    _in_dir(
        "amend",
        "start a new study from the edited study.yaml",
        _amend,
        arg("--why", required=True, help="the reason, stated in both reports"),
        arg("--to", default=None, metavar="NEW_DIR", help="default: DIR-amend1"),
        arg("--seed", type=_seed, default=None, help="default: the old seed"),
    ),
    _in_dir(
        "record",
        "record the outcome of a scheduled trial",
        _record,
        arg("trial", metavar="TRIAL", help="trial id from the schedule (T001 ...)"),
        arg("outcome", choices=("success", "failure")),
        arg("--failure", default=None, metavar="TYPE", help="a failure type of the rubric"),
        arg("--note", default=None),
        arg("--id", default=None, help="event id (a resubmission is recorded once)"),
        arg("--by", default=None, help="who records it"),
    ),
    _in_dir(
        "undo",
        "cancel an outcome (an undo event points at it)",
        _undo,
        arg("event", metavar="EVENT_OR_TRIAL", help="an outcome's event id, or a trial id"),
        arg("--why", default=None),
        arg("--id", default=None, help="the undo event's id"),
        _BY,
    ),
    _in_dir(
        "import",
        "record outcomes typed from paper run sheets (CSV)",
        _import,
        arg("file", metavar="FILE.csv", help="columns trial, outcome [, failure, note]"),
        _BY,
    ),
    _in_dir("status", "progress, the next trial and the deviations", _status),
    _in_dir(
        "export",
        "the trial log as CSV (stdout or --out) or Parquet",
        _export,
        arg("--out", default=None, metavar="FILE", help=".csv or .parquet"),
    ),
    _in_dir(
        "unblind",
        "reveal which arm each code is (a logged event)",
        _unblind,
        arg("--by", required=True, help="who unblinds"),
    ),
    _in_dir(
        "report",
        "the HTML, JSON and Markdown report of the study",
        _report,
        arg("--out-dir", default=None, help="default: DIR/report"),
    ),
    *study_bench.STUDY_SUBCOMMANDS,  # serve, demo: the console (issue 42)
)


def register(subparsers) -> None:
    """Add ``evalsim study`` and its subcommands."""
    p = subparsers.add_parser(
        "study",
        help="a locked study: protocol, schedule, trial store, report",
        description="A study decided before its first trial: init, plan, lock, record, report.",
    )
    add_subcommands(p, "study_command", "SUBCOMMAND", STUDY_SUBCOMMANDS)
