"""The product manifest: every table and figure of the study, declared once.

Each :class:`Product` holds a product's id, stage, kind, builder, inputs, the keyword
arguments its builder takes from the config, its caption and its job's size. The workflow
builds one rule per entry in a loop (``workflow/rules/products.smk``): its outputs, log and
benchmark paths all derive from the id, and one script (``workflow/scripts/make_product.py``)
runs every builder. The docs' product catalogue and the tests read the same table.

Adding a table means one entry here, its builder (a function in an ``evalsim.products``
module that returns a DataFrame, or a Matplotlib figure for a figure) and its caption
(``workflow/report/<key>.rst``).

This module is data only and cheap to import: Snakemake reads it on every invocation, so
builders are named ``"module:function"`` (under ``evalsim.products``; the module may be a
stage subpackage's, e.g. ``"design.detection:mde_table"``) rather than imported here; importing
every builder module would add about 2 s to each ``snakemake`` call.
``tests/test_manifest.py`` resolves each name and binds its arguments, so a renamed builder
or parameter fails a test, and a search for the function's name finds its entry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from evalsim.config import (
    coverage_policy,
    multi_pair,
    policy_names,
    simreal_policies,
    simreal_task,
)
from evalsim.products.settings import Bootstrap, Draws, Sizing

__all__ = [
    "PRODUCTS",
    "STAGES",
    "Product",
    "config_keys",
    "product_paths",
    "products_of",
]

#: The stages in the order of the report and the workflow files.
STAGES = (
    "exact",
    "fisher",
    "simulate",
    "resample",
    "design",
    "peeking",
    "multi",
    "sequential",
    "drift",
    "simreal",
    "report",
)

POOLS = "results/pools/pools.parquet"
SWEEP = "results/pools/sigma_sweep.parquet"
DRIFT_CURVE = "results/drift/offset_curve.parquet"
DESIGN_FILE = "results/sequential/designs/{}.json"
TWIN_POOL = "results/pools/twins/{}.parquet"

Config = Mapping
Kwargs = Callable[[Config], dict]


def _none(c: Config) -> dict:
    return {}


@dataclass(frozen=True)
class Product:
    """One table or figure of the study.

    Attributes
    ----------
    id : str
        The product's file stem: ``results/tables/<id>.{csv,md,tex}`` for a table,
        ``figures/<id>.{png,pdf}`` for a figure.
    stage : str
        Its stage (:data:`STAGES`): the report's category and the folder of its log.
    kind : {"table", "figure"}
        What the builder returns: a DataFrame (written by :func:`evalsim.tables.write_table`)
        or a figure (saved by :func:`evalsim.figures.save_figure`).
    builder : str
        ``"module:function"`` under :mod:`evalsim.products` (``module`` may be dotted:
        ``"design.detection:mde_table"``).
    kwargs : callable
        The builder's keyword arguments from the (checked, canonical) config; which keys it
        reads is :func:`config_keys`.
    inputs : callable
        Named input paths (a path or a list of paths) from the config; Parquet and CSV
        inputs reach the builder as DataFrames, design files as ``{name: design}``.
    key : str
        Unique name of the job (log, benchmark, rule and caption); the id unless a table and
        a figure share it.
    caption : str
        Stem of the caption file, ``workflow/report/<caption>.rst``; the key by default.
    local : bool
        A small job (seconds) that runs inside the main Snakemake process, not on a cluster.
    runtime : int
        Minutes to request on a cluster.
    mem_mb : int
        Memory to request, MB.
    """

    id: str
    stage: str
    kind: str
    builder: str
    kwargs: Kwargs = _none
    inputs: Callable[[Config], dict] = _none
    key: str = ""
    caption: str = ""
    local: bool = True
    runtime: int = 10
    mem_mb: int = 1000
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.stage not in STAGES:
            raise ValueError(f"{self.id}: stage must be one of {STAGES}, got {self.stage!r}")
        if self.kind not in ("table", "figure"):
            raise ValueError(f"{self.id}: kind must be table or figure, got {self.kind!r}")
        if not self.key:
            object.__setattr__(self, "key", self.id)
        if not self.caption:
            object.__setattr__(self, "caption", self.key)

    @property
    def document(self) -> str:
        """The product by the documents' own name ("Table B, lesson 25"; :data:`DOCUMENT_NAMES`),
        or "" for a product of the study's own."""
        return DOCUMENT_NAMES.get(self.id, "")

    @property
    def report_label(self) -> dict[str, str]:
        """The report's one column for this product: its name in the documents with its id
        beside ("Table B, lesson 25 (T08)"; a product of the study's own is named from its id);
        unique within its category, since the report lists one entry per label.

        One label, not two: Snakemake's report turns a label after the first into a toggle
        when it has two values, each on half of a category's results, so in a category of
        two products (drift, simreal) a separate id column became a toggle, the entry it
        hid had no result and the page went blank (tests/test_report_browser.py)."""
        number, _, rest = self.id.partition("_")
        numbered = number[:1] in ("T", "F") and number[1:].isdigit() and bool(rest)
        short = number if numbered else self.id
        if numbered and number[0] == "F" and self.kind == "table":
            short += " table"  # a figure's numbers: listed apart from its picture (F03)
        name = self.document or "study's own: " + (rest if numbered else self.id).replace("_", " ")
        return {"product": f"{name} ({short})"}

    @property
    def rule(self) -> str:
        """The Snakemake rule's name."""
        return f"{self.stage}_{self.key}"

    @property
    def log(self) -> str:
        """The job's log file."""
        return f"logs/{self.stage}/{self.key}.log"

    @property
    def benchmark(self) -> str:
        """The job's benchmark file (wall and CPU seconds, memory)."""
        return f"results/benchmarks/{self.stage}/{self.key}.tsv"


