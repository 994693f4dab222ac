# Stage 'studies' (issue 41): lesson 25's experiment as a locked study (S01). Its conditions
# are the pool's cube poses, its outcomes are read from the pools through the locked schedule
# (never simulated again), and its self-contained report joins the Snakemake report.
# Library: evalsim.study; builder: evalsim.products.studies.
from evalsim.products.studies import S01_FILES

STUDIES = config["studies"]
S01_DIR = "results/studies/S01"
STUDIES_TARGETS = [f"{S01_DIR}/{name}" for name in S01_FILES]


rule studies_s01:
    input:
        pools="results/pools/pools.parquet",
    output:
        lock=f"{S01_DIR}/lock.json",
        study=f"{S01_DIR}/study.yaml",
        html=report(
            f"{S01_DIR}/S01_report.html",
            caption="../report/S01_study.rst",
            category="studies",
        ),
        json=f"{S01_DIR}/S01_report.json",
        md=f"{S01_DIR}/S01_report.md",
        grid_pdf=f"{S01_DIR}/sheets/grid_sheet.pdf",
        grid_png=f"{S01_DIR}/sheets/grid_sheet.png",
        run_pdf=f"{S01_DIR}/sheets/run_sheet.pdf",
    log:
        "logs/studies/S01.log",
    benchmark:
        "results/benchmarks/studies/S01.tsv"
    localrule: True
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        kwargs={
            "task": config["tasks"][0]["name"],
            "policies": (STUDIES["s01_policies"] or (POLICIES * 2)[:2]),
            "n_pairs": STUDIES["s01_pairs"],
            "seed": STUDIES["s01_seed"],
            "alpha": config["alpha"],
        },
    script:
        "../scripts/study_s01.py"
