# Stage 'simulate': MuJoCo pools of the scripted pick (issue 3). Library: evalsim.sim
# (scene, controller, rollout, pool, calibrate); builders: evalsim.products.simulate.
# Chunks of trials run as separate jobs, merged per (task, policy, seed), then into
# results/pools/pools.parquet; the sigma sweep runs one job per sigma value.

import sys

from evalsim.sim.pool import sim_config_hash

SIM = config["simulation"]
# In every simulate rule's params: a change to study_seed, scene, tasks, policies or
# simulation reruns the simulations (the same hash is stamped into the Parquet metadata).
SIM_HASH = sim_config_hash(config)
SIM_SWEEP_SIGMAS = [float(s) for s in SIM["sweep"]["sigma_mm"]]
if SIM["sweep"]["task"] and SIM["sweep"]["task"] not in TASKS:
    raise ValueError(
        f"config key 'simulation.sweep.task': unknown task {SIM['sweep']['task']!r}; "
        f"configured tasks: {', '.join(TASKS)}"
    )


# (first, stop) trial indices of each chunk job of one (task, policy, seed).
SIM_CHUNK_RANGES = [
    (a, min(a + SIM["trials_per_chunk"], SIM["trials_per_seed"]))
    for a in range(0, SIM["trials_per_seed"], SIM["trials_per_chunk"])
]
SIM_GROUP_PATHS = [
    f"results/pools/{t}/{p}_seed{s}.parquet"
    for t in TASKS
    for p in POLICIES
    for s in range(SIM["n_seeds"])
]
# F04 (report.render_scene): auto renders when an OpenGL backend works, else one line says
# how to enable it; the backend is probed once per workflow parse, in a fresh process.
SIM_RENDER = config["report"]["render_scene"]
SIM_GL = None
if SIM_RENDER in (True, "auto"):
    from evalsim.sim.render import GL_PACKAGES, gl_backend

    SIM_GL = gl_backend()
    if SIM_GL is None and SIM_RENDER is True:
        raise ValueError(
            "config key 'report.render_scene' is true but no OpenGL backend renders "
            f"(tried MUJOCO_GL=egl, osmesa); install {GL_PACKAGES}, or set it to auto/false"
        )
    if SIM_GL is None:
        print(
            f"F04 (scene render) skipped: no OpenGL backend; install {GL_PACKAGES} "
            "and set report.render_scene: true to require it",
            file=sys.stderr,
        )
SIMULATE_TARGETS = [
    "results/pools/pools.parquet",
    "results/pools/sigma_sweep.parquet",
    *table("sim_pool_rates").values(),
    *table("T30_acceptance").values(),
    *figure("success_vs_sigma").values(),
    *(figure("F04_scene").values() if SIM_GL else []),
]


rule simulate_chunk:
    output:
        "results/pools/chunks/{task}/{policy}_seed{seed}_chunk{chunk}.parquet",
    log:
        "logs/simulate/chunk_{task}_{policy}_seed{seed}_chunk{chunk}.log",
    benchmark:
        "results/benchmarks/simulate/chunk_{task}_{policy}_seed{seed}_chunk{chunk}.tsv"
    threads: 1
    resources:
        mem_mb=600,
        runtime=30,
    params:
        kind="pool",
        sim_hash=SIM_HASH,
        task=lambda w: w.task,
        policy=lambda w: w.policy,
        seed=lambda w: int(w.seed),
        start=lambda w: SIM_CHUNK_RANGES[int(w.chunk)][0],
        stop=lambda w: SIM_CHUNK_RANGES[int(w.chunk)][1],
    script:
        "../scripts/simulate_chunk.py"


rule simulate_merge_seed:
    input:
        lambda w: [
            f"results/pools/chunks/{w.task}/{w.policy}_seed{w.seed}_chunk{i}.parquet"
            for i in range(len(SIM_CHUNK_RANGES))
        ],
    output:
        "results/pools/{task}/{policy}_seed{seed}.parquet",
    log:
        "logs/simulate/merge_{task}_{policy}_seed{seed}.log",
    threads: 1
    resources:
        mem_mb=600,
    params:
        kind="pool",
    script:
        "../scripts/simulate_merge.py"


