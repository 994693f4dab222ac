# Stage 'resample': lesson 25's experiment from the pools (T07-T12, F01).
# Builders live in evalsim.products.experiment (T07-T09), experiment_compare (T10-T12) and
# experiment_figures (F01); the generic scripts call them.

RESAMPLE_CFG = config["experiment"]
RESAMPLE_POOLS = "results/pools/pools.parquet"
RESAMPLE_TASK = TASKS[0]
RESAMPLE_COVERAGE_POLICY = RESAMPLE_CFG.get("coverage_policy") or POLICIES[0]
if RESAMPLE_COVERAGE_POLICY not in POLICIES:
    raise ValueError(
        f"config key 'experiment.coverage_policy': unknown policy "
        f"{RESAMPLE_COVERAGE_POLICY!r}; configured policies: {', '.join(POLICIES)}"
    )
if RESAMPLE_CFG["high_score_k"] > RESAMPLE_CFG["high_score_n"]:
    raise ValueError(
        f"config key 'experiment.high_score_k': {RESAMPLE_CFG['high_score_k']!r} "
        f"exceeds experiment.high_score_n = {RESAMPLE_CFG['high_score_n']!r}"
    )
RESAMPLE_POLICIES = [dict(p) for p in config["policies"]]
RESAMPLE_IDS = {
    "A": "T07_pools",
    "B": "T08_trials_width_coverage",
    "F": "F01_width_coverage",
    "C": "T09_nine_of_ten",
    "E": "T10_compare",
    "break": "T11_break_it",
    "seeds": "T12_seeds_exercise",
}


RESAMPLE_TARGETS = [
    path
    for key, pid in RESAMPLE_IDS.items()
    for path in (figure(pid) if key == "F" else table(pid)).values()
]


rule resample_table_a:
    input:
        pools=RESAMPLE_POOLS,
    output:
        **report_table(RESAMPLE_IDS["A"], "resample"),
    log:
        f"logs/resample/{RESAMPLE_IDS['A']}.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        builder="experiment:table_a",
        kwargs={
            "policies": RESAMPLE_POLICIES,
            "task": RESAMPLE_TASK,
            "confidence": config["confidence"],
        },
    script:
        "../scripts/make_table.py"


rule resample_table_b:
    input:
        pools=RESAMPLE_POOLS,
    output:
        **report_table(RESAMPLE_IDS["B"], "resample"),
    log:
        f"logs/resample/{RESAMPLE_IDS['B']}.log",
    benchmark:
        f"results/benchmarks/resample/{RESAMPLE_IDS['B']}.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=20,
    params:
        builder="experiment:table_b",
        kwargs={
            "policies": RESAMPLE_POLICIES,
            "task": RESAMPLE_TASK,
            "study_seed": config["study_seed"],
            "n_grid": RESAMPLE_CFG["n_grid"],
            "evaluations": RESAMPLE_CFG["evaluations"],
            "confidence": config["confidence"],
        },
    script:
        "../scripts/make_table.py"


rule resample_figure_b:
    input:
        table_b=table(RESAMPLE_IDS["B"])["csv"],
    output:
        **report_figure(RESAMPLE_IDS["F"], "resample"),
    log:
        f"logs/resample/{RESAMPLE_IDS['F']}.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        builder="experiment_figures:figure_b",
        kwargs={
            "policy": RESAMPLE_COVERAGE_POLICY,
            "confidence": config["confidence"],
        },
    script:
        "../scripts/make_figure.py"


rule resample_table_c:
    input:
        pools=RESAMPLE_POOLS,
    output:
        **report_table(RESAMPLE_IDS["C"], "resample"),
    log:
        f"logs/resample/{RESAMPLE_IDS['C']}.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        builder="experiment:table_c",
        kwargs={
            "policies": RESAMPLE_POLICIES,
            "task": RESAMPLE_TASK,
            "study_seed": config["study_seed"],
            "k": RESAMPLE_CFG["high_score_k"],
            "n": RESAMPLE_CFG["high_score_n"],
            "evaluations": RESAMPLE_CFG["evaluations"],
        },
    script:
        "../scripts/make_table.py"


rule resample_table_e:
    input:
        pools=RESAMPLE_POOLS,
    output:
        **report_table(RESAMPLE_IDS["E"], "resample"),
    log:
        f"logs/resample/{RESAMPLE_IDS['E']}.log",
    benchmark:
        f"results/benchmarks/resample/{RESAMPLE_IDS['E']}.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=20,
    params:
        builder="experiment_compare:table_e",
        kwargs={
            "comparisons": [list(c) for c in RESAMPLE_CFG["comparisons"]],
            "task": RESAMPLE_TASK,
            "study_seed": config["study_seed"],
            "n_grid": RESAMPLE_CFG["comparison_n_grid"],
            "pairs": RESAMPLE_CFG["pairs"],
            "alpha": config["alpha"],
            "confidence": config["confidence"],
        },
    script:
        "../scripts/make_table.py"


rule resample_break_it:
    input:
        pools=RESAMPLE_POOLS,
    output:
        **report_table(RESAMPLE_IDS["break"], "resample"),
    log:
        f"logs/resample/{RESAMPLE_IDS['break']}.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        builder="experiment_compare:table_break_it",
        kwargs={
            "policy": RESAMPLE_COVERAGE_POLICY,
            "task": RESAMPLE_TASK,
            "study_seed": config["study_seed"],
            "coverage_n": RESAMPLE_CFG["break_it_n"],
            "perfect_n": RESAMPLE_CFG["high_score_n"],
            "evaluations": RESAMPLE_CFG["evaluations"],
            "confidence": config["confidence"],
        },
    script:
        "../scripts/make_table.py"


rule resample_seeds_exercise:
    input:
        pools=RESAMPLE_POOLS,
    output:
        **report_table(RESAMPLE_IDS["seeds"], "resample"),
    log:
        f"logs/resample/{RESAMPLE_IDS['seeds']}.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        builder="experiment_compare:table_seeds",
        kwargs={
            "policies": RESAMPLE_POLICIES,
            "task": RESAMPLE_TASK,
            "seeds": RESAMPLE_CFG["exercise_seeds"],
            "trials": RESAMPLE_CFG["exercise_trials"],
            "confidence": config["confidence"],
        },
    script:
        "../scripts/make_table.py"


# Small, fast jobs run inside the main Snakemake process, not as cluster jobs (issue 12);
# the rules above without a benchmark: are cheap (seconds, mostly imports).
localrules:
    resample_table_a,
    resample_figure_b,
    resample_table_c,
    resample_break_it,
    resample_seeds_exercise,
