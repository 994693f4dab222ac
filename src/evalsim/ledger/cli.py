"""``python -m evalsim.ledger``: build the ledger, regenerate the README sections."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from evalsim.io import write_text_atomic
from evalsim.ledger.claims import load_claims, load_skipped
from evalsim.ledger.doccode import documents_dir, write_document_code
from evalsim.ledger.output import readme_disagreements, replace_section, write_ledger
from evalsim.ledger.verdicts import build_ledger, verdict_counts


def main(argv: list[str] | None = None) -> int:
    """``build``: write the ledger; ``readme``: regenerate the README's generated sections."""
    parser = argparse.ArgumentParser(
        prog="python -m evalsim.ledger", description=sys.modules[__package__].__doc__
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="join claims.yaml with the result tables")
    b.add_argument("--claims", default="config/claims.yaml")
    b.add_argument("--root", default=".")
    b.add_argument("--csv", default="results/claims.csv")
    b.add_argument("--md", default="results/claims.md")
    b.add_argument("--html", default=None, help="the ledger's page for the HTML report")
    c = sub.add_parser("code", help="run the documents' Python and check it against evalsim")
    c.add_argument("--documents", default=None, help="folder of the documents ($EVALSIM_DOCUMENTS)")
    c.add_argument("--csv", default="results/document_code.csv")
    r = sub.add_parser("readme", help="regenerate README sections from the ledger and captions")
    r.add_argument("--ledger", default="results/claims.csv")
    r.add_argument("--readme", default="README.md")
    r.add_argument("--check", action="store_true", help="exit 1 if the README is stale")
    r.add_argument(
        "--sections",
        default="gallery,disagreements",
        help="which generated sections to rewrite (gallery needs no results)",
    )
    args = parser.parse_args(argv)
    if args.cmd == "build":
        claims = load_claims(args.claims)
        df = build_ledger(claims, args.root)
        write_ledger(df, args.csv, args.md, load_skipped(args.claims), args.html)
        for verdict, n in verdict_counts(df).items():
            print(f"{n:4d}  {verdict}")
        return 0
    if args.cmd == "code":
        folder = args.documents or documents_dir(".")
        df = write_document_code(folder, args.csv)
        for _, row in df.iterrows():
            print(
                f"{row['doc']}  {row['function'] or '-'}  ran: {row['ran']}  right: {row['right']}"
            )
        return 0
    # Lazy: evalsim.products.report imports the ledger (a cycle at module level).
    from evalsim.products.report import gallery_markdown

    wanted = {s.strip() for s in args.sections.split(",")}
    text = Path(args.readme).read_text(encoding="utf-8")
    new = text
    if "disagreements" in wanted:
        df = pd.read_csv(args.ledger, dtype=str, keep_default_na=False)
        new = replace_section(new, "disagreements", readme_disagreements(df))
    if "gallery" in wanted:
        new = replace_section(new, "gallery", gallery_markdown(Path(args.readme).parent))
    if args.check:
        if new != text:
            print(f"{args.readme} is stale: run python -m evalsim.ledger readme", file=sys.stderr)
            return 1
        return 0
    write_text_atomic(args.readme, new)
    return 0
