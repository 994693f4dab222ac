# evalsim: the whole study. Targets are computed in workflow/rules/common.smk.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/products.smk"
include: "workflow/rules/simulate.smk"
include: "workflow/rules/simreal.smk"
include: "workflow/rules/sequential.smk"
include: "workflow/rules/drift.smk"
include: "workflow/rules/studies.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        all_targets(),
