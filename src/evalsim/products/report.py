"""Stage 'report': the protocol flowchart (F02), the declared products, the README gallery.

:func:`protocol_flowchart` draws document 000's evaluation protocol from its Mermaid text
(:data:`evalsim.flowchart.PROTOCOL_MERMAID`). :func:`declared_products` loads the workflow
with the Snakemake API and lists every table and figure a rule declares, with the caption
its ``report()`` wrapper names (the tests use it to check that every product reaches the
HTML report). :func:`gallery_markdown` writes the README's gallery from the figure captions.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from dataclasses import dataclass
from pathlib import Path

from evalsim.flowchart import PROTOCOL_MERMAID, draw_flowchart, parse_mermaid

__all__ = [
    "Product",
    "declared_products",
    "gallery_markdown",
    "protocol_flowchart",
    "regenerate_command",
]


def protocol_flowchart(
    mermaid: str | None = None, title: str = "F02. The evaluation protocol (document 000)"
):
    """F02: the evaluation protocol as a flowchart (success test -> ... -> report / compare).

    Parameters
    ----------
    mermaid : str, optional
        A ``flowchart TD`` description; defaults to document 000's, as printed there.
    title : str
        Figure title.
    """
    return draw_flowchart(parse_mermaid(mermaid or PROTOCOL_MERMAID), title=title)


@dataclass(frozen=True)
class Product:
    """One declared output of a rule: its path, and the report caption, category and labels
    if it is wrapped in ``report()``.

    ``labels``: the columns the report lists it by instead of its path (for a product of the
    manifest, its name in the documents and its id: ``Product.report_label`` of
    :mod:`evalsim.products.manifest`); None where the report shows the path.
    """

    rule: str
    path: str
    caption: str | None
    category: str | None
    labels: dict[str, str] | None = None

    @property
    def kind(self) -> str:
        """ "table": a table's page in the report (``results/report/tables/<ID>.html``, the
        entry a table rule wraps in ``report()``); "figure": a figure's PNG; else "other"."""
        if self.path.startswith("results/report/tables/") and self.path.endswith(".html"):
            return "table"
        if self.path.startswith("figures/") and self.path.endswith(".png"):
            return "figure"
        return "other"

    @property
    def csv(self) -> str | None:
        """A table's CSV (``results/tables/<ID>.csv``); None for other products."""
        if self.kind != "table":
            return None
        return f"results/tables/{Path(self.path).stem}.csv"


def declared_products(
    repo: str | os.PathLike = ".", configfile: str = "config/smoke.yaml"
) -> list[Product]:
    """Every output of every rule of the workflow in ``repo``, with its report caption.

    Loads the workflow with the Snakemake API (no job runs; about 3 s).
    """
    from snakemake.api import ConfigSettings, OutputSettings, ResourceSettings, SnakemakeApi

    repo = Path(repo).resolve()
    products = []
    cwd = os.getcwd()
    sink = io.StringIO()
    try:
        os.chdir(repo)
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            with SnakemakeApi(OutputSettings()) as api:
                wapi = api.workflow(
                    resource_settings=ResourceSettings(cores=1),
                    config_settings=ConfigSettings(configfiles=[repo / configfile]),
                    snakefile=repo / "Snakefile",
                    workdir=repo,
                )
                for rule in wapi._workflow.rules:
                    for f in rule.output:
                        rep = f.flags.get("report") if hasattr(f, "flags") else None
                        caption = None
                        if rep is not None and rep.caption is not None:
                            caption = str(rep.caption.get_path_or_uri(secret_free=True))
                            with contextlib.suppress(ValueError):
                                caption = str(Path(caption).resolve().relative_to(repo))
                        labels = None if rep is None else rep.labels
                        products.append(
                            Product(
                                rule.name,
                                str(f),
                                caption,
                                None if rep is None else rep.category,
                                dict(labels) if isinstance(labels, dict) else None,
                            )
                        )
    finally:
        os.chdir(cwd)
    return products


def _rst_to_text(rst: str) -> str:
    text = " ".join(line.strip() for line in rst.strip().splitlines() if line.strip())
    text = re.sub(r"``([^`]*)``", r"`\1`", text)
    return re.sub(r":\w+:`([^`]*)`", r"\1", text)


def regenerate_command(target: str) -> str:
    """The command that rebuilds one product and nothing else: ``--force`` (a flag) reruns the
    job of ``target``, the only target, and Snakemake adds only the jobs its missing inputs
    need (an option that takes many values, such as ``--forcerun``, would swallow a target
    written after it and run the whole study; ``tests/test_regenerate_commands.py``)."""
    return f".venv/bin/snakemake --cores 2 --force {target}"


def gallery_markdown(repo: str | os.PathLike = ".", products: list[Product] | None = None) -> str:
    """The README gallery: each declared figure, its caption and how to regenerate it."""
    repo = Path(repo)
    if products is None:
        products = declared_products(repo)
    figures = sorted((p for p in products if p.kind == "figure"), key=lambda p: p.path)
    lines = [
        "Generated from the figures the rules declare and their captions in `workflow/report/` "
        "by `.venv/bin/python -m evalsim.ledger readme`. The images exist after "
        "`make reproduce` (figures/ is not committed); each line's command rebuilds one.",
        "",
    ]
    for p in figures:
        caption = ""
        if p.caption and (repo / p.caption).exists():
            caption = _rst_to_text((repo / p.caption).read_text(encoding="utf-8"))
        lines.append(
            f"- **[{Path(p.path).stem}]({p.path})** — {caption} "
            f"Regenerate: `{regenerate_command(p.path)}`."
        )
    return "\n".join(lines)
