"""The commands' answers as library calls: one function per command that takes the parsed
inputs (a trial table, rates, options) and returns one frozen result (its tables, verdict and
notes, with ``.to_dict()``), which :mod:`evalsim.cli` renders as text, Markdown, LaTeX or JSON.

This package imports neither :mod:`evalsim.cli` nor :mod:`evalsim.products` (an
import-linter contract); its modules import :mod:`evalsim.stats` inside the functions that
compute, so the command's start stays light (issue 24).
"""