#: Each product that reproduces something of the four documents, by the documents' own
#: name for it (lesson 25 is document 000). The report lists products by these names with
#: the id beside; docs/START_HERE.md maps lesson 25's tables and Figure B through them.
DOCUMENT_NAMES: dict[str, str] = {
    "T01_wilson_vs_library": "Build it, step 1 (Wald and Wilson vs SciPy), lesson 25",
    "T02_exact_coverage": "Build it, step 2 (exact coverage), lesson 25",
    "T03_prob_at_least_9_of_10": "Build it, step 3 (P(>= 9/10)), lesson 25",
    "T04_trials_for_half_width": "Table D, lesson 25",
    "T05_fisher_checks": "Build it, step 4 (Fisher by hand vs SciPy), lesson 25",
    "T06_fisher_power": "Build it, step 5 (exact power), lesson 25",
    "T07_pools": "Table A, lesson 25",
    "T08_trials_width_coverage": "Table B, lesson 25",
    "F01_width_coverage": "Figure B, lesson 25",
    "T09_nine_of_ten": "Table C, lesson 25",
    "T10_compare": "Table E, lesson 25",
    "T11_break_it": "Break it, lesson 25",
    "T12_seeds_exercise": "Check yourself (three seeds), lesson 25",
    "F02_protocol": "the evaluation protocol, lesson 25",
    "success_vs_sigma": "the experiment's sigma (9 and 6 mm), lesson 25",
    "T13_paired_vs_unpaired_sizing": "worked example: paired vs unpaired sizing, document 001",
    "T14_repeat_evaluation_gap": "the same checkpoint evaluated twice, document 001",
    "T15_wilson_vs_wald": "the toolkit's Wilson vs Wald, document 001",
    "T16_width_vs_n_bench_hours": "'Sit with this table': width against n, document 001",
    "T17_mde_and_n_per_arm": "the MDE table, document 001",
    "mde_vs_n": "the MDE table (figure), document 001",
    "power_vs_n": "the MDE table (power figure), document 001",
    "T18_mcnemar_vs_unpaired": "McNemar's test on paired trials, document 001",
    "T19_null_result_mde": "the null result at 45 trials per arm, document 001",
    "T20_fisher_pvalue_ladder": "90% vs 80%: the p-value ladder, document 002",
    "T21_trials_to_separate_90_80": "trials to separate 90% from 80%, document 002",
    "T22_two_spreads": "two spreads, document 002",
    "F03_peeking": "the peeking bars (2.8% vs 11.0%), document 002",
    "T23_clopper_pearson_vs_wilson": "section 2.1-2.2: Clopper-Pearson vs Wilson, document 004",
    "T24_difference_intervals": "section 3: CI of the difference, document 004",
    "T25_width_at_90": "section 1: width at 90%, document 004",
    "T26_estimation_vs_detection": "section 5: estimation vs detection, document 004",
    "T27_paired_contingency": "section 4: the paired contingency table, document 004",
    "T28_hierarchical_bootstrap": "section 4: episodes nested in tasks, document 004",
    "T29_cohens_h": "section 5: Cohen's h, document 004",
}


