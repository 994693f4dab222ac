"""Shared fixtures. Tests are fast; none needs the full pipeline."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO
