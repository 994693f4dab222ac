"""``evalsim sequential design|oc|check|sheet``: sequential designs with certified error rates.

* ``design --out FILE``: build a design (paired or unpaired, alpha, maximum n, spending or
  boundary shape, look spacing, futility) and write its design file (JSON, integer
  boundaries; format in docs/guide/sequential.md and :mod:`evalsim.stats.sequential.io`).
* ``oc DESIGN --pa P --pb P`` (or ``--p10 --p01`` for a paired design): exact operating
  characteristics.
* ``check DESIGN LOG [LOG ...] --a X --b Y``: replay a running trial log (the formats of
  ``compare``) through the design: "continue" or "stop: <verdict>", with the tallies, the
  boundary crossed and an approximate repeated confidence interval for p_B - p_A.
* ``sheet DESIGN --out PREFIX``: the printable bench sheet, PREFIX.png and PREFIX.pdf.
"""

from __future__ import annotations

import argparse

import numpy as np

from evalsim._log_files import pairing_key
from evalsim.cli._common import (
    BadInput,
    Report,
    _looks,
    _open_unit,
    _pct,
    _positive_int,
    _probability,
    add_alpha_flag,
    add_force_flag,
    add_json_flag,
)
from evalsim.cli._reading import add_reading_flags, reading_options
from evalsim.cli._safe_output import DESIGN_FILE, FIGURE, check_output_path, output_file
from evalsim.stats.boundaries import (
    BOUNDARY_FAMILIES,
    CLI_BOUNDARY_FAMILIES,
    kind_problem,
    or_list,
)

# evalsim.stats.boundaries holds only names (no numba, no SciPy), so it is imported here for
# the --spending choices. The other evalsim.stats modules are imported inside the functions
# that use them: they load numba kernels and SciPy, which a command on a small log should not
# pay for at start (issue 24).

#: Largest n_max of a paired design the command builds: the exact paired recursion and its
#: certificate grow as O(n_max^2) states per look (unpaired designs stop at
#: :data:`evalsim.stats.sequential.UNPAIRED_N_MAX`).
PAIRED_N_MAX = 2000


def _load(path: str):
    from evalsim.stats.sequential.io import load_design

    return load_design(path)


def _cert_text(design) -> str:
    c = design.certificate
    if c is None:
        return "no certificate in the file"
    return (
        f"certified worst-case false-win rate <= {c.upper:.6f} "
        f"(attained {c.attained:.6f}; {c.method})"
    )


def _family_parameter(args) -> dict:
    """The ``--spending`` family's parameter as a keyword (``{"rho": 1.5}``), checked.

    ``--rho`` belongs to the families whose parameter is rho, ``--b`` (which has a default)
    to those whose parameter is b (:data:`evalsim.stats.boundaries.BOUNDARY_FAMILIES`).
    """
    name = BOUNDARY_FAMILIES[args.spending].parameter
    given = {"rho": args.rho, "b": args.b}
    if name is not None and given[name] is None:
        raise BadInput(f"--spending {args.spending} needs --{name}")
    if args.rho is not None and name != "rho":
        takers = [f for f in CLI_BOUNDARY_FAMILIES if BOUNDARY_FAMILIES[f].parameter == "rho"]
        takes = f"--{name}" if name else "none"
        raise BadInput(
            f"--rho is the exponent of --spending {or_list(takers)}; {args.spending} takes {takes}"
        )
    return {} if name is None else {name: given[name]}


