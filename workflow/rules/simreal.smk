# Stage 'simreal' (issue 27): the "real" twins of the SO-101 pools, one pool per configured
# sim-to-real gap. Library: evalsim.sim.twin; the products T37 and F11 are manifest entries
# (products.smk). Each twin chunk's params hold only its own gap (evalsim.sim.jobs), so
# adding or changing a gap reruns only that gap's twins.

from evalsim.config import simreal_policies, simreal_task
from evalsim.sim.jobs import twin_chunk_config, twins_config

SIMREAL = config["simreal"]
SIMREAL_TASK = simreal_task(config)
SIMREAL_POLICIES = simreal_policies(config)
SIMREAL_GAPS = [g["name"] for g in SIMREAL["gaps"]]
SIMREAL_TARGETS = [f"results/pools/twins/{g}.parquet" for g in SIMREAL_GAPS]


rule simreal_twin_chunk:
    output:
        "results/pools/twins/chunks/{gap}/{task}/{policy}_seed{seed}_chunk{chunk}.parquet",
    log:
        "logs/simreal/twin_{gap}_{task}_{policy}_seed{seed}_chunk{chunk}.log",
    benchmark:
        "results/benchmarks/simreal/twin_{gap}_{task}_{policy}_seed{seed}_chunk{chunk}.tsv"
    wildcard_constraints:
        gap="|".join(SIMREAL_GAPS) or "no-gap",
    threads: 1
    resources:
        mem_mb=600,
        runtime=30,
    params:
        kind="twin",
        job=lambda w: twin_chunk_config(config, w.gap, w.task, w.policy),
        gap=lambda w: w.gap,
        task=lambda w: w.task,
        policy=lambda w: w.policy,
        seed=lambda w: int(w.seed),
        start=lambda w: SIM_CHUNK_RANGES[int(w.chunk)][0],
        stop=lambda w: SIM_CHUNK_RANGES[int(w.chunk)][1],
    script:
        "../scripts/simulate_chunk.py"


rule simreal_merge_twins:
    input:
        lambda w: [
            f"results/pools/twins/chunks/{w.gap}/{SIMREAL_TASK}/{p}_seed{s}_chunk{i}.parquet"
            for p in SIMREAL_POLICIES
            for s in SIMREAL["seeds"]
            for i in range(len(SIM_CHUNK_RANGES))
        ],
    output:
        "results/pools/twins/{gap}.parquet",
    log:
        "logs/simreal/merge_twins_{gap}.log",
    wildcard_constraints:
        gap="|".join(SIMREAL_GAPS) or "no-gap",
    threads: 1
    resources:
        mem_mb=600,
        runtime=10,
    params:
        kind="pool",
        job=lambda w: twins_config(config, w.gap),
    script:
        "../scripts/simulate_merge.py"


localrules:
    simreal_merge_twins,
