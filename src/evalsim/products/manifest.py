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
builders are named ``"module:function"`` (under ``evalsim.products``) rather than imported
here; importing every builder module would add about 2 s to each ``snakemake`` call.
``tests/test_manifest.py`` resolves each name and binds its arguments, so a renamed builder
or parameter fails a test, and a search for the function's name finds its entry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

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
    "report",
)

POOLS = "results/pools/pools.parquet"
SWEEP = "results/pools/sigma_sweep.parquet"
DRIFT_CURVE = "results/drift/offset_curve.parquet"
DESIGN_FILE = "results/sequential/designs/{}.json"

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
        ``"module:function"`` under :mod:`evalsim.products`.
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


def _policy_names(c: Config) -> list[str]:
    return [p["name"] for p in c["policies"]]


def _coverage_policy(c: Config) -> str:
    return c["experiment"].get("coverage_policy") or _policy_names(c)[0]


def _multi_pair(c: Config) -> tuple[str, str | None]:
    names = _policy_names(c)
    a = c["multi"]["policy_a"] or names[0]
    b = c["multi"]["policy_b"] or (names[1] if len(names) > 1 else None)
    return a, b


def _drift_policies(c: Config) -> list[str]:
    # Empty drift.policies: the first two configured policies (one policy: it runs both arms).
    return c["drift"]["policies"] or (_policy_names(c) * 2)[:2]


def _t38_n(c: Config) -> list[int]:
    t = c["fisher"]["t38"]
    return list(range(t["n_min"], t["n_max"] + 1, t["n_step"]))


def _designs(c: Config) -> list[str]:
    return [DESIGN_FILE.format(d["name"]) for d in c["sequential"]["designs"]]


def _exact(c):
    return c["exact"]


def _design(c):
    return c["design"]


def _resample_policies(c):
    return [dict(p) for p in c["policies"]]


_EXACT = [
    Product(
        "T01_wilson_vs_library",
        "exact",
        "table",
        "exact:wilson_vs_library",
        lambda c: {
            "cases": _exact(c)["t01"]["cases"],
            "z": _exact(c)["z"],
            "library_z": _exact(c)["t01"]["library_z"],
            "confidence": c["confidence"],
            "max_diff_n": _exact(c)["t01"]["max_diff_n"],
            "decimals": _exact(c)["decimals"],
            "document_max_diff": _exact(c)["t01"]["document_max_diff"],
        },
    ),
    Product(
        "T02_exact_coverage",
        "exact",
        "table",
        "exact:exact_coverage_table",
        lambda c: {
            "pool_k": _exact(c)["t02"]["pool_k"],
            "pool_n": _exact(c)["t02"]["pool_n"],
            "n_values": _exact(c)["t02"]["n_values"],
            "z": _exact(c)["z"],
            "decimals": _exact(c)["decimals"],
            "document": _exact(c)["t02"]["document"],
        },
    ),
    Product(
        "T03_prob_at_least_9_of_10",
        "exact",
        "table",
        "exact:prob_at_least_table",
        lambda c: {
            "k": _exact(c)["t03"]["k"],
            "n": _exact(c)["t03"]["n"],
            "policies": _exact(c)["t03"]["policies"],
            "decimals": _exact(c)["decimals"],
        },
    ),
    Product(
        "T04_trials_for_half_width",
        "exact",
        "table",
        "exact:trials_for_half_width_table",
        lambda c: {
            "rates": _exact(c)["t04"]["rates"],
            "half_widths": _exact(c)["t04"]["half_widths"],
            "z": _exact(c)["z"],
            "rounding": _exact(c)["t04"]["rounding"],
            "document": _exact(c)["t04"]["document"],
        },
    ),
    Product(
        "coverage_vs_p",
        "exact",
        "figure",
        "exact:coverage_vs_p_figure",
        lambda c: {
            "n_values": _exact(c)["coverage_figure"]["n_values"],
            "confidence": c["confidence"],
            "p_points": _exact(c)["coverage_figure"]["p_points"],
            "p_min": _exact(c)["coverage_figure"]["p_min"],
            "p_max": _exact(c)["coverage_figure"]["p_max"],
            "y_min": _exact(c)["coverage_figure"]["y_min"],
        },
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
        lambda c: {
            "grid_n": c["fisher"]["t05"]["grid_n"],
            "cases": c["fisher"]["t05"]["cases"],
            "decimals": c["fisher"]["decimals"],
            "document_max_diff": c["fisher"]["t05"]["document_max_diff"],
            "tie_check_n": c["fisher"]["t05"]["tie_check_n"],
        },
        local=False,
        runtime=20,
    ),
    Product(
        "T06_fisher_power",
        "fisher",
        "table",
        "fisher:fisher_power_table",
        lambda c: {
            "p_a": c["fisher"]["t06"]["p_a"],
            "p_b": c["fisher"]["t06"]["p_b"],
            "n_values": c["fisher"]["t06"]["n_values"],
            "alpha": c["alpha"],
            "pool_a": c["fisher"]["t06"]["pool_a"],
            "pool_b": c["fisher"]["t06"]["pool_b"],
            "document_power": c["fisher"]["t06"]["document_power"],
            "document_not_better": c["fisher"]["t06"]["document_not_better"],
            "decimals": c["fisher"]["decimals"],
            "target_power": c["fisher"]["t06"]["target_power"],
            "power_window": c["fisher"]["power_window"],
        },
    ),
    Product(
        "T38_unconditional_power",
        "fisher",
        "table",
        "unconditional:unconditional_power_table",
        lambda c: {
            "rate_pairs": c["fisher"]["t38"]["rate_pairs"],
            "n_values": _t38_n(c),
            "alpha": c["alpha"],
            "target_power": c["fisher"]["t38"]["target_power"],
            "power_window": c["fisher"]["power_window"],
        },
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
        lambda c: {"confidence": c["confidence"]},
        _pools,
    ),
    Product(
        "T30_acceptance",
        "simulate",
        "table",
        "simulate:acceptance_table",
        lambda c: {"document": c["simulation"]["document"], "alpha": c["alpha"]},
        _pools,
        local=False,
    ),
    Product(
        "success_vs_sigma",
        "simulate",
        "figure",
        "simulate:success_vs_sigma_figure",
        lambda c: {
            "confidence": c["confidence"],
            "policies": {p["name"]: p["sigma_mm"] for p in c["policies"]},
            "document": c["simulation"]["document"],
        },
        lambda c: {"sweep": SWEEP, "pools": POOLS},
        caption="sim_success_vs_sigma",
    ),
]

