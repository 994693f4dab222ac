# Stage 'drift': servo heating in a two-policy session (issue 18). The success-vs-offset
# curve is simulated once here; T36 and F10 (manifest, products.smk) read it. Library:
# evalsim.stats.independence.checks, evalsim.sim.rollout (drift offset).

from evalsim.sim.jobs import offset_job_config

DRIFT = config["drift"]
# Empty drift.policies: the first two configured policies (one policy: it runs both arms).
DRIFT_POLICIES = DRIFT["policies"] or (POLICIES * 2)[:2]

DRIFT_TARGETS = ["results/drift/offset_curve.parquet"]


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
        # Only what changes the curve (evalsim.sim.jobs.offset_job_config).
        job=offset_job_config(config, DRIFT_POLICIES),
        policies=DRIFT_POLICIES,
        offsets_mm=DRIFT["offsets_mm"],
        trials=DRIFT["trials_per_offset"],
    script:
        "../scripts/drift_offsets.py"
