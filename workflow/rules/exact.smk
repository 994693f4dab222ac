# Stage 'exact': lesson 25's Build it steps 1-3 and part D (T01-T04) and the figure of
# exact coverage against p. Library: evalsim.stats.{intervals,binomial,coverage,budget};
# builders: evalsim.products.exact. Pure arithmetic: no pools needed.

EXACT = config["exact"]


EXACT_TARGETS = [
    *table("T01_wilson_vs_library").values(),
    *table("T02_exact_coverage").values(),
    *table("T03_prob_at_least_9_of_10").values(),
    *table("T04_trials_for_half_width").values(),
    *figure("coverage_vs_p").values(),
]


rule exact_t01_wilson_vs_library:
    output:
        **report_table("T01_wilson_vs_library", "exact"),
    log:
        "logs/exact/T01_wilson_vs_library.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        builder="exact:wilson_vs_library",
        kwargs={
            "cases": EXACT["t01"]["cases"],
            "z": EXACT["z"],
            "library_z": EXACT["t01"]["library_z"],
            "confidence": config["confidence"],
            "max_diff_n": EXACT["t01"]["max_diff_n"],
            "decimals": EXACT["decimals"],
            "document_max_diff": EXACT["t01"]["document_max_diff"],
        },
    script:
        "../scripts/make_table.py"


rule exact_t02_exact_coverage:
    output:
        **report_table("T02_exact_coverage", "exact"),
    log:
        "logs/exact/T02_exact_coverage.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        builder="exact:exact_coverage_table",
        kwargs={
            "pool_k": EXACT["t02"]["pool_k"],
            "pool_n": EXACT["t02"]["pool_n"],
            "n_values": EXACT["t02"]["n_values"],
            "z": EXACT["z"],
            "decimals": EXACT["decimals"],
            "document": EXACT["t02"]["document"],
        },
    script:
        "../scripts/make_table.py"


rule exact_t03_prob_at_least:
    output:
        **report_table("T03_prob_at_least_9_of_10", "exact"),
    log:
        "logs/exact/T03_prob_at_least_9_of_10.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        builder="exact:prob_at_least_table",
        kwargs={
            "k": EXACT["t03"]["k"],
            "n": EXACT["t03"]["n"],
            "policies": EXACT["t03"]["policies"],
            "decimals": EXACT["decimals"],
        },
    script:
        "../scripts/make_table.py"


rule exact_t04_trials_for_half_width:
    output:
        **report_table("T04_trials_for_half_width", "exact"),
    log:
        "logs/exact/T04_trials_for_half_width.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        builder="exact:trials_for_half_width_table",
        kwargs={
            "rates": EXACT["t04"]["rates"],
            "half_widths": EXACT["t04"]["half_widths"],
            "z": EXACT["z"],
            "rounding": EXACT["t04"]["rounding"],
            "document": EXACT["t04"]["document"],
        },
    script:
        "../scripts/make_table.py"


rule exact_coverage_vs_p:
    output:
        png=report(
            figure("coverage_vs_p")["png"],
            caption="../report/coverage_vs_p.rst",
            category="exact",
        ),
        pdf=figure("coverage_vs_p")["pdf"],
    log:
        "logs/exact/coverage_vs_p.log",
    benchmark:
        "results/benchmarks/exact/coverage_vs_p.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=30,
    params:
        builder="exact:coverage_vs_p_figure",
        kwargs={
            "n_values": EXACT["coverage_figure"]["n_values"],
            "confidence": config["confidence"],
            "p_points": EXACT["coverage_figure"]["p_points"],
            "p_min": EXACT["coverage_figure"]["p_min"],
            "p_max": EXACT["coverage_figure"]["p_max"],
            "y_min": EXACT["coverage_figure"]["y_min"],
        },
    script:
        "../scripts/make_figure.py"


# Small, fast jobs run inside the main Snakemake process, not as cluster jobs (issue 12);
# the rules above without a benchmark: are cheap (seconds, mostly imports).
localrules:
    exact_t01_wilson_vs_library,
    exact_t02_exact_coverage,
    exact_t03_prob_at_least,
    exact_t04_trials_for_half_width,
