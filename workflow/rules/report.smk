# Stage 'report': the protocol flowchart (F02) and the claims ledger, which joins
# config/claims.yaml with every table the other stages produce (evalsim.ledger).
import sys


def _stage_tables():
    """Every CSV table of the other stages: the ledger reads its sources from them."""
    products = (
        exact_targets()
        + fisher_targets()
        + simulate_targets()
        + resample_targets()
        + design_targets()
        + peeking_targets()
    )
    return sorted(
        {p for p in products if p.startswith("results/tables/") and p.endswith(".csv")}
    )


def report_targets():
    return [
        *figure("F02_protocol").values(),
        "results/claims.csv",
        "results/claims.md",
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
    params:
        builder="report:protocol_flowchart",
        kwargs={},
    script:
        "../scripts/make_figure.py"


rule report_claims_ledger:
    input:
        claims=config["report"]["claims"],
        tables=_stage_tables(),
    output:
        csv=report(
            "results/claims.csv",
            caption="../report/claims_ledger.rst",
            category="report",
        ),
        md="results/claims.md",
    log:
        "logs/report/claims_ledger.log",
    params:
        # The interpreter running Snakemake has evalsim installed; a bare `python` may not.
        python=sys.executable,
    shell:
        "{params.python} -m evalsim.ledger build --claims {input.claims} --root . "
        "--csv {output.csv} --md {output.md} > {log} 2>&1"
