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


def figure(fid):
    """The PNG and PDF products of figure ``fid``."""
    return {"png": f"figures/{fid}.png", "pdf": f"figures/{fid}.pdf"}


def report_figure(fid, category):
    """Figure ``fid``'s outputs, the PNG shown in the HTML report with its caption."""
    paths = figure(fid)
    return {
        "png": report(
            paths["png"],
            caption=f"../report/{fid}.rst",
            category=category,
            labels={"product": f"study's own: the scene ({fid.split('_')[0]})"},
        ),
        "pdf": paths["pdf"],
    }


def all_targets():
    """Every final product: the manifest's tables and figures (products.smk) and the files
    the other stage files list in their <STAGE>_TARGETS."""
    return (
        PRODUCT_TARGETS
        + SIMULATE_TARGETS
        + SIMREAL_TARGETS
        + SEQUENTIAL_TARGETS
        + DRIFT_TARGETS
        + STUDIES_TARGETS
        + REPORT_TARGETS
    )