def product_paths(p: Product) -> dict[str, str]:
    """A product's output files by role (table: csv, md, tex, rst, html; figure: png, pdf).

    The table's rst is its note as a fragment that the caption includes; its html is its
    page in the report.
    """
    if p.kind == "figure":
        return {"png": f"figures/{p.id}.png", "pdf": f"figures/{p.id}.pdf"}
    return {
        "csv": f"results/tables/{p.id}.csv",
        "md": f"results/tables/{p.id}.md",
        "tex": f"results/tables/{p.id}.tex",
        "rst": f"results/report/tables/{p.id}.rst",
        "html": f"results/report/tables/{p.id}.html",
    }


def _csv(tid: str) -> str:
    return f"results/tables/{tid}.csv"


def _first_task(c: Config) -> str:
    return c["tasks"][0]["name"]


def _drift_policies(c: Config) -> list[str]:
    # Empty drift.policies: the first two configured policies (one policy: it runs both arms).
    return c["drift"]["policies"] or (policy_names(c) * 2)[:2]


def _t38_n(c: Config) -> list[int]:
    t = c["fisher"]["t38"]
    return list(range(t["n_min"], t["n_max"] + 1, t["n_step"]))


def _designs(c: Config) -> list[str]:
    return [DESIGN_FILE.format(d["name"]) for d in c["sequential"]["designs"]]


def _at(c: Config, path: str):
    node = c
    for part in path.split("."):
        node = node[part]
    return node


def _args(*specs) -> Kwargs:
    """Builder arguments read from the config, in the order given.

    Parameters
    ----------
    *specs : str or (str, callable)
        ``"a.b.c"``: argument ``c`` is ``config["a"]["b"]["c"]``; ``"name=a.b"``: argument
        ``name`` is ``config["a"]["b"]``; ``"**a.b"``: the section ``config["a"]["b"]``
        spread into arguments (passed whole); ``(name, f)``: argument ``name`` is
        ``f(config)``.

    Returns
    -------
    callable
        config -> dict of keyword arguments, reading exactly those keys.
    """

    def kwargs(c: Config) -> dict:
        out = {}
        for spec in specs:
            if isinstance(spec, tuple):
                name, value = spec[0], spec[1](c)
            elif spec.startswith("**"):
                out.update(dict(**_at(c, spec[2:])))
                continue
            elif "=" in spec:
                name, path = spec.split("=")
                value = _at(c, path)
            else:
                name, value = spec.rpartition(".")[2], _at(c, spec)
            out[name] = value
        return out

    return kwargs


def _unpacked(path: str, *names: str) -> list[tuple[str, Callable]]:
    """:func:`_args` specs: argument ``names[i]`` is item ``i`` of the list at ``path``."""
    return [(name, lambda c, i=i: _at(c, path)[i]) for i, name in enumerate(names)]


def _settings(name: str, group: type, *specs) -> tuple[str, Callable]:
    """An :func:`_args` spec: argument ``name`` is one settings group of
    :mod:`evalsim.products.settings`, its fields read from the config by ``specs`` (as
    :func:`_args` reads them: ``"a.b"`` fills field ``b``, ``"field=a.b"`` names it)."""
    fields = _args(*specs)
    return (name, lambda c: group(**fields(c)))


def _resample_policies(c):
    return [dict(p) for p in c["policies"]]


def _sigma_by_policy(c) -> dict[str, float]:
    """Each configured policy's aim noise, mm (figure legends name policies with it)."""
    return {p["name"]: float(p["sigma_mm"]) for p in c["policies"]}


_TASK = ("task", _first_task)