rule simulate_merge_pools:
    input:
        SIM_GROUP_PATHS,
    output:
        "results/pools/pools.parquet",
    log:
        "logs/simulate/merge_pools.log",
    threads: 1
    resources:
        mem_mb=1000,
    params:
        kind="pool",
    script:
        "../scripts/simulate_merge.py"


rule simulate_sweep_chunk:
    output:
        "results/pools/sweep_chunks/sigma{isig}.parquet",
    log:
        "logs/simulate/sweep_sigma{isig}.log",
    benchmark:
        "results/benchmarks/simulate/sweep_sigma{isig}.tsv"
    wildcard_constraints:
        isig=r"\d+",
    threads: 1
    resources:
        mem_mb=600,
        runtime=30,
    params:
        kind="sweep",
        sim_hash=SIM_HASH,
        sigma_mm=lambda w: SIM_SWEEP_SIGMAS[int(w.isig)],
        trials=SIM["sweep"]["trials"],
    script:
        "../scripts/simulate_chunk.py"


rule simulate_merge_sweep:
    input:
        [
            f"results/pools/sweep_chunks/sigma{i}.parquet"
            for i in range(len(SIM_SWEEP_SIGMAS))
        ],
    output:
        "results/pools/sigma_sweep.parquet",
    log:
        "logs/simulate/merge_sweep.log",
    threads: 1
    resources:
        mem_mb=600,
    params:
        kind="sweep",
    script:
        "../scripts/simulate_merge.py"


rule simulate_pool_rates:
    input:
        pools="results/pools/pools.parquet",
    output:
        csv=report(
            table("sim_pool_rates")["csv"],
            caption="../report/sim_pool_rates.rst",
            category="simulate",
        ),
        md=table("sim_pool_rates")["md"],
    log:
        "logs/simulate/sim_pool_rates.log",
    threads: 1
    params:
        builder="simulate:pool_rates_table",
        kwargs={"confidence": config["confidence"]},
    script:
        "../scripts/make_table.py"


rule simulate_acceptance:
    input:
        pools="results/pools/pools.parquet",
    output:
        **report_table("T30_acceptance", "simulate"),
    log:
        "logs/simulate/T30_acceptance.log",
    threads: 1
    params:
        builder="simulate:acceptance_table",
        kwargs={"document": SIM["document"], "alpha": config["alpha"]},
    script:
        "../scripts/make_table.py"


rule simulate_render:
    input:
        pools="results/pools/pools.parquet",
    output:
        **report_figure("F04_scene", "simulate"),
    log:
        "logs/simulate/F04_scene.log",
    threads: 1
    resources:
        mem_mb=1500,
    params:
        backend=SIM_GL or "egl",
    script:
        "../scripts/simulate_render.py"


rule simulate_sigma_figure:
    input:
        sweep="results/pools/sigma_sweep.parquet",
        pools="results/pools/pools.parquet",
    output:
        png=report(
            figure("success_vs_sigma")["png"],
            caption="../report/sim_success_vs_sigma.rst",
            category="simulate",
        ),
        pdf=figure("success_vs_sigma")["pdf"],
    log:
        "logs/simulate/success_vs_sigma.log",
    threads: 1
    params:
        builder="simulate:success_vs_sigma_figure",
        kwargs={
            "confidence": config["confidence"],
            "policies": {p["name"]: p["sigma_mm"] for p in config["policies"]},
            "document": SIM["document"],
        },
    script:
        "../scripts/make_figure.py"


# Not part of `all`: rerun the calibration sweep that chose the scene defaults
# (config/README.md), e.g. `snakemake --cores 2 results/calibration/scene_sweep.csv`.
rule simulate_calibration:
    output:
        "results/calibration/scene_sweep.csv",
    log:
        "logs/simulate/calibration.log",
    benchmark:
        "results/benchmarks/simulate/calibration.tsv"
    threads: 2
    resources:
        mem_mb=1500,
        runtime=90,
    params:
        grid=None,
        single=False,
    script:
        "../scripts/simulate_calibrate.py"
