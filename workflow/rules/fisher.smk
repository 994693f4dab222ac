# Stage 'fisher': lesson 25's Build it steps 4-5 (T05, T06): Fisher's exact test by hand,
# by evalsim and by SciPy, and the exact power of the test. Library: evalsim.stats.{fisher,
# power}; builders: evalsim.products.fisher. Pure arithmetic: no pools needed.

FISHER = config["fisher"]


FISHER_TARGETS = [
    *table("T05_fisher_checks").values(),
    *table("T06_fisher_power").values(),
]


rule fisher_t05_checks:
    output:
        **report_table("T05_fisher_checks", "fisher"),
    log:
        "logs/fisher/T05_fisher_checks.log",
    benchmark:
        "results/benchmarks/fisher/T05_fisher_checks.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=20,
    params:
        builder="fisher:fisher_checks",
        kwargs={
            "grid_n": FISHER["t05"]["grid_n"],
            "cases": FISHER["t05"]["cases"],
            "decimals": FISHER["decimals"],
            "document_max_diff": FISHER["t05"]["document_max_diff"],
            "tie_check_n": FISHER["t05"]["tie_check_n"],
        },
    script:
        "../scripts/make_table.py"


rule fisher_t06_power:
    output:
        **report_table("T06_fisher_power", "fisher"),
    log:
        "logs/fisher/T06_fisher_power.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        builder="fisher:fisher_power_table",
        kwargs={
            "p_a": FISHER["t06"]["p_a"],
            "p_b": FISHER["t06"]["p_b"],
            "n_values": FISHER["t06"]["n_values"],
            "alpha": config["alpha"],
            "pool_a": FISHER["t06"]["pool_a"],
            "pool_b": FISHER["t06"]["pool_b"],
            "document_power": FISHER["t06"]["document_power"],
            "document_not_better": FISHER["t06"]["document_not_better"],
            "decimals": FISHER["decimals"],
            "target_power": FISHER["t06"]["target_power"],
            "power_window": FISHER["power_window"],
        },
    script:
        "../scripts/make_table.py"


# Small, fast jobs run inside the main Snakemake process, not as cluster jobs (issue 12);
# the rules above without a benchmark: are cheap (seconds, mostly imports).
localrules:
    fisher_t06_power,


# T38, F12 (issue 28): exact power of Fisher's, Boschloo's and Barnard's tests.
T38_N = list(
    range(FISHER["t38"]["n_min"], FISHER["t38"]["n_max"] + 1, FISHER["t38"]["n_step"])
)
FISHER_TARGETS += [
    *table("T38_unconditional_power").values(),
    *figure("F12_unconditional_power").values(),
]


rule fisher_t38_unconditional_power:
    output:
        **report_table("T38_unconditional_power", "fisher"),
    log:
        "logs/fisher/T38_unconditional_power.log",
    benchmark:
        "results/benchmarks/fisher/T38_unconditional_power.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        builder="unconditional:unconditional_power_table",
        kwargs={
            "rate_pairs": FISHER["t38"]["rate_pairs"],
            "n_values": T38_N,
            "alpha": config["alpha"],
            "target_power": FISHER["t38"]["target_power"],
            "power_window": FISHER["power_window"],
        },
    script:
        "../scripts/make_table.py"


rule fisher_f12_unconditional_power:
    output:
        png=report(
            figure("F12_unconditional_power")["png"],
            caption="../report/F12_unconditional_power.rst",
            category="fisher",
        ),
        pdf=figure("F12_unconditional_power")["pdf"],
    log:
        "logs/fisher/F12_unconditional_power.log",
    benchmark:
        "results/benchmarks/fisher/F12_unconditional_power.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        builder="unconditional:unconditional_power_figure",
        kwargs={
            "p_a": FISHER["t38"]["rate_pairs"][0][0],
            "p_b": FISHER["t38"]["rate_pairs"][0][1],
            "n_values": T38_N,
            "size_n": FISHER["f12"]["size_n"],
            "size_rates": [
                (i + 1) / (FISHER["f12"]["size_points"] + 1)
                for i in range(FISHER["f12"]["size_points"])
            ],
            "alpha": config["alpha"],
        },
    script:
        "../scripts/make_figure.py"
