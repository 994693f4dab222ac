# Stage 'multi': many tasks, many policies (issue 14). T34 per-task A vs B with adjusted p,
# CMH and exact stratified verdicts, micro/macro; F08 its figure; T35 ranking with a compact
# letter display (configured policies, or the sigma sweep as policies); F09 its figure.
# Library: evalsim.stats.multi / multi_aggregate / multi_rank; builders: evalsim.products.multi.


MULTI = config["multi"]
MULTI_A = MULTI["policy_a"] or POLICIES[0]
MULTI_B = MULTI["policy_b"] or (POLICIES[1] if len(POLICIES) > 1 else None)
if MULTI_B is None or MULTI_A == MULTI_B:
    raise ValueError(
        "config key 'multi.policy_b': T34 needs two different policies; "
        f"configured policies: {', '.join(POLICIES)}"
    )

MULTI_TARGETS = [
    *table("T34_per_task").values(),
    *figure("F08_per_task_rates").values(),
    *table("T35_ranking").values(),
    *figure("F09_ranking").values(),
]


rule multi_per_task_table:
    input:
        pools="results/pools/pools.parquet",
    output:
        **report_table("T34_per_task", "multi"),
    log:
        "logs/multi/T34_per_task.log",
    benchmark:
        "results/benchmarks/multi/T34_per_task.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=30,
    params:
        builder="multi:per_task_table",
        kwargs={
            "policy_a": MULTI_A,
            "policy_b": MULTI_B,
            "paired": MULTI["paired"],
            "alpha": config["alpha"],
            "confidence": config["confidence"],
            "bootstrap_reps": MULTI["bootstrap_reps"],
            "study_seed": config["study_seed"],
            "outcome": MULTI["outcome"],
        },
    script:
        "../scripts/make_table.py"


rule multi_per_task_figure:
    input:
        table=table("T34_per_task")["csv"],
    output:
        **report_figure("F08_per_task_rates", "multi"),
    log:
        "logs/multi/F08_per_task_rates.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        builder="multi:per_task_figure",
        kwargs={"confidence": config["confidence"]},
    script:
        "../scripts/make_figure.py"


rule multi_ranking_table:
    input:
        pools="results/pools/pools.parquet",
        sweep="results/pools/sigma_sweep.parquet",
    output:
        **report_table("T35_ranking", "multi"),
    log:
        "logs/multi/T35_ranking.log",
    benchmark:
        "results/benchmarks/multi/T35_ranking.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=30,
    params:
        builder="multi:ranking_table",
        kwargs={
            "source": MULTI["ranking_source"],
            "alpha": config["alpha"],
            "confidence": config["confidence"],
            "bootstrap_reps": MULTI["bootstrap_reps"],
            "study_seed": config["study_seed"],
            "outcome": MULTI["outcome"],
        },
    script:
        "../scripts/make_table.py"


rule multi_ranking_figure:
    input:
        table=table("T35_ranking")["csv"],
    output:
        **report_figure("F09_ranking", "multi"),
    log:
        "logs/multi/F09_ranking.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        builder="multi:ranking_figure",
        kwargs={
            "confidence": config["confidence"],
            "policies": POLICIES,
            "source": MULTI["ranking_source"],
        },
    script:
        "../scripts/make_figure.py"


# Small, fast jobs run inside the main Snakemake process, not as cluster jobs (issue 12);
# the rules above without a benchmark: are cheap (seconds, mostly imports).
localrules:
    multi_per_task_figure,
    multi_ranking_figure,