_EXACT = [
    Product(
        "T01_wilson_vs_library",
        "exact",
        "table",
        "exact:wilson_vs_library",
        _args(
            "exact.t01.cases",
            "exact.z",
            "exact.t01.library_z",
            "confidence",
            "exact.t01.max_diff_n",
            "exact.decimals",
            "exact.t01.document_max_diff",
        ),
    ),
    Product(
        "T02_exact_coverage",
        "exact",
        "table",
        "exact:exact_coverage_table",
        _args(
            "exact.t02.pool_k",
            "exact.t02.pool_n",
            "exact.t02.n_values",
            "exact.z",
            "exact.decimals",
            "exact.t02.document",
        ),
    ),
    Product(
        "T03_prob_at_least_9_of_10",
        "exact",
        "table",
        "exact:prob_at_least_table",
        _args("exact.t03.k", "exact.t03.n", "exact.t03.policies", "exact.decimals"),
    ),
    Product(
        "T04_trials_for_half_width",
        "exact",
        "table",
        "exact:trials_for_half_width_table",
        _args(
            "exact.t04.rates",
            "exact.t04.half_widths",
            "exact.z",
            "exact.t04.rounding",
            "exact.t04.document",
        ),
    ),
    Product(
        "coverage_vs_p",
        "exact",
        "figure",
        "exact:coverage_vs_p_figure",
        _args(
            "exact.coverage_figure.n_values",
            "confidence",
            "exact.coverage_figure.p_points",
            "exact.coverage_figure.p_min",
            "exact.coverage_figure.p_max",
            "exact.coverage_figure.y_min",
        ),
        local=False,
        runtime=30,
    ),
]

_FISHER = [
    Product(
        "T05_fisher_checks",
        "fisher",
        "table",
        "fisher:fisher_checks",
        _args(
            "fisher.t05.grid_n",
            "fisher.t05.cases",
            "fisher.decimals",
            "fisher.t05.document_max_diff",
            "fisher.t05.tie_check_n",
        ),
        local=False,
        runtime=20,
    ),
    Product(
        "T06_fisher_power",
        "fisher",
        "table",
        "fisher:fisher_power_table",
        _args(
            "fisher.t06.p_a",
            "fisher.t06.p_b",
            "fisher.t06.n_values",
            "alpha",
            "fisher.t06.pool_a",
            "fisher.t06.pool_b",
            "fisher.t06.document_power",
            "fisher.t06.document_not_better",
            "fisher.decimals",
            "fisher.t06.target_power",
            "fisher.power_window",
        ),
    ),
    Product(
        "T38_unconditional_power",
        "fisher",
        "table",
        "unconditional:unconditional_power_table",
        _args(
            "fisher.t38.rate_pairs",
            ("n_values", _t38_n),
            "alpha",
            "fisher.t38.target_power",
            "fisher.power_window",
        ),
        local=False,
        runtime=60,
        mem_mb=2000,
    ),
    Product(
        "F12_unconditional_power",
        "fisher",
        "figure",
        "unconditional:unconditional_power_figure",
        lambda c: {
            "p_a": c["fisher"]["t38"]["rate_pairs"][0][0],
            "p_b": c["fisher"]["t38"]["rate_pairs"][0][1],
            "n_values": _t38_n(c),
            "size_n": c["fisher"]["f12"]["size_n"],
            "size_rates": [
                (i + 1) / (c["fisher"]["f12"]["size_points"] + 1)
                for i in range(c["fisher"]["f12"]["size_points"])
            ],
            "alpha": c["alpha"],
        },
        local=False,
        runtime=60,
        mem_mb=2000,
    ),
]


def _pools(c):
    return {"pools": POOLS}


_SIMULATE = [
    Product(
        "sim_pool_rates",
        "simulate",
        "table",
        "simulate:pool_rates_table",
        _args("confidence"),
        _pools,
    ),
    Product(
        "T30_acceptance",
        "simulate",
        "table",
        "simulate:acceptance_table",
        _args("simulation.document", "alpha"),
        _pools,
        local=False,
    ),
    Product(
        "success_vs_sigma",
        "simulate",
        "figure",
        "simulate:success_vs_sigma_figure",
        _args(
            "confidence",
            ("policies", lambda c: {p["name"]: p["sigma_mm"] for p in c["policies"]}),
            "simulation.document",
        ),
        lambda c: {"sweep": SWEEP, "pools": POOLS},
        caption="sim_success_vs_sigma",
    ),
]

