# Stage 'simulate': MuJoCo pools of the scripted pick (issue 3). Library: evalsim.sim
# (scene, controller, rollout, pool, calibrate); builders: evalsim.products.simulate.
# Chunks of trials run as separate jobs, merged per (task, policy, seed), then into
# results/pools/pools.parquet; the sigma sweep runs one job per sigma value.

import re
import sys

from evalsim.sim.jobs import chunk_config, pools_config, sigma_label, sweep_config

SIM = config["simulation"]
# Params (issue 16): each job's params hold only what changes its output (evalsim.sim.jobs),
# so adding a policy or a sweep sigma reruns only the new chunks and what depends on them.
# The script runs, and stamps into the Parquet metadata, that same job config.
SIM_SWEEP_SIGMAS = [float(s) for s in SIM["sweep"]["sigma_mm"]]
# Sweep files are named by the sigma's value, so a new sigma adds a file and renames none.
SIM_SWEEP_LABELS = {sigma_label(s): s for s in SIM_SWEEP_SIGMAS}
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
        job=lambda w: chunk_config(config, w.task, w.policy),
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
        runtime=10,
    params:
        kind="pool",
        job=lambda w: chunk_config(config, w.task, w.policy),
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
        runtime=10,
    params:
        kind="pool",
        job=pools_config(config),
    script:
        "../scripts/simulate_merge.py"


rule simulate_sweep_chunk:
    output:
        "results/pools/sweep_chunks/sigma{sigma}.parquet",
    log:
        "logs/simulate/sweep_sigma{sigma}.log",
    benchmark:
        "results/benchmarks/simulate/sweep_sigma{sigma}.tsv"
    wildcard_constraints:
        sigma="|".join(re.escape(k) for k in SIM_SWEEP_LABELS),
    threads: 1
    resources:
        mem_mb=600,
        runtime=30,
    params:
        kind="sweep",
        job=sweep_config(config),
        sigma_mm=lambda w: SIM_SWEEP_LABELS[w.sigma],
        trials=SIM["sweep"]["trials"],
    script:
        "../scripts/simulate_chunk.py"


rule simulate_merge_sweep:
    input:
        [f"results/pools/sweep_chunks/sigma{k}.parquet" for k in SIM_SWEEP_LABELS],
    output:
        "results/pools/sigma_sweep.parquet",
    log:
        "logs/simulate/merge_sweep.log",
    threads: 1
    resources:
        mem_mb=600,
        runtime=10,
    params:
        kind="sweep",
        job=sweep_config(config, merged=True),
    script:
        "../scripts/simulate_merge.py"


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


# Small, fast jobs run inside the main Snakemake process, not as cluster jobs (issue 12);
# the rules above without a benchmark: are cheap (seconds, mostly imports).
localrules:
    simulate_merge_seed,
    simulate_merge_pools,
    simulate_merge_sweep,
