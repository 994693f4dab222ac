# Shared by every stage: config check (before any job), wildcard constraints, paths.
from snakemake.utils import validate

from evalsim.config import canonical, check_config

# Our check names the bad key and the allowed values; snakemake's validate then runs the
# same schema (and fills defaults in the same way) so `--lint` sees the schema in use.
config.update(check_config(config))


validate(config, schema="../schemas/config.schema.yaml")
# Every dict of the config with its keys sorted (lists keep their order): Snakemake compares
# a job's params by their repr, which follows key order, so reordering or reformatting
# config.yaml must not rerun anything (issue 26; tests/test_workflow_reruns.py).
_canonical_config = canonical(dict(config))
config.clear()
config.update(_canonical_config)

TASKS = [t["name"] for t in config["tasks"]]
POLICIES = [p["name"] for p in config["policies"]]


wildcard_constraints:
    task="|".join(TASKS),
    policy="|".join(POLICIES),
    seed=r"\d+",
    chunk=r"\d+",


def table(tid):
    """Table ``tid``'s products (e.g. 'T01_wilson_vs_library'): CSV, Markdown, LaTeX, the
    note as an rst fragment that the table's report caption includes, and the table's page in
    the report (title, rows, note; shown full width beside the sidebar)."""
    return {
        "csv": f"results/tables/{tid}.csv",
        "md": f"results/tables/{tid}.md",
        "tex": f"results/tables/{tid}.tex",
        "rst": f"results/report/tables/{tid}.rst",
        "html": f"results/report/tables/{tid}.html",
    }


def figure(fid):
    """The PNG and PDF products of figure ``fid``."""
    return {"png": f"figures/{fid}.png", "pdf": f"figures/{fid}.pdf"}


def report_table(tid, category, caption=None):
    """Table ``tid``'s outputs; its HTML page is the report's entry (the rows full width in
    the main panel), with its caption (workflow/report/<caption or tid>.rst, which includes
    the note's rst fragment) in the sidebar."""
    paths = table(tid)
    return {
        **paths,
        "html": report(
            paths["html"], caption=f"../report/{caption or tid}.rst", category=category
        ),
    }


def report_figure(fid, category):
    """Figure ``fid``'s outputs, the PNG shown in the HTML report with its caption."""
    paths = figure(fid)
    return {
        "png": report(paths["png"], caption=f"../report/{fid}.rst", category=category),
        "pdf": paths["pdf"],
    }


def all_targets():
    """Every final product: each stage file defines its <STAGE>_TARGETS list."""
    return (
        EXACT_TARGETS
        + FISHER_TARGETS
        + SIMULATE_TARGETS
        + RESAMPLE_TARGETS
        + DESIGN_TARGETS
        + PEEKING_TARGETS
        + MULTI_TARGETS
        + SEQUENTIAL_TARGETS
        + DRIFT_TARGETS
        + REPORT_TARGETS
    )
