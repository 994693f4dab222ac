# Stage 'design': tables T13-T21, T23-T27, T29 and figures mde_vs_n, power_vs_n
# (documents 001, 002, 004). Builders: src/evalsim/products/design.py (sizing, power),
# design_intervals.py, design_pools.py (T18, T27) and design_figures.py; every rate, n grid,
# rho, power and minutes per trial comes from config["design"] (alpha, confidence: top level).

DESIGN_TABLES = [
    "T13_paired_vs_unpaired_sizing",
    "T14_repeat_evaluation_gap",
    "T15_wilson_vs_wald",
    "T16_width_vs_n_bench_hours",
    "T17_mde_and_n_per_arm",
    "T18_mcnemar_vs_unpaired",
    "T19_null_result_mde",
    "T20_fisher_pvalue_ladder",
    "T21_trials_to_separate_90_80",
    "T23_clopper_pearson_vs_wilson",
    "T24_difference_intervals",
    "T25_width_at_90",
    "T26_estimation_vs_detection",
    "T27_paired_contingency",
    "T29_cohens_h",
]
DESIGN_FIGURES = ["mde_vs_n", "power_vs_n"]


DESIGN_TARGETS = [p for t in DESIGN_TABLES for p in table(t).values()] + [
    p for f in DESIGN_FIGURES for p in figure(f).values()
]


rule design_T13:
    output:
        **report_table("T13_paired_vs_unpaired_sizing", "design"),
    log:
        "logs/design/T13_paired_vs_unpaired_sizing.log",
    benchmark:
        "results/benchmarks/design/T13_paired_vs_unpaired_sizing.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=20,
    params:
        builder="design:paired_vs_unpaired_sizing",
        kwargs=dict(
            **config["design"]["sizing"],
            alpha=config["alpha"],
            power=config["design"]["power"],
            minutes_per_trial=config["design"]["minutes_per_trial"],
            exact_fisher=config["design"]["exact_fisher"],
        ),
    script:
        "../scripts/make_table.py"


rule design_T14:
    output:
        **report_table("T14_repeat_evaluation_gap", "design"),
    log:
        "logs/design/T14_repeat_evaluation_gap.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        builder="design:repeat_evaluation_gap",
        kwargs=config["design"]["repeat_eval"],
    script:
        "../scripts/make_table.py"


rule design_T15:
    output:
        **report_table("T15_wilson_vs_wald", "design"),
    log:
        "logs/design/T15_wilson_vs_wald.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        builder="design_intervals:wilson_vs_wald",
        kwargs=dict(
            counts=config["design"]["wilson_wald_counts"],
            confidence=config["confidence"],
        ),
    script:
        "../scripts/make_table.py"


rule design_T16:
    output:
        **report_table("T16_width_vs_n_bench_hours", "design"),
    log:
        "logs/design/T16_width_vs_n_bench_hours.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        builder="design_intervals:width_vs_n",
        kwargs=dict(
            **config["design"]["width_vs_n"],
            minutes_per_trial=config["design"]["minutes_per_trial"],
            confidence=config["confidence"],
        ),
    script:
        "../scripts/make_table.py"


rule design_T17:
    output:
        **report_table("T17_mde_and_n_per_arm", "design"),
    log:
        "logs/design/T17_mde_and_n_per_arm.log",
    benchmark:
        "results/benchmarks/design/T17_mde_and_n_per_arm.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=20,
    params:
        builder="design:mde_table",
        kwargs=dict(
            n_grid=config["design"]["mde"]["n_grid"],
            pbar=config["design"]["mde"]["pbar"],
            planning_rates=config["design"]["mde"]["planning_rates"],
            alpha=config["alpha"],
            power=config["design"]["power"],
            minutes_per_trial=config["design"]["minutes_per_trial"],
            exact_fisher=config["design"]["exact_fisher"],
        ),
    script:
        "../scripts/make_table.py"


rule design_T18:
    input:
        pools="results/pools/pools.parquet",
    output:
        **report_table("T18_mcnemar_vs_unpaired", "design"),
    log:
        "logs/design/T18_mcnemar_vs_unpaired.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        builder="design_pools:mcnemar_vs_unpaired",
        kwargs=dict(
            pairs=config["design"]["paired_pools"]["pairs"],
            task=TASKS[0],
            alpha=config["alpha"],
            power=config["design"]["power"],
        ),
    script:
        "../scripts/make_table.py"


rule design_T19:
    output:
        **report_table("T19_null_result_mde", "design"),
    log:
        "logs/design/T19_null_result_mde.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        builder="design:null_result_mde",
        kwargs=dict(
            n_per_arm=config["design"]["mde"]["null_result_n"],
            pbar=config["design"]["mde"]["pbar"],
            planning_rates=config["design"]["mde"]["planning_rates"],
            alpha=config["alpha"],
            power=config["design"]["power"],
            exact_fisher=config["design"]["exact_fisher"],
        ),
    script:
        "../scripts/make_table.py"


rule design_T20:
    output:
        **report_table("T20_fisher_pvalue_ladder", "design"),
    log:
        "logs/design/T20_fisher_pvalue_ladder.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        builder="design:fisher_ladder",
        kwargs=dict(**config["design"]["ladder"], alpha=config["alpha"]),
    script:
        "../scripts/make_table.py"