#: Lesson 25's evaluations, drawn from the first task's pools.
_DRAWS = _settings("draws", Draws, _TASK, "experiment.evaluations", "study_seed")

_RESAMPLE = [
    Product(
        "T07_pools",
        "resample",
        "table",
        "resample.experiment:table_a",
        _args(("policies", _resample_policies), _TASK, "confidence"),
        _pools,
    ),
    Product(
        "T08_trials_width_coverage",
        "resample",
        "table",
        "resample.experiment:table_b",
        _args(
            _DRAWS,
            ("policies", _resample_policies),
            "experiment.n_grid",
            "confidence",
        ),
        _pools,
        local=False,
        runtime=20,
    ),
    Product(
        "F01_width_coverage",
        "resample",
        "figure",
        "resample.figures:figure_b",
        _args(("policy", coverage_policy), "confidence"),
        lambda c: {"table_b": _csv("T08_trials_width_coverage")},
    ),
    Product(
        "T09_nine_of_ten",
        "resample",
        "table",
        "resample.experiment:table_c",
        _args(
            _DRAWS,
            ("policies", _resample_policies),
            "k=experiment.high_score_k",
            "n=experiment.high_score_n",
        ),
        _pools,
    ),
    Product(
        "T10_compare",
        "resample",
        "table",
        "resample.compare:table_e",
        _args(
            _settings("draws", Draws, _TASK, "evaluations=experiment.pairs", "study_seed"),
            ("comparisons", lambda c: [list(x) for x in c["experiment"]["comparisons"]]),
            "n_grid=experiment.comparison_n_grid",
            "alpha",
            "confidence",
        ),
        _pools,
        local=False,
        runtime=20,
    ),
    Product(
        "T11_break_it",
        "resample",
        "table",
        "resample.compare:table_break_it",
        _args(
            _DRAWS,
            ("policy", coverage_policy),
            "coverage_n=experiment.break_it_n",
            "perfect_n=experiment.high_score_n",
            "confidence",
        ),
        _pools,
    ),
    Product(
        "T12_seeds_exercise",
        "resample",
        "table",
        "resample.compare:table_seeds",
        _args(
            ("policies", _resample_policies),
            _TASK,
            "seeds=experiment.exercise_seeds",
            "trials=experiment.exercise_trials",
            "confidence",
        ),
        _pools,
    ),
]

#: The test every sample-size table of the design stage is planned for.
_SIZING = _settings("sizing", Sizing, "alpha", "design.power", "design.exact_fisher")