_RESAMPLE = [
    Product(
        "T07_pools",
        "resample",
        "table",
        "experiment:table_a",
        lambda c: {
            "policies": _resample_policies(c),
            "task": _first_task(c),
            "confidence": c["confidence"],
        },
        _pools,
    ),
    Product(
        "T08_trials_width_coverage",
        "resample",
        "table",
        "experiment:table_b",
        lambda c: {
            "policies": _resample_policies(c),
            "task": _first_task(c),
            "study_seed": c["study_seed"],
            "n_grid": c["experiment"]["n_grid"],
            "evaluations": c["experiment"]["evaluations"],
            "confidence": c["confidence"],
        },
        _pools,
        local=False,
        runtime=20,
    ),
    Product(
        "F01_width_coverage",
        "resample",
        "figure",
        "experiment_figures:figure_b",
        lambda c: {"policy": _coverage_policy(c), "confidence": c["confidence"]},
        lambda c: {"table_b": _csv("T08_trials_width_coverage")},
    ),
    Product(
        "T09_nine_of_ten",
        "resample",
        "table",
        "experiment:table_c",
        lambda c: {
            "policies": _resample_policies(c),
            "task": _first_task(c),
            "study_seed": c["study_seed"],
            "k": c["experiment"]["high_score_k"],
            "n": c["experiment"]["high_score_n"],
            "evaluations": c["experiment"]["evaluations"],
        },
        _pools,
    ),
    Product(
        "T10_compare",
        "resample",
        "table",
        "experiment_compare:table_e",
        lambda c: {
            "comparisons": [list(x) for x in c["experiment"]["comparisons"]],
            "task": _first_task(c),
            "study_seed": c["study_seed"],
            "n_grid": c["experiment"]["comparison_n_grid"],
            "pairs": c["experiment"]["pairs"],
            "alpha": c["alpha"],
            "confidence": c["confidence"],
        },
        _pools,
        local=False,
        runtime=20,
    ),
    Product(
        "T11_break_it",
        "resample",
        "table",
        "experiment_compare:table_break_it",
        lambda c: {
            "policy": _coverage_policy(c),
            "task": _first_task(c),
            "study_seed": c["study_seed"],
            "coverage_n": c["experiment"]["break_it_n"],
            "perfect_n": c["experiment"]["high_score_n"],
            "evaluations": c["experiment"]["evaluations"],
            "confidence": c["confidence"],
        },
        _pools,
    ),
    Product(
        "T12_seeds_exercise",
        "resample",
        "table",
        "experiment_compare:table_seeds",
        lambda c: {
            "policies": _resample_policies(c),
            "task": _first_task(c),
            "seeds": c["experiment"]["exercise_seeds"],
            "trials": c["experiment"]["exercise_trials"],
            "confidence": c["confidence"],
        },
        _pools,
    ),
]