def cmd_design(args) -> Report:
    futility = None
    if (args.futility_z is None) != (args.futility_from is None):
        raise BadInput("give both --futility-z and --futility-from, or neither")
    if args.futility_z is not None:
        futility = {"z": args.futility_z, "from": args.futility_from}
    check_output_path(args.out, "--out", DESIGN_FILE, args.force)
    parameter = _family_parameter(args)
    if args.d_max is not None and args.kind != "paired":
        raise BadInput("--d-max (a cap on discordant pairs) is for --kind paired designs")
    if args.kind == "paired" and args.n_max > PAIRED_N_MAX:
        raise BadInput(
            f"--n-max {args.n_max} is above the paired limit {PAIRED_N_MAX} of this command"
        )
    problem = kind_problem(args.spending, args.kind, cli=True)
    if problem is not None:
        raise BadInput(f"--spending {args.spending} {problem}")
    from evalsim.stats.sequential.builders import FAMILY_BUILDERS

    if args.spending in FAMILY_BUILDERS:
        try:
            design = FAMILY_BUILDERS[args.spending](
                args.kind, args.alpha, args.n_max, args.alternative, args.pa, args.pb, args.power
            )
        except ValueError as e:
            raise BadInput(str(e)) from None
    elif args.kind == "paired":
        if args.looks != "every":
            raise BadInput("paired designs look after every pair; drop --looks")
        from evalsim.stats.sequential.paired import paired_design

        design = paired_design(
            args.alpha,
            args.n_max,
            args.alternative,
            args.spending,
            d_max=args.d_max,
            futility=futility,
            **parameter,
        )
    else:
        from evalsim.stats.sequential.designs import unpaired_family_design

        design = unpaired_family_design(
            args.spending,
            args.alpha,
            args.n_max,
            args.alternative,
            args.looks,
            futility=futility,
            **parameter,
        )
    from evalsim.stats.sequential.io import design_json

    text = design_json(design)
    with output_file(args.out, "--out", DESIGN_FILE, args.force) as tmp:
        tmp.write_text(text, encoding="utf-8", newline="\n")
    c = design.certificate
    data = {
        "out": args.out,
        "design": design.label,
        "kind": design.kind,
        "alternative": design.alternative,
        "alpha": design.alpha,
        "n_max": design.n_max,
        "looks": len(design.look_sizes),
        "boundary": design.boundary,
        "certificate": c.to_dict(),
    }
    rep = Report(data)
    rep.line(f"wrote {args.out}: {design.label}")
    rep.line(_cert_text(design))
    return rep


def _oc_report(design, oc) -> Report:
    data = {
        "design": design.label,
        "p_a": oc.p_a,
        "p_b": oc.p_b,
        "p10": oc.p10,
        "p01": oc.p01,
        "verdicts": oc.verdicts,
        "rejection_prob": oc.rejection_prob,
        "power": oc.power,
        "ess": oc.ess,
        "stop_quantiles": {
            "25%": oc.quantile(0.25),
            "50%": oc.quantile(0.5),
            "90%": oc.quantile(0.9),
        },
        "max_type1_certified": design.certificate.upper if design.certificate else None,
    }
    rep = Report(data)
    unit = "pairs" if design.kind == "paired" else "trials per policy"
    rep.line(f"design: {design.label}")
    where = f"p_A = {oc.p_a}, p_B = {oc.p_b}" if oc.p_a is not None else ""
    if oc.p10 is not None:
        where += f"{'; ' if where else ''}A-only pairs {oc.p10:.4f}, B-only pairs {oc.p01:.4f}"
    rep.line(f"at {where} (exact)")
    rep.table(
        "Verdicts", ["verdict", "probability"], [[k, _pct(v, 2)] for k, v in oc.verdicts.items()]
    )
    rep.table(
        f"Stopping time ({unit})",
        ["expected", "25%", "median", "90%", "max"],
        [[f"{oc.ess:.1f}", oc.quantile(0.25), oc.quantile(0.5), oc.quantile(0.9), design.n_max]],
    )
    rep.line(_cert_text(design))
    return rep


def cmd_oc(args) -> Report:
    design = _load(args.design)
    given_split = args.p10 is not None or args.p01 is not None
    if design.kind == "unpaired" and given_split:
        raise BadInput("--p10/--p01 are for paired designs; give --pa and --pb")
    if not given_split and (args.pa is None or args.pb is None):
        raise BadInput("give --pa and --pb (or --p10 and --p01 for a paired design)")
    if given_split and (args.pa is not None or args.pb is not None):
        raise BadInput(
            "give --p10 and --p01, or --pa and --pb, not both: a paired design's operating "
            "characteristics depend on p10 and p01 only, so --pa/--pb would be ignored"
        )
    from evalsim.stats.sequential.designs import operating_characteristics

    oc = operating_characteristics(design, p_a=args.pa, p_b=args.pb, p10=args.p10, p01=args.p01)
    return _oc_report(design, oc)