_DESIGN = [
    Product(
        "T13_paired_vs_unpaired_sizing",
        "design",
        "table",
        "design.sizing:paired_vs_unpaired_sizing",
        _args(
            "**design.sizing",
            _SIZING,
            "design.minutes_per_trial",
        ),
        local=False,
        runtime=20,
    ),
    Product(
        "T14_repeat_evaluation_gap",
        "design",
        "table",
        "design.detection:repeat_evaluation_gap",
        _args("**design.repeat_eval"),
    ),
    Product(
        "T15_wilson_vs_wald",
        "design",
        "table",
        "design.intervals:wilson_vs_wald",
        _args("counts=design.wilson_wald_counts", "confidence"),
    ),
    Product(
        "T16_width_vs_n_bench_hours",
        "design",
        "table",
        "design.intervals:width_vs_n",
        _args("**design.width_vs_n", "design.minutes_per_trial", "confidence"),
    ),
    Product(
        "T17_mde_and_n_per_arm",
        "design",
        "table",
        "design.detection:mde_table",
        _args(
            "design.mde.n_grid",
            "design.mde.pbar",
            "design.mde.planning_rates",
            _SIZING,
            "design.minutes_per_trial",
        ),
        local=False,
        runtime=20,
    ),
    Product(
        "T18_mcnemar_vs_unpaired",
        "design",
        "table",
        "design.pools:mcnemar_vs_unpaired",
        _args("design.paired_pools.pairs", _TASK, "alpha", "design.power"),
        _pools,
    ),
    Product(
        "T19_null_result_mde",
        "design",
        "table",
        "design.detection:null_result_mde",
        _args(
            "n_per_arm=design.mde.null_result_n",
            "design.mde.pbar",
            "design.mde.planning_rates",
            _SIZING,
        ),
    ),
    Product(
        "T20_fisher_pvalue_ladder",
        "design",
        "table",
        "design.detection:fisher_ladder",
        _args("**design.ladder", "alpha"),
    ),
    Product(
        "T21_trials_to_separate_90_80",
        "design",
        "table",
        "design.sizing:trials_to_separate",
        _args(
            "design.ladder.rates",
            _SIZING,
            "design.minutes_per_trial",
        ),
        local=False,
        runtime=30,
    ),
    Product(
        "T23_clopper_pearson_vs_wilson",
        "design",
        "table",
        "design.intervals:cp_vs_wilson",
        _args(*_unpacked("design.cp_wilson_count", "k", "n"), "confidence"),
    ),
    Product(
        "T24_difference_intervals",
        "design",
        "table",
        "design.intervals:difference_intervals",
        _args(*_unpacked("design.diff_counts", "counts_a", "counts_b"), "confidence"),
    ),
    Product(
        "T25_width_at_90",
        "design",
        "table",
        "design.intervals:width_at_rate",
        _args("**design.width_at_rate", "confidence"),
    ),
    Product(
        "T26_estimation_vs_detection",
        "design",
        "table",
        "design.sizing:estimation_vs_detection",
        _args(
            "**design.estimate_vs_detect",
            _SIZING,
            "confidence",
        ),
        local=False,
        runtime=20,
    ),
    Product(
        "T27_paired_contingency",
        "design",
        "table",
        "design.pools:paired_contingency_table",
        _args(
            "design.paired_pools.pairs",
            _TASK,
            _settings(
                "bootstrap",
                Bootstrap,
                "confidence",
                "reps=design.paired_pools.n_boot",
                "study_seed",
            ),
        ),
        _pools,
    ),
    Product(
        "T29_cohens_h",
        "design",
        "table",
        "design.sizing:cohens_h_table",
        _args("pairs=design.cohens_h_pairs", "alpha", "design.power"),
    ),
    Product(
        "mde_vs_n",
        "design",
        "figure",
        "design.figures:mde_vs_n_figure",
        _args(
            "n_max=design.figures.mde_n_max",
            "n_points=design.figures.mde_n_points",
            "design.mde.pbar",
            "alpha",
            "design.power",
            "mark_n=design.mde.n_grid",
        ),
        local=False,
        runtime=30,
    ),
    Product(
        "power_vs_n",
        "design",
        "figure",
        "design.figures:power_vs_n_figure",
        _args(
            "rates=design.figures.power_rates",
            "n_max=design.figures.power_n_max",
            "alpha",
            "design.power",
        ),
        local=False,
        runtime=20,
    ),
]

_PEEKING = [
    Product(
        "F03_peeking",
        "peeking",
        "table",
        "peeking:peeking_table",
        _args(
            "peeking.p",
            "peeking.n_per_arm",
            "alpha",
            "peeking.looks_grid",
            "peeking.mc_experiments",
            "study_seed",
            "peeking.document",
        ),
        key="F03_peeking_table",
        local=False,
        runtime=20,
    ),
    Product(
        "F03_peeking",
        "peeking",
        "figure",
        "peeking:peeking_figure",
        _args("alpha", "peeking.p"),
        lambda c: {"table": _csv("F03_peeking")},
    ),
    Product(
        "T22_two_spreads",
        "peeking",
        "table",
        "hierarchy:two_spreads_table",
        _args("confidence", "hierarchy.outcome"),
        _pools,
    ),
    Product(
        "T28_hierarchical_bootstrap",
        "peeking",
        "table",
        "hierarchy:hierarchical_bootstrap_table",
        _args(
            "hierarchy.cluster_by",
            _settings(
                "bootstrap", Bootstrap, "confidence", "reps=hierarchy.bootstrap_reps", "study_seed"
            ),
            "hierarchy.outcome",
        ),
        _pools,
        local=False,
        runtime=20,
    ),
]

