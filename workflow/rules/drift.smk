# Stage 'drift': servo heating in a two-policy session (issue 18). T36 (table) and F10
# (figure): false wins and bias of blocked vs interleaved sessions, power of the
# independence checks. Library: evalsim.stats.independence, evalsim.sim.rollout (drift
# offset); builders: evalsim.products.drift.

from evalsim.products.drift import offset_job_config

DRIFT = config["drift"]
# Empty drift.policies: the first two configured policies (one policy: it runs both arms).
DRIFT_POLICIES = DRIFT["policies"] or (POLICIES * 2)[:2]

DRIFT_TARGETS = [
    *table("T36_drift_blocked_vs_interleaved").values(),
    *figure("F10_drift").values(),
]


rule drift_offsets:
    output:
        "results/drift/offset_curve.parquet",
    log:
        "logs/drift/offset_curve.log",
    benchmark:
        "results/benchmarks/drift/offset_curve.tsv"
    threads: DRIFT["processes"]
    resources:
        mem_mb=1200,
        runtime=30,
    params:
        # Only what changes the curve (evalsim.products.drift.offset_job_config).
        job=offset_job_config(config, DRIFT_POLICIES),
        policies=DRIFT_POLICIES,
        offsets_mm=DRIFT["offsets_mm"],
        trials=DRIFT["trials_per_offset"],
    script:
        "../scripts/drift_offsets.py"


rule drift_table:
    input:
        curve="results/drift/offset_curve.parquet",
    output:
        **report_table("T36_drift_blocked_vs_interleaved", "drift"),
    log:
        "logs/drift/T36_drift_blocked_vs_interleaved.log",
    benchmark:
        "results/benchmarks/drift/T36_drift_blocked_vs_interleaved.tsv"
    params:
        builder="drift:drift_table",
        kwargs={
            "policies": DRIFT_POLICIES,
            "rates": DRIFT["rates_mm_per_100"],
            "n_per_policy": DRIFT["n_per_policy"],
            "alpha": config["alpha"],
            "mc_sims": DRIFT["mc_sims"],
            "study_seed": config["study_seed"],
        },
    script:
        "../scripts/make_table.py"


rule drift_figure:
    input:
        table=table("T36_drift_blocked_vs_interleaved")["csv"],
        curve="results/drift/offset_curve.parquet",
    output:
        **report_figure("F10_drift", "drift"),
    log:
        "logs/drift/F10_drift.log",
    params:
        builder="drift:drift_figure",
        kwargs={
            "figure_n": DRIFT["figure_n"],
            "alpha": config["alpha"],
            "policies": DRIFT_POLICIES,
        },
    script:
        "../scripts/make_figure.py"