def _policy_rows(df, name: str, flag: str):
    policies = sorted(set(df["policy"]))
    if name not in policies:
        raise BadInput(
            f"{flag} {name!r} is not a policy in the log (policies: {', '.join(policies)})"
        )
    return df[df["policy"] == name]


def cmd_check(args) -> Report:
    from evalsim.trial_logs import read_trial_logs  # heavy (pandas): only sequential check

    design = _load(args.design)
    df = read_trial_logs(args.files, options=reading_options(args))
    if args.task is not None:
        if "task" not in df.columns or args.task not in set(df["task"]):
            raise BadInput(f"task {args.task!r} not in the log")
        df = df[df["task"] == args.task]
    if args.a == args.b:
        raise BadInput(f"--a and --b name the same policy {args.a!r}")
    a = _policy_rows(df, args.a, "--a")
    b = _policy_rows(df, args.b, "--b")
    if design.kind == "paired":
        keys = pairing_key(df)
        if not keys:
            raise BadInput("a paired design needs a 'condition' column to pair the trials")
        for name, g in (("A", a), ("B", b)):
            if g.duplicated(keys).any():
                raise BadInput(f"policy {name} ran a condition more than once: cannot pair")
        b_idx = b.reset_index()[[*keys, "index"]].rename(columns={"index": "row_b"})
        a_idx = a.reset_index()[[*keys, "index", "success"]].rename(columns={"index": "row_a"})
        merged = a_idx.merge(
            b_idx.merge(b[[*keys, "success"]], on=keys), on=keys, suffixes=("_a", "_b")
        )
        if merged.empty:
            raise BadInput("the two policies share no condition: nothing to pair")
        # a pair is complete when its later trial is logged
        merged = merged.assign(done=np.maximum(merged["row_a"], merged["row_b"])).sort_values(
            "done", kind="stable"
        )
        from evalsim.stats.sequential.io import check_paired

        res = check_paired(design, merged["success_a"].to_numpy(), merged["success_b"].to_numpy())
    else:
        from evalsim.stats.sequential.io import check_unpaired

        res = check_unpaired(design, a["success"].to_numpy(), b["success"].to_numpy())
    beyond = {name: len(g) - design.n_max for name, g in (("A", a), ("B", b))}
    beyond = {k: v for k, v in beyond.items() if v > 0} if design.kind == "unpaired" else {}
    data = {
        "design": design.label,
        "status": res.status,
        "verdict": res.verdict,
        "at": res.at,
        "tallies": res.tallies,
        "boundary": res.boundary,
        "interval_diff_b_minus_a": None if res.interval is None else _clip(res.interval),
        "trials_beyond_n_max": beyond,
        "interval_confidence": res.confidence,
        "stops_reachable": res.reachable,
        "never_declares": [] if design.two_sided else ["A better"],
        "max_type1_certified": design.certificate.upper if design.certificate else None,
    }
    rep = Report(data)
    rep.line(res.line())
    rep.line(f"design: {design.label}")
    rep.table("Tallies", list(res.tallies), [list(res.tallies.values())])
    if res.interval is not None:
        lo, hi = _clip(res.interval)
        clipped = "; clipped to [-100, +100]" if [lo, hi] != list(res.interval) else ""
        rep.line(
            f"p_B - p_A: [{100 * lo:+.1f}, {100 * hi:+.1f}] points "
            "(approximate repeated confidence interval at the stopping look's critical value, "
            f"nominal {res.confidence:.4f} pointwise{clipped})"
        )
    for name, extra in beyond.items():
        rep.line(
            f"warning: policy {name} has {extra} trial(s) beyond the design's n_max = "
            f"{design.n_max}; they are not used (the design ends at n_max)"
        )
    rep.line(_cert_text(design))
    rep.data["warnings"] = list(df.attrs.get("warnings", []))  # the reader's notes
    for w in rep.data["warnings"]:
        rep.line(w)
    return rep


def _clip(interval) -> list[float]:
    """A difference of two rates lies in [-1, 1]: the Wald-type interval is clipped to it."""
    lo, hi = (float(v) for v in interval)
    return [max(lo, -1.0), min(hi, 1.0)]


