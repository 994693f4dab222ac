# Stage 'report': the protocol flowchart (F02) and the claims ledger, which joins
# config/claims.yaml with every table the other stages produce (evalsim.ledger).
import sys

# Every CSV table of the other stages: the ledger reads its sources from them.
REPORT_STAGE_TABLES = sorted(
    {
        p
        for p in EXACT_TARGETS
        + FISHER_TARGETS
        + SIMULATE_TARGETS
        + RESAMPLE_TARGETS
        + DESIGN_TARGETS
        + PEEKING_TARGETS
        if p.startswith("results/tables/") and p.endswith(".csv")
    }
)


REPORT_TARGETS = [
    *figure("F02_protocol").values(),
    "results/document_code.csv",
    "results/claims.csv",
    "results/claims.md",
    "results/report/claims.html",
]


rule report_f02_protocol:
    output:
        png=report(
            figure("F02_protocol")["png"],
            caption="../report/F02_protocol.rst",
            category="report",
        ),
        pdf=figure("F02_protocol")["pdf"],
    log:
        "logs/report/F02_protocol.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        builder="report:protocol_flowchart",
        kwargs={},
    script:
        "../scripts/make_figure.py"


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
    report_f02_protocol,
    report_document_code,
    report_claims_ledger,