rule design_T21:
    output:
        **report_table("T21_trials_to_separate_90_80", "design"),
    log:
        "logs/design/T21_trials_to_separate_90_80.log",
    benchmark:
        "results/benchmarks/design/T21_trials_to_separate_90_80.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=30,
    params:
        builder="design:trials_to_separate",
        kwargs=dict(
            rates=config["design"]["ladder"]["rates"],
            alpha=config["alpha"],
            power=config["design"]["power"],
            minutes_per_trial=config["design"]["minutes_per_trial"],
            exact_fisher=config["design"]["exact_fisher"],
        ),
    script:
        "../scripts/make_table.py"


rule design_T23:
    output:
        **report_table("T23_clopper_pearson_vs_wilson", "design"),
    log:
        "logs/design/T23_clopper_pearson_vs_wilson.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        builder="design_intervals:cp_vs_wilson",
        kwargs=dict(
            k=config["design"]["cp_wilson_count"][0],
            n=config["design"]["cp_wilson_count"][1],
            confidence=config["confidence"],
        ),
    script:
        "../scripts/make_table.py"


rule design_T24:
    output:
        **report_table("T24_difference_intervals", "design"),
    log:
        "logs/design/T24_difference_intervals.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        builder="design_intervals:difference_intervals",
        kwargs=dict(
            counts_a=config["design"]["diff_counts"][0],
            counts_b=config["design"]["diff_counts"][1],
            confidence=config["confidence"],
        ),
    script:
        "../scripts/make_table.py"


rule design_T25:
    output:
        **report_table("T25_width_at_90", "design"),
    log:
        "logs/design/T25_width_at_90.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        builder="design_intervals:width_at_rate",
        kwargs=dict(
            **config["design"]["width_at_rate"], confidence=config["confidence"]
        ),
    script:
        "../scripts/make_table.py"


rule design_T26:
    output:
        **report_table("T26_estimation_vs_detection", "design"),
    log:
        "logs/design/T26_estimation_vs_detection.log",
    benchmark:
        "results/benchmarks/design/T26_estimation_vs_detection.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=20,
    params:
        builder="design:estimation_vs_detection",
        kwargs=dict(
            **config["design"]["estimate_vs_detect"],
            alpha=config["alpha"],
            power=config["design"]["power"],
            confidence=config["confidence"],
            exact_fisher=config["design"]["exact_fisher"],
        ),
    script:
        "../scripts/make_table.py"


rule design_T27:
    input:
        pools="results/pools/pools.parquet",
    output:
        **report_table("T27_paired_contingency", "design"),
    log:
        "logs/design/T27_paired_contingency.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        builder="design_pools:paired_contingency_table",
        kwargs=dict(
            pairs=config["design"]["paired_pools"]["pairs"],
            task=TASKS[0],
            n_boot=config["design"]["paired_pools"]["n_boot"],
            confidence=config["confidence"],
            study_seed=config["study_seed"],
        ),
    script:
        "../scripts/make_table.py"


rule design_T29:
    output:
        **report_table("T29_cohens_h", "design"),
    log:
        "logs/design/T29_cohens_h.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        builder="design:cohens_h_table",
        kwargs=dict(
            pairs=config["design"]["cohens_h_pairs"],
            alpha=config["alpha"],
            power=config["design"]["power"],
        ),
    script:
        "../scripts/make_table.py"


rule design_mde_vs_n:
    output:
        png=report(
            figure("mde_vs_n")["png"],
            caption="../report/mde_vs_n.rst",
            category="design",
        ),
        pdf=figure("mde_vs_n")["pdf"],
    log:
        "logs/design/mde_vs_n.log",
    benchmark:
        "results/benchmarks/design/mde_vs_n.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=30,
    params:
        builder="design_figures:mde_vs_n_figure",
        kwargs=dict(
            n_max=config["design"]["figures"]["mde_n_max"],
            n_points=config["design"]["figures"]["mde_n_points"],
            pbar=config["design"]["mde"]["pbar"],
            alpha=config["alpha"],
            power=config["design"]["power"],
            mark_n=config["design"]["mde"]["n_grid"],
        ),
    script:
        "../scripts/make_figure.py"


rule design_power_vs_n:
    output:
        png=report(
            figure("power_vs_n")["png"],
            caption="../report/power_vs_n.rst",
            category="design",
        ),
        pdf=figure("power_vs_n")["pdf"],
    log:
        "logs/design/power_vs_n.log",
    benchmark:
        "results/benchmarks/design/power_vs_n.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=20,
    params:
        builder="design_figures:power_vs_n_figure",
        kwargs=dict(
            rates=config["design"]["figures"]["power_rates"],
            n_max=config["design"]["figures"]["power_n_max"],
            alpha=config["alpha"],
            power=config["design"]["power"],
        ),
    script:
        "../scripts/make_figure.py"


# Small, fast jobs run inside the main Snakemake process, not as cluster jobs (issue 12);
# the rules above without a benchmark: are cheap (seconds, mostly imports).
localrules:
    design_T14,
    design_T15,
    design_T16,
    design_T18,
    design_T19,
    design_T20,
    design_T23,
    design_T24,
    design_T25,
    design_T27,
    design_T29,
