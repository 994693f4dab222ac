"""The claims ledger: every number of the four documents, stated vs reproduced.

``config/claims.yaml`` lists each quantitative claim (document, lines, quote, stated value,
rule, tolerance) and one or more *sources*: a result table of the pipeline, a column and a
row selector, or a small expression over such values. :func:`build_ledger` reads the values
from the pipeline's products (never from the claims file), applies the claim's rule and
writes one row per claim with a verdict and a one-line reason:

- ``matches``: the reproduced value rounds to the printed digits, lies within the sampling
  error of the document's own Monte Carlo estimate, or (simulation claims) agrees with our
  pools under the claim's criterion;
- ``document rounding``: the document's number follows from its inputs only after a coarser
  rounding than its digits claim ("about", "roughly", a stated tolerance);
- ``simulation differs``: the document is self-consistent, but our MuJoCo pools, with their
  sampling error, give another number;
- ``document error``: the document's number does not follow from its own stated inputs;
- ``ambiguous``: the document leaves out a premise and the plausible readings disagree, or the
  claim is not a number a rule can decide;
- ``not resolvable with the pools``: the document follows from its own inputs and our pools
  agree, but the pool check's range also holds a trivial value (0 or 1 for a probability, 0
  for a gap), so it could not have failed: the pools cannot tell.

Each claim names its primary reading (``primary``, :data:`evalsim.ledger.claims.PRIMARY`):
the reading the sentence states, chosen by one written rule (the header of
``config/claims.yaml``). That reading is the claim's first source and decides; a reading on
our pools (``on_pools``) can only say "matches", "simulation differs" or "not resolvable".

A simulation claim with a ``model`` answers two questions separately
(:mod:`evalsim.ledger.models`): (a) the number recomputed exactly from the document's own
inputs, (b) a parametric bootstrap over our pools' rates. The documents' own Python is run by
:mod:`evalsim.ledger.doccode`.

A claim whose sources cannot be read yet (the table does not exist, a column or row is
missing) gets ``missing source`` and names what is missing.

The rules are spelled out at the top of ``config/claims.yaml``. Run as
``python -m evalsim.ledger build`` (the Snakemake rule does), ``python -m evalsim.ledger code``
(the documents' Python, into ``results/document_code.csv``) or
``python -m evalsim.ledger readme`` to regenerate the README's generated sections.
"""

from __future__ import annotations

from evalsim.ledger.claims import (
    CLAIM_KEYS,
    RULES,
    SOURCE_KEYS,
    Claim,
    SourceError,
    load_claims,
    load_skipped,
)
from evalsim.ledger.claims import (
    _decimals as _decimals,
)
from evalsim.ledger.cli import main
from evalsim.ledger.output import (
    _md_cell as _md_cell,
)
from evalsim.ledger.output import (
    _md_table as _md_table,
)
from evalsim.ledger.output import (
    ledger_html,
    ledger_markdown,
    readme_disagreements,
    replace_section,
    section,
    write_ledger,
)
from evalsim.ledger.readings import Tables, evaluate_source
from evalsim.ledger.readings import _lookup as _lookup
from evalsim.ledger.readings import _where_text as _where_text
from evalsim.ledger.verdicts import (
    COLUMNS,
    VERDICTS,
    build_ledger,
    judge_claim,
    verdict_counts,
)
from evalsim.ledger.verdicts import (
    _fmt as _fmt,
)

__all__ = [
    "CLAIM_KEYS",
    "COLUMNS",
    "RULES",
    "SOURCE_KEYS",
    "Tables",
    "evaluate_source",
    "main",
    "VERDICTS",
    "Claim",
    "SourceError",
    "build_ledger",
    "judge_claim",
    "ledger_html",
    "ledger_markdown",
    "load_claims",
    "load_skipped",
    "readme_disagreements",
    "replace_section",
    "section",
    "verdict_counts",
    "write_ledger",
]
