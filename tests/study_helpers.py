"""Locked example studies for the study tests: locked once per module, copied per test so
that each test's events stay its own."""

from __future__ import annotations

import shutil
from pathlib import Path

from evalsim.study import init_study, lock_study


def locked_example(tmp_path_factory, name: str, seed: int) -> Path:
    """The example study of ``evalsim study init``, locked with ``seed`` (without sheets), in a
    fresh folder ``<name>.../s``."""
    d = tmp_path_factory.mktemp(name) / "s"
    init_study(d)
    lock_study(d, seed=seed, sheets=False)
    return d


def study_copy(locked: Path, tmp_path: Path, name: str = "s") -> Path:
    """A copy of the locked study folder ``locked`` at ``tmp_path / name`` (its store too)."""
    d = tmp_path / name
    shutil.copytree(locked, d)
    return d
