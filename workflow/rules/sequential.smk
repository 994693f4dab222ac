# Stage 'sequential': T31-T33, F05-F07 (issue 13: sequential comparisons with certified error
# rates). Library: evalsim.stats.sequential*; builders: evalsim.products.sequential and
# sequential_sheet. Each design is built once into its design file; the products read them.

SEQ = config["sequential"]
SEQ_DESIGNS = [d["name"] for d in SEQ["designs"]]
SEQ_SPEC = {d["name"]: d for d in SEQ["designs"]}


SEQ_DESIGN_FILE = "results/sequential/designs/{}.json"


SEQUENTIAL_TARGETS = [
    *[SEQ_DESIGN_FILE.format(n) for n in SEQ_DESIGNS],
    *table("T31_sequential_designs").values(),
    *table("T32_sequential_oc").values(),
    *table("T33_sequential_pools").values(),
    *figure("F05_sequential_false_win").values(),
    *figure("F06_sequential_power_ess").values(),
    *figure("F07_bench_sheet").values(),
]


rule sequential_design:
    output:
        SEQ_DESIGN_FILE.format("{design}"),
    log:
        "logs/sequential/design_{design}.log",
    benchmark:
        "results/benchmarks/sequential/design_{design}.tsv"
    wildcard_constraints:
        design="|".join(SEQ_DESIGNS),
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


rule sequential_designs_table:
    input:
        designs=[SEQ_DESIGN_FILE.format(n) for n in SEQ_DESIGNS],
    output:
        **report_table("T31_sequential_designs", "sequential"),
    log:
        "logs/sequential/T31_sequential_designs.log",
    params:
        builder="sequential:designs_table",
        kwargs={},
    script:
        "../scripts/sequential_make.py"


rule sequential_oc_table:
    input:
        designs=[SEQ_DESIGN_FILE.format(n) for n in SEQ_DESIGNS],
    output:
        **report_table("T32_sequential_oc", "sequential"),
    log:
        "logs/sequential/T32_sequential_oc.log",
    benchmark:
        "results/benchmarks/sequential/T32_sequential_oc.tsv"
    params:
        builder="sequential:oc_table",
        kwargs={"scenarios": SEQ["scenarios"], "step": SEQ["step"]},
    script:
        "../scripts/sequential_make.py"


rule sequential_pools_table:
    input:
        designs=[SEQ_DESIGN_FILE.format(n) for n in SEQ["pools"]["designs"]],
        pools="results/pools/pools.parquet",
    output:
        **report_table("T33_sequential_pools", "sequential"),
    log:
        "logs/sequential/T33_sequential_pools.log",
    benchmark:
        "results/benchmarks/sequential/T33_sequential_pools.tsv"
    params:
        builder="sequential:pools_table",
        kwargs={
            "policies": config["policies"],
            "task": config["tasks"][0]["name"],
            "seed": SEQ["pools"]["seed"],
            "experiments": SEQ["pools"]["experiments"],
            "study_seed": config["study_seed"],
        },
    script:
        "../scripts/sequential_make.py"


rule sequential_false_win_figure:
    input:
        designs=[SEQ_DESIGN_FILE.format(n) for n in SEQ_DESIGNS],
    output:
        **report_figure("F05_sequential_false_win", "sequential"),
    log:
        "logs/sequential/F05_sequential_false_win.log",
    params:
        builder="sequential:false_win_figure",
        kwargs={
            "alpha": SEQ["alpha"],
            "n_naive": SEQ["figure"]["naive_n"],
            "p_points": SEQ["figure"]["p_points"],
        },
    script:
        "../scripts/sequential_make.py"


rule sequential_power_ess_figure:
    input:
        designs=[SEQ_DESIGN_FILE.format(n) for n in SEQ_DESIGNS],
    output:
        **report_figure("F06_sequential_power_ess", "sequential"),
    log:
        "logs/sequential/F06_sequential_power_ess.log",
    params:
        builder="sequential:power_ess_figure",
        kwargs={
            "p_a": SEQ["figure"]["p_a"],
            "p_b_grid": SEQ["figure"]["p_b"],
            "alpha": SEQ["alpha"],
        },
    script:
        "../scripts/sequential_make.py"


rule sequential_bench_sheet:
    input:
        designs=[SEQ_DESIGN_FILE.format(SEQ["sheet_design"])],
    output:
        **report_figure("F07_bench_sheet", "sequential"),
    log:
        "logs/sequential/F07_bench_sheet.log",
    params:
        builder="sequential_sheet:bench_sheet_of",
        kwargs={},
    script:
        "../scripts/sequential_make.py"
