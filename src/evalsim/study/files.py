"""Writing a study's files: atomically, never over a device, FIFO, link or folder."""

from __future__ import annotations

from pathlib import Path

from evalsim.study.errors import StudyError

__all__ = ["check_replaceable", "write_new"]


def check_replaceable(path: Path) -> None:
    """Refuse to replace anything but a regular file (a device, a FIFO, a link, a folder)."""
    path = Path(path)
    if (path.exists() or path.is_symlink()) and (not path.is_file() or path.is_symlink()):
        raise StudyError(f"{path}: exists and is not a regular file; not replaced")


def write_new(path: Path, data: bytes, replace: bool = False) -> None:
    """Write ``data`` to ``path`` atomically; refuse a path that is not a regular file, and
    (unless ``replace``) one that exists."""
    from evalsim.io import atomic_path

    path = Path(path)
    check_replaceable(path)
    if path.exists() and not replace:
        raise StudyError(f"{path}: already exists; not replaced")
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