#: The intervals of T34 and T35.
_MULTI_BOOTSTRAP = _settings(
    "bootstrap", Bootstrap, "confidence", "reps=multi.bootstrap_reps", "study_seed"
)

_MULTI = [
    Product(
        "T34_per_task",
        "multi",
        "table",
        "multi:per_task_table",
        _args(
            ("policy_a", lambda c: multi_pair(c)[0]),
            ("policy_b", lambda c: multi_pair(c)[1]),
            "multi.paired",
            "alpha",
            _MULTI_BOOTSTRAP,
            "multi.outcome",
        ),
        _pools,
        local=False,
        runtime=30,
    ),
    Product(
        "F08_per_task_rates",
        "multi",
        "figure",
        "multi:per_task_figure",
        _args("confidence", ("sigma_mm", _sigma_by_policy)),
        lambda c: {"table": _csv("T34_per_task")},
    ),
    Product(
        "T35_ranking",
        "multi",
        "table",
        "multi:ranking_table",
        _args(
            "source=multi.ranking_source",
            "alpha",
            _MULTI_BOOTSTRAP,
            "multi.outcome",
        ),
        lambda c: {"pools": POOLS, "sweep": SWEEP},
        local=False,
        runtime=30,
    ),
    Product(
        "F09_ranking",
        "multi",
        "figure",
        "multi:ranking_figure",
        _args("confidence", ("policies", policy_names), "source=multi.ranking_source"),
        lambda c: {"table": _csv("T35_ranking")},
    ),
    Product(
        "T40_selection",
        "multi",
        "table",
        "selection:selection_table",
        _args(
            "multi.selection.sigma_from_mm",
            "multi.selection.k_values",
            "multi.selection.n_values",
            "multi.selection.tie_rule",
            "multi.selection.resample_reps",
            "study_seed",
            "multi.outcome",
        ),
        lambda c: {"sweep": SWEEP},
        local=False,
    ),
    Product(
        "F14_selection",
        "multi",
        "figure",
        "selection:selection_figure",
        inputs=lambda c: {"table": _csv("T40_selection")},
    ),
]

_SEQUENTIAL = [
    Product(
        "T31_sequential_designs",
        "sequential",
        "table",
        "sequential.designs:designs_table",
        inputs=lambda c: {"designs": _designs(c)},
    ),
    Product(
        "T32_sequential_oc",
        "sequential",
        "table",
        "sequential.designs:oc_table",
        _args("sequential.scenarios", "sequential.step"),
        lambda c: {"designs": _designs(c)},
        local=False,
        runtime=30,
    ),
    Product(
        "T33_sequential_pools",
        "sequential",
        "table",
        "sequential.designs:pools_table",
        _args(
            "policies",
            _TASK,
            "sequential.pools.seed",
            "sequential.pools.experiments",
            "study_seed",
        ),
        lambda c: {
            "designs": [DESIGN_FILE.format(n) for n in c["sequential"]["pools"]["designs"]],
            "pools": POOLS,
        },
        local=False,
        runtime=30,
    ),
    Product(
        "F05_sequential_false_win",
        "sequential",
        "figure",
        "sequential.figures:false_win_figure",
        _args(
            "sequential.alpha",
            "n_naive=sequential.figure.naive_n",
            "sequential.figure.p_points",
        ),
        lambda c: {"designs": _designs(c)},
    ),
    Product(
        "F06_sequential_power_ess",
        "sequential",
        "figure",
        "sequential.figures:power_ess_figure",
        _args("sequential.figure.p_a", "p_b_grid=sequential.figure.p_b", "sequential.alpha"),
        lambda c: {"designs": _designs(c)},
    ),
    Product(
        "T41_stopping_rules",
        "sequential",
        "table",
        "sequential.stopping_rules:stopping_rules_table",
        _args(
            "sequential.alpha",
            "sequential.n_max",
            "sequential.step",
            "sequential.stopping_rules.scenarios",
            "sequential.stopping_rules.power",
            "sequential.stopping_rules.peer_looks",
            "sequential.stopping_rules.null_rates",
        ),
        local=False,
        runtime=10,
    ),
    Product(
        "F13_stopping_rules",
        "sequential",
        "figure",
        "sequential.stopping_rules:stopping_rules_figure",
        _args("power=sequential.stopping_rules.power"),
        lambda c: {"table": _csv("T41_stopping_rules")},
    ),
    Product(
        "F07_bench_sheet",
        "sequential",
        "figure",
        "sequential.sheet:bench_sheet_of",
        inputs=lambda c: {"designs": [DESIGN_FILE.format(c["sequential"]["sheet_design"])]},
    ),
]

