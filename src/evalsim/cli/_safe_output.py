"""Where the ``evalsim`` command writes: every ``--out`` and ``--plot`` goes through here.

A command writes only a regular file, atomically (a temporary file in the same folder, then a
rename: :func:`evalsim.io.atomic_path`). Before any work, :func:`check_output_path` refuses in
one line (issue 45, items 1-3):

* a suffix that does not fit the output (a design file must end in ``.json``, a figure in
  ``.png`` or ``.pdf``);
* a path that exists and is not a regular file -- a device node, a FIFO, a socket, a symbolic
  link, a folder: the rename would replace it with a regular file;
* an existing regular file that is not an earlier output of the same kind (a design file, a
  figure, recognised by its first bytes), unless ``--force`` is given;
* a folder that does not exist, or in which no file can be made (it is tried).

Every message names the path the user gave, never the temporary file's name.
:func:`output_file` checks again just before writing and hands out the temporary path.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from evalsim.cli._errors import BadInput

__all__ = [
    "DESIGN_FILE",
    "FIGURE",
    "FIGURE_OR_SVG",
    "OutputKind",
    "check_output_path",
    "output_file",
]

#: Bytes read from an existing file to recognise an earlier output.
_HEAD_BYTES = 4096


@dataclass(frozen=True)
class OutputKind:
    """One kind of file the command writes.

    Attributes
    ----------
    name : str
        What it is, for messages ("figure", "design file").
    suffixes : tuple of str
        The suffixes it may have (lower case, with the dot).
    signatures : tuple of bytes
        An earlier output of this kind contains one of these in its first 4 KiB.
    """

    name: str
    suffixes: tuple[str, ...]
    signatures: tuple[bytes, ...]

    def is_earlier_output(self, path: str | os.PathLike) -> bool:
        """True when the regular file at ``path`` looks like an output of this kind."""
        try:
            with open(path, "rb") as fh:
                head = fh.read(_HEAD_BYTES)
        except OSError:
            return False
        return any(
            head.startswith(sig) if sig in _PREFIX_SIGNATURES else sig in head
            for sig in self.signatures
        )


_PNG = b"\x89PNG\r\n\x1a\n"
_PDF = b"%PDF-"
_PREFIX_SIGNATURES = {_PNG, _PDF}

#: A figure of summarize and compare (``--plot``) and the bench sheet.
FIGURE = OutputKind("figure", (".png", ".pdf"), (_PNG, _PDF))
#: A figure of rank, which also draws SVG.
FIGURE_OR_SVG = OutputKind("figure", (".png", ".pdf", ".svg"), (_PNG, _PDF, b"<svg"))
#: A sequential design file (:mod:`evalsim.stats.sequential.io`; its ``format`` key).
DESIGN_FILE = OutputKind("design file", (".json",), (b'"evalsim-sequential-design"',))

_SPECIAL = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
)


def _or_list(items) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


def check_output_path(
    path: str | os.PathLike, flag: str, kind: OutputKind, force: bool = False, probe: bool = True
) -> None:
    """Refuse an output path in one line (:class:`BadInput`), before any work is done.

    Parameters
    ----------
    path : str or PathLike
        The path as the user gave it (messages quote it).
    flag : str
        The option that named it (``--out``, ``--plot``).
    kind : OutputKind
        What will be written there.
    force : bool
        Replace an existing regular file that is not an earlier output of ``kind``.
    probe : bool
        Also make (and remove) an empty temporary file in the folder, so that a folder in
        which nothing can be written is refused now rather than after the work.

    Raises
    ------
    BadInput
        For a wrong suffix, a path that is not a regular file, a foreign file without
        ``force``, or a folder that is missing or cannot be written.
    """
    text = os.fspath(path)
    try:
        mode = os.lstat(text).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as err:
        raise BadInput(f"{flag}: cannot use {text!r} ({err.strerror or err})") from None
    if mode is not None:
        if stat.S_ISDIR(mode):
            raise BadInput(f"{flag}: {text!r} is a folder; give a file name")
        for test, what in _SPECIAL:
            if test(mode):
                raise BadInput(
                    f"{flag}: {text!r} is {what}, not a regular file; evalsim will not replace it"
                )
        if not stat.S_ISREG(mode):
            raise BadInput(f"{flag}: {text!r} is not a regular file; evalsim will not replace it")
        if os.path.splitext(text)[1].lower() not in kind.suffixes:
            raise BadInput(f"{flag} must end in {_or_list(kind.suffixes)}, got {text!r}")
        if not force and not kind.is_earlier_output(text):
            raise BadInput(
                f"{flag}: {text!r} exists and is not an earlier {kind.name} of evalsim; "
                "give --force to replace it"
            )
    suffix = os.path.splitext(text)[1].lower()
    if suffix not in kind.suffixes:
        raise BadInput(f"{flag} must end in {_or_list(kind.suffixes)}, got {text!r}")
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder):
        raise BadInput(f"{flag}: folder {folder!r} does not exist")
    if probe:
        try:
            fd, tmp = tempfile.mkstemp(prefix=".evalsim-probe.", dir=folder)
        except OSError as err:
            raise BadInput(f"{flag}: cannot write {text!r} ({err.strerror or err})") from None
        os.close(fd)
        os.unlink(tmp)


@contextlib.contextmanager
def output_file(
    path: str | os.PathLike, flag: str, kind: OutputKind, force: bool = False
) -> Iterator[Path]:
    """Check ``path`` again (:func:`check_output_path`) and yield the temporary path to write;
    it is renamed over ``path`` when the block ends without an exception. A failure to write
    is a :class:`BadInput` naming ``path``."""
    from evalsim.io import atomic_path

    check_output_path(path, flag, kind, force, probe=False)
    try:
        with atomic_path(path) as tmp:
            yield tmp
    except OSError as err:
        raise BadInput(
            f"{flag}: cannot write {os.fspath(path)!r} ({err.strerror or err})"
        ) from None
