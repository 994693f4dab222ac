# Stage 'report': the documents' own code and the claims ledger, which joins
# config/claims.yaml with the tables of the stages it checks (evalsim.ledger).
import sys

# The CSV tables of the stages the ledger checks: it reads its sources from them.
REPORT_STAGE_TABLES = sorted(
    product_paths(p)["csv"]
    for p in PRODUCTS
    if p.kind == "table"
    and p.stage in ("exact", "fisher", "simulate", "resample", "design", "peeking")
)


REPORT_TARGETS = [
    "results/document_code.csv",
    "results/claims.csv",
    "results/claims.md",
    "results/report/claims.html",
]


# The documents' own Python, run in a subprocess (timeout, no network) and checked against
# evalsim's exact intervals; the documents are read from $EVALSIM_DOCUMENTS at run time.
rule report_document_code:
    output:
        "results/document_code.csv",
    log:
        "logs/report/document_code.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        python=sys.executable,
    shell:
        "{params.python} -m evalsim.ledger code --csv {output} > {log} 2>&1"


rule report_claims_ledger:
    input:
        claims=config["report"]["claims"],
        tables=REPORT_STAGE_TABLES,
        code="results/document_code.csv",
    output:
        csv="results/claims.csv",
        md="results/claims.md",
        html=report(
            "results/report/claims.html",
            caption="../report/claims_ledger.rst",
            category="report",
            labels={"product": "the claims ledger: every printed number (claims)"},
        ),
    log:
        "logs/report/claims_ledger.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        # The interpreter running Snakemake has evalsim installed; a bare `python` may not.
        python=sys.executable,
    shell:
        "{params.python} -m evalsim.ledger build --claims {input.claims} --root . "
        "--csv {output.csv} --md {output.md} --html {output.html} > {log} 2>&1"


# Small, fast jobs run inside the main Snakemake process, not as cluster jobs (issue 12);
# the rules above without a benchmark: are cheap (seconds, mostly imports).
localrules:
    report_document_code,
    report_claims_ledger,
