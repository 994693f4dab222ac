# Shared by every stage: config check (before any job), wildcard constraints, paths.
from snakemake.utils import validate

from evalsim.config import check_config

# Our check names the bad key and the allowed values; snakemake's validate then runs the
# same schema (and fills defaults in the same way) so `--lint` sees the schema in use.
config.update(check_config(config))


validate(config, schema="../schemas/config.schema.yaml")

TASKS = [t["name"] for t in config["tasks"]]
POLICIES = [p["name"] for p in config["policies"]]


wildcard_constraints:
    task="|".join(TASKS),
    policy="|".join(POLICIES),
    seed=r"\d+",
    chunk=r"\d+",


def table(tid):
    """The CSV and Markdown products of table ``tid`` (e.g. 'T01_wilson_vs_library')."""
    return {"csv": f"results/tables/{tid}.csv", "md": f"results/tables/{tid}.md"}


def figure(fid):
    """The PNG and PDF products of figure ``fid``."""
    return {"png": f"figures/{fid}.png", "pdf": f"figures/{fid}.pdf"}


def all_targets():
    """Every final product of the study, gathered from each stage's ``*_targets()``."""
    return (
        exact_targets()
        + fisher_targets()
        + simulate_targets()
        + resample_targets()
        + design_targets()
        + peeking_targets()
        + report_targets()
    )
