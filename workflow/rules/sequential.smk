# Stage 'sequential' (issue 13: sequential comparisons with certified error rates): each
# design is built once into its design file; the stage's products (manifest, products.smk)
# read them. Library: evalsim.stats.sequential.designs*.

SEQ = config["sequential"]
SEQ_DESIGNS = [d["name"] for d in SEQ["designs"]]
SEQ_SPEC = {d["name"]: d for d in SEQ["designs"]}


SEQ_DESIGN_FILE = "results/sequential/designs/{}.json"


SEQUENTIAL_TARGETS = [SEQ_DESIGN_FILE.format(n) for n in SEQ_DESIGNS]


rule sequential_design:
    output:
        SEQ_DESIGN_FILE.format("{design}"),
    log:
        "logs/sequential/design_{design}.log",
    benchmark:
        "results/benchmarks/sequential/design_{design}.tsv"
    wildcard_constraints:
        design="|".join(SEQ_DESIGNS),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=30,
    params:
        kwargs=lambda w: {
            "spec": SEQ_SPEC[w.design],
            "alpha": SEQ["alpha"],
            "n_max": SEQ["n_max"],
            "alternative": SEQ["alternative"],
            "looks": SEQ["looks"],
            "futility": SEQ["futility"],
            "optimise": SEQ["optimise"],
        },
    script:
        "../scripts/sequential_design.py"