def cmd_sheet(args) -> Report:
    png, pdf = f"{args.out}.png", f"{args.out}.pdf"
    for path in (png, pdf):
        check_output_path(path, "--out", FIGURE, args.force)
    design = _load(args.design)
    import matplotlib.pyplot as plt

    from evalsim.figures import save_figure, set_style
    from evalsim.figures.sequential_sheet import bench_sheet

    set_style()
    fig = bench_sheet(design)
    try:
        for path in (png, pdf):  # again, just before writing (atomic_path refuses them too)
            check_output_path(path, "--out", FIGURE, args.force, probe=False)
        save_figure(fig, png, pdf)
    except OSError as err:
        raise BadInput(f"--out: cannot write {png!r} and {pdf!r} ({err.strerror or err})") from None
    finally:
        plt.close(fig)  # save_figure closes it too; once more is harmless
    rep = Report({"design": design.label, "png": png, "pdf": pdf})
    rep.line(f"wrote {png} and {pdf} ({design.label})")
    return rep


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def register(sub) -> None:
    """Add the ``sequential`` subcommand (with design, oc, check, sheet) to the parser."""
    p = sub.add_parser(
        "sequential", help="sequential designs: stop early with a certified error rate"
    )
    inner = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))
    inner.required = True

    d = inner.add_parser("design", help="build a design and write its design file")
    d.add_argument("--out", required=True, metavar="FILE", help="design file to write (JSON)")
    add_force_flag(d)
    d.add_argument("--kind", choices=("unpaired", "paired"), default="unpaired")
    d.add_argument("--alternative", choices=("one-sided", "two-sided"), default="one-sided")
    add_alpha_flag(d)
    d.add_argument(
        "--n-max",
        type=_positive_int,
        default=200,
        help="max trials per policy (pairs); default 200",
    )
    d.add_argument(
        "--spending", "--family", dest="spending", choices=CLI_BOUNDARY_FAMILIES, default="pocock"
    )
    d.add_argument("--pa", type=_probability, help="optimal: A's rate at the alternative")
    d.add_argument("--pb", type=_probability, help="optimal: B's rate at the alternative")
    d.add_argument("--power", type=_open_unit, help="optimal: power floor (default 0.8)")
    d.add_argument("--rho", type=_number, help="exponent of the power spending family")
    d.add_argument(
        "--b",
        type=_number,
        default=0.16,
        help="shape exponent b of c_t = a (t/n)^-b (default 0.16)",
    )
    d.add_argument(
        "--looks",
        type=_looks,
        default="every",
        help="'every' (default), K, or sizes like 50,100,200",
    )
    d.add_argument("--d-max", type=_positive_int, help="paired: stop at this many discordant pairs")
    d.add_argument(
        "--futility-z", type=_number, help="stop for futility when z <= this (non-binding)"
    )
    d.add_argument(
        "--futility-from", type=_positive_int, help="... from this many trials (pairs) on"
    )
    add_json_flag(d)
    d.set_defaults(run=cmd_design)

    o = inner.add_parser("oc", help="exact operating characteristics of a design")
    o.add_argument("design", metavar="DESIGN")
    o.add_argument("--pa", type=_probability)
    o.add_argument("--pb", type=_probability)
    o.add_argument("--p10", type=_probability, help="paired: P(only A succeeds)")
    o.add_argument("--p01", type=_probability, help="paired: P(only B succeeds)")
    add_json_flag(o)
    o.set_defaults(run=cmd_oc)

    c = inner.add_parser("check", help="continue or stop? a running trial log against a design")
    c.add_argument("design", metavar="DESIGN")
    c.add_argument("files", nargs="+", metavar="LOG", help="CSV, Parquet or LeRobot JSON log")
    c.add_argument("--a", required=True, metavar="X", help="reference policy")
    c.add_argument("--b", required=True, metavar="Y", help="policy compared with it")
    c.add_argument("--task", help="use only the trials of this task")
    add_json_flag(c)
    add_reading_flags(c)
    c.set_defaults(run=cmd_check)

    s = inner.add_parser("sheet", help="printable bench sheet (PNG and PDF)")
    s.add_argument("design", metavar="DESIGN")
    s.add_argument(
        "--out", required=True, metavar="PREFIX", help="writes PREFIX.png and PREFIX.pdf"
    )
    add_force_flag(s)
    add_json_flag(s)
    s.set_defaults(run=cmd_sheet)