_DESIGN = [
    Product(
        "T13_paired_vs_unpaired_sizing",
        "design",
        "table",
        "design:paired_vs_unpaired_sizing",
        lambda c: dict(
            **_design(c)["sizing"],
            alpha=c["alpha"],
            power=_design(c)["power"],
            minutes_per_trial=_design(c)["minutes_per_trial"],
            exact_fisher=_design(c)["exact_fisher"],
        ),
        local=False,
        runtime=20,
    ),
    Product(
        "T14_repeat_evaluation_gap",
        "design",
        "table",
        "design:repeat_evaluation_gap",
        lambda c: _design(c)["repeat_eval"],
    ),
    Product(
        "T15_wilson_vs_wald",
        "design",
        "table",
        "design_intervals:wilson_vs_wald",
        lambda c: dict(counts=_design(c)["wilson_wald_counts"], confidence=c["confidence"]),
    ),
    Product(
        "T16_width_vs_n_bench_hours",
        "design",
        "table",
        "design_intervals:width_vs_n",
        lambda c: dict(
            **_design(c)["width_vs_n"],
            minutes_per_trial=_design(c)["minutes_per_trial"],
            confidence=c["confidence"],
        ),
    ),
    Product(
        "T17_mde_and_n_per_arm",
        "design",
        "table",
        "design:mde_table",
        lambda c: dict(
            n_grid=_design(c)["mde"]["n_grid"],
            pbar=_design(c)["mde"]["pbar"],
            planning_rates=_design(c)["mde"]["planning_rates"],
            alpha=c["alpha"],
            power=_design(c)["power"],
            minutes_per_trial=_design(c)["minutes_per_trial"],
            exact_fisher=_design(c)["exact_fisher"],
        ),
        local=False,
        runtime=20,
    ),
    Product(
        "T18_mcnemar_vs_unpaired",
        "design",
        "table",
        "design_pools:mcnemar_vs_unpaired",
        lambda c: dict(
            pairs=_design(c)["paired_pools"]["pairs"],
            task=_first_task(c),
            alpha=c["alpha"],
            power=_design(c)["power"],
        ),
        _pools,
    ),
    Product(
        "T19_null_result_mde",
        "design",
        "table",
        "design:null_result_mde",
        lambda c: dict(
            n_per_arm=_design(c)["mde"]["null_result_n"],
            pbar=_design(c)["mde"]["pbar"],
            planning_rates=_design(c)["mde"]["planning_rates"],
            alpha=c["alpha"],
            power=_design(c)["power"],
            exact_fisher=_design(c)["exact_fisher"],
        ),
    ),
    Product(
        "T20_fisher_pvalue_ladder",
        "design",
        "table",
        "design:fisher_ladder",
        lambda c: dict(**_design(c)["ladder"], alpha=c["alpha"]),
    ),
    Product(
        "T21_trials_to_separate_90_80",
        "design",
        "table",
        "design:trials_to_separate",
        lambda c: dict(
            rates=_design(c)["ladder"]["rates"],
            alpha=c["alpha"],
            power=_design(c)["power"],
            minutes_per_trial=_design(c)["minutes_per_trial"],
            exact_fisher=_design(c)["exact_fisher"],
        ),
        local=False,
        runtime=30,
    ),
    Product(
        "T23_clopper_pearson_vs_wilson",
        "design",
        "table",
        "design_intervals:cp_vs_wilson",
        lambda c: dict(
            k=_design(c)["cp_wilson_count"][0],
            n=_design(c)["cp_wilson_count"][1],
            confidence=c["confidence"],
        ),
    ),
    Product(
        "T24_difference_intervals",
        "design",
        "table",
        "design_intervals:difference_intervals",
        lambda c: dict(
            counts_a=_design(c)["diff_counts"][0],
            counts_b=_design(c)["diff_counts"][1],
            confidence=c["confidence"],
        ),
    ),
    Product(
        "T25_width_at_90",
        "design",
        "table",
        "design_intervals:width_at_rate",
        lambda c: dict(**_design(c)["width_at_rate"], confidence=c["confidence"]),
    ),
    Product(
        "T26_estimation_vs_detection",
        "design",
        "table",
        "design:estimation_vs_detection",
        lambda c: dict(
            **_design(c)["estimate_vs_detect"],
            alpha=c["alpha"],
            power=_design(c)["power"],
            confidence=c["confidence"],
            exact_fisher=_design(c)["exact_fisher"],
        ),
        local=False,
        runtime=20,
    ),
    Product(
        "T27_paired_contingency",
        "design",
        "table",
        "design_pools:paired_contingency_table",
        lambda c: dict(
            pairs=_design(c)["paired_pools"]["pairs"],
            task=_first_task(c),
            n_boot=_design(c)["paired_pools"]["n_boot"],
            confidence=c["confidence"],
            study_seed=c["study_seed"],
        ),
        _pools,
    ),
    Product(
        "T29_cohens_h",
        "design",
        "table",
        "design:cohens_h_table",
        lambda c: dict(
            pairs=_design(c)["cohens_h_pairs"], alpha=c["alpha"], power=_design(c)["power"]
        ),
    ),
    Product(
        "mde_vs_n",
        "design",
        "figure",
        "design_figures:mde_vs_n_figure",
        lambda c: dict(
            n_max=_design(c)["figures"]["mde_n_max"],
            n_points=_design(c)["figures"]["mde_n_points"],
            pbar=_design(c)["mde"]["pbar"],
            alpha=c["alpha"],
            power=_design(c)["power"],
            mark_n=_design(c)["mde"]["n_grid"],
        ),
        local=False,
        runtime=30,
    ),
    Product(
        "power_vs_n",
        "design",
        "figure",
        "design_figures:power_vs_n_figure",
        lambda c: dict(
            rates=_design(c)["figures"]["power_rates"],
            n_max=_design(c)["figures"]["power_n_max"],
            alpha=c["alpha"],
            power=_design(c)["power"],
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
        lambda c: {
            "p": c["peeking"]["p"],
            "n_per_arm": c["peeking"]["n_per_arm"],
            "alpha": c["alpha"],
            "looks_grid": c["peeking"]["looks_grid"],
            "mc_experiments": c["peeking"]["mc_experiments"],
            "study_seed": c["study_seed"],
            "document": c["peeking"]["document"],
        },
        key="F03_peeking_table",
        local=False,
        runtime=20,
    ),
    Product(
        "F03_peeking",
        "peeking",
        "figure",
        "peeking:peeking_figure",
        lambda c: {"alpha": c["alpha"], "p": c["peeking"]["p"]},
        lambda c: {"table": _csv("F03_peeking")},
    ),
    Product(
        "T22_two_spreads",
        "peeking",
        "table",
        "hierarchy:two_spreads_table",
        lambda c: {"confidence": c["confidence"], "outcome": c["hierarchy"]["outcome"]},
        _pools,
    ),
    Product(
        "T28_hierarchical_bootstrap",
        "peeking",
        "table",
        "hierarchy:hierarchical_bootstrap_table",
        lambda c: {
            "cluster_by": c["hierarchy"]["cluster_by"],
            "bootstrap_reps": c["hierarchy"]["bootstrap_reps"],
            "confidence": c["confidence"],
            "study_seed": c["study_seed"],
            "outcome": c["hierarchy"]["outcome"],
        },
        _pools,
        local=False,
        runtime=20,
    ),
]

_MULTI = [
    Product(
        "T34_per_task",
        "multi",
        "table",
        "multi:per_task_table",
        lambda c: {
            "policy_a": _multi_pair(c)[0],
            "policy_b": _multi_pair(c)[1],
            "paired": c["multi"]["paired"],
            "alpha": c["alpha"],
            "confidence": c["confidence"],
            "bootstrap_reps": c["multi"]["bootstrap_reps"],
            "study_seed": c["study_seed"],
            "outcome": c["multi"]["outcome"],
        },
        _pools,
        local=False,
        runtime=30,
    ),
    Product(
        "F08_per_task_rates",
        "multi",
        "figure",
        "multi:per_task_figure",
        lambda c: {"confidence": c["confidence"]},
        lambda c: {"table": _csv("T34_per_task")},
    ),
    Product(
        "T35_ranking",
        "multi",
        "table",
        "multi:ranking_table",
        lambda c: {
            "source": c["multi"]["ranking_source"],
            "alpha": c["alpha"],
            "confidence": c["confidence"],
            "bootstrap_reps": c["multi"]["bootstrap_reps"],
            "study_seed": c["study_seed"],
            "outcome": c["multi"]["outcome"],
        },
        lambda c: {"pools": POOLS, "sweep": SWEEP},
        local=False,
        runtime=30,
    ),
    Product(
        "F09_ranking",
        "multi",
        "figure",
        "multi:ranking_figure",
        lambda c: {
            "confidence": c["confidence"],
            "policies": _policy_names(c),
            "source": c["multi"]["ranking_source"],
        },
        lambda c: {"table": _csv("T35_ranking")},
    ),
]

_SEQUENTIAL = [
    Product(
        "T31_sequential_designs",
        "sequential",
        "table",
        "sequential:designs_table",
        inputs=lambda c: {"designs": _designs(c)},
    ),
    Product(
        "T32_sequential_oc",
        "sequential",
        "table",
        "sequential:oc_table",
        lambda c: {"scenarios": c["sequential"]["scenarios"], "step": c["sequential"]["step"]},
        lambda c: {"designs": _designs(c)},
        local=False,
        runtime=30,
    ),
    Product(
        "T33_sequential_pools",
        "sequential",
        "table",
        "sequential:pools_table",
        lambda c: {
            "policies": c["policies"],
            "task": _first_task(c),
            "seed": c["sequential"]["pools"]["seed"],
            "experiments": c["sequential"]["pools"]["experiments"],
            "study_seed": c["study_seed"],
        },
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
        "sequential:false_win_figure",
        lambda c: {
            "alpha": c["sequential"]["alpha"],
            "n_naive": c["sequential"]["figure"]["naive_n"],
            "p_points": c["sequential"]["figure"]["p_points"],
        },
        lambda c: {"designs": _designs(c)},
    ),
    Product(
        "F06_sequential_power_ess",
        "sequential",
        "figure",
        "sequential:power_ess_figure",
        lambda c: {
            "p_a": c["sequential"]["figure"]["p_a"],
            "p_b_grid": c["sequential"]["figure"]["p_b"],
            "alpha": c["sequential"]["alpha"],
        },
        lambda c: {"designs": _designs(c)},
    ),
    Product(
        "F07_bench_sheet",
        "sequential",
        "figure",
        "sequential_sheet:bench_sheet_of",
        inputs=lambda c: {"designs": [DESIGN_FILE.format(c["sequential"]["sheet_design"])]},
    ),
]

_DRIFT = [
    Product(
        "T36_drift_blocked_vs_interleaved",
        "drift",
        "table",
        "drift:drift_table",
        lambda c: {
            "policies": _drift_policies(c),
            "rates": c["drift"]["rates_mm_per_100"],
            "n_per_policy": c["drift"]["n_per_policy"],
            "alpha": c["alpha"],
            "mc_sims": c["drift"]["mc_sims"],
            "study_seed": c["study_seed"],
        },
        lambda c: {"curve": DRIFT_CURVE},
        local=False,
        runtime=30,
    ),
    Product(
        "F10_drift",
        "drift",
        "figure",
        "drift:drift_figure",
        lambda c: {
            "figure_n": c["drift"]["figure_n"],
            "alpha": c["alpha"],
            "policies": _drift_policies(c),
        },
        lambda c: {"table": _csv("T36_drift_blocked_vs_interleaved"), "curve": DRIFT_CURVE},
    ),
]

_REPORT = [
    Product("F02_protocol", "report", "figure", "report:protocol_flowchart"),
]

#: Every product, in stage order (F04, the scene render, is a rule of its own in
#: ``workflow/rules/simulate.smk``: it renders MuJoCo frames, not a builder's result).
PRODUCTS: tuple[Product, ...] = tuple(
    _EXACT + _FISHER + _SIMULATE + _RESAMPLE + _DESIGN + _PEEKING + _MULTI + _SEQUENTIAL + _DRIFT
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