_DRIFT = [
    Product(
        "T36_drift_blocked_vs_interleaved",
        "drift",
        "table",
        "drift:drift_table",
        _args(
            ("policies", _drift_policies),
            "rates=drift.rates_mm_per_100",
            "drift.n_per_policy",
            "alpha",
            "drift.mc_sims",
            "study_seed",
        ),
        lambda c: {"curve": DRIFT_CURVE},
        local=False,
        runtime=30,
    ),
    Product(
        "F10_drift",
        "drift",
        "figure",
        "drift:drift_figure",
        _args("drift.figure_n", "alpha", ("policies", _drift_policies)),
        lambda c: {"table": _csv("T36_drift_blocked_vs_interleaved"), "curve": DRIFT_CURVE},
    ),
]


def _twin_inputs(c: Config) -> dict:
    gaps = c["simreal"]["gaps"]
    return {"pools": POOLS, "twins": [TWIN_POOL.format(g["name"]) for g in gaps]}


_SIMREAL = [
    Product(
        "T37_simreal_twins",
        "simreal",
        "table",
        "simreal:twin_coverage_table",
        _args(
            ("task", simreal_task),
            ("policies", simreal_policies),
            "simreal.n_real",
            "simreal.n_sim",
            "simreal.resamples",
            "confidence",
            "study_seed",
        ),
        _twin_inputs,
        local=False,
        runtime=30,
    ),
    Product(
        "F11_simreal_coverage",
        "simreal",
        "figure",
        "simreal:twin_coverage_figure",
        _args(
            ("task", simreal_task),
            ("policy", lambda c: simreal_policies(c)[0]),
            "gap=simreal.figure_gap",
            "simreal.n_real",
            "n_sim=simreal.figure_n_sim",
            "confidence",
        ),
        _twin_inputs,
    ),
]

_REPORT = [
    Product("F02_protocol", "report", "figure", "report:protocol_flowchart"),
]

#: Every product, in stage order (F04, the scene render, is a rule of its own in
#: ``workflow/rules/simulate.smk``: it renders MuJoCo frames, not a builder's result).
PRODUCTS: tuple[Product, ...] = tuple(
    _EXACT
    + _FISHER
    + _SIMULATE
    + _RESAMPLE
    + _DESIGN
    + _PEEKING
    + _MULTI
    + _SEQUENTIAL
    + _DRIFT
    + _SIMREAL
) + tuple(_REPORT)


def products_of(stage: str) -> list[Product]:
    """The products of one stage, in manifest order."""
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {STAGES}, got {stage!r}")
    return [p for p in PRODUCTS if p.stage == stage]


class _Recorder(dict):
    """A config mapping that records the dotted keys read through it."""

    def __init__(self, data: Mapping, path: str, seen: set[str]):
        super().__init__(data)
        self._path, self._seen = path, seen

    def _wrap(self, key, value):
        dotted = f"{self._path}.{key}" if self._path else str(key)
        self._seen.add(dotted)
        if isinstance(value, Mapping):
            return _Recorder(value, dotted, self._seen)
        return value

    def __getitem__(self, key):
        return self._wrap(key, super().__getitem__(key))

    def get(self, key, default=None):
        return self[key] if key in self else default

    def items(self):
        return [(k, self[k]) for k in self.keys()]

    def values(self):
        return [self[k] for k in self.keys()]


def config_keys(p: Product, config: Mapping) -> list[str]:
    """The config keys (dotted) that a product's builder arguments and inputs read."""
    seen: set[str] = set()
    rec = _Recorder(config, "", seen)
    p.kwargs(rec)
    p.inputs(rec)
    # A section read on the way to its keys is not itself a parameter; one passed whole
    # (a dict argument, or spread with **) is.
    return sorted(k for k in seen if not any(o.startswith(k + ".") for o in seen))
