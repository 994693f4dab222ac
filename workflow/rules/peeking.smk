# Stage 'peeking': F03 (peeking, document 002), T22 (two spreads) and T28 (hierarchical
# bootstrap) from the pools. Library: evalsim.stats.peeking / hierarchy; builders:
# evalsim.products.peeking / hierarchy.


PEEKING_TARGETS = [
    *table("F03_peeking").values(),
    *figure("F03_peeking").values(),
    *table("T22_two_spreads").values(),
    *table("T28_hierarchical_bootstrap").values(),
]


rule peeking_table:
    output:
        **report_table("F03_peeking", "peeking", caption="F03_peeking_table"),
    log:
        "logs/peeking/F03_peeking_table.log",
    benchmark:
        "results/benchmarks/peeking/F03_peeking_table.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=20,
    params:
        builder="peeking:peeking_table",
        kwargs={
            "p": config["peeking"]["p"],
            "n_per_arm": config["peeking"]["n_per_arm"],
            "alpha": config["alpha"],
            "looks_grid": config["peeking"]["looks_grid"],
            "mc_experiments": config["peeking"]["mc_experiments"],
            "study_seed": config["study_seed"],
            "document": config["peeking"]["document"],
        },
    script:
        "../scripts/make_table.py"


rule peeking_figure:
    input:
        table=table("F03_peeking")["csv"],
    output:
        png=report(
            figure("F03_peeking")["png"],
            caption="../report/F03_peeking.rst",
            category="peeking",
        ),
        pdf=figure("F03_peeking")["pdf"],
    log:
        "logs/peeking/F03_peeking_figure.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        builder="peeking:peeking_figure",
        kwargs={"alpha": config["alpha"], "p": config["peeking"]["p"]},
    script:
        "../scripts/make_figure.py"


rule hierarchy_two_spreads:
    input:
        pools="results/pools/pools.parquet",
    output:
        **report_table("T22_two_spreads", "peeking"),
    log:
        "logs/peeking/T22_two_spreads.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        builder="hierarchy:two_spreads_table",
        kwargs={
            "confidence": config["confidence"],
            "outcome": config["hierarchy"]["outcome"],
        },
    script:
        "../scripts/make_table.py"


rule hierarchy_bootstrap:
    input:
        pools="results/pools/pools.parquet",
    output:
        **report_table("T28_hierarchical_bootstrap", "peeking"),
    log:
        "logs/peeking/T28_hierarchical_bootstrap.log",
    benchmark:
        "results/benchmarks/peeking/T28_hierarchical_bootstrap.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=20,
    params:
        builder="hierarchy:hierarchical_bootstrap_table",
        kwargs={
            "cluster_by": config["hierarchy"]["cluster_by"],
            "bootstrap_reps": config["hierarchy"]["bootstrap_reps"],
            "confidence": config["confidence"],
            "study_seed": config["study_seed"],
            "outcome": config["hierarchy"]["outcome"],
        },
    script:
        "../scripts/make_table.py"


# Small, fast jobs run inside the main Snakemake process, not as cluster jobs (issue 12);
# the rules above without a benchmark: are cheap (seconds, mostly imports).
localrules:
    peeking_figure,
    hierarchy_two_spreads,
