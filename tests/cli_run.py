"""Running ``evalsim`` subcommands in-process for the CLI tests, and reading their tables."""

from __future__ import annotations

import json
import re

from evalsim.cli import main


def run(capsys, *argv) -> tuple[int, str, str]:
    """Run ``evalsim *argv`` (each argument as ``str``).

    Parameters
    ----------
    capsys : pytest.CaptureFixture
        The test's capture fixture; read (and so cleared) after the call.
    *argv
        The command line after ``evalsim``.

    Returns
    -------
    tuple of (int, str, str)
        Exit status, stdout and stderr.
    """
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def run_json(capsys, *argv) -> dict:
    """Run ``evalsim *argv --json``, require exit status 0 and parse its stdout.

    Parameters
    ----------
    capsys : pytest.CaptureFixture
        The test's capture fixture.
    *argv
        The command line after ``evalsim``, without ``--json``.

    Returns
    -------
    dict
        The printed JSON object.
    """
    rc, out, err = run(capsys, *argv, "--json")
    assert rc == 0, err
    return json.loads(out)


def blocks(text: str, header: bool = False) -> dict[str, list[list[str]]]:
    """Tables of a text report, each found by the dashes under its header row.

    Parameters
    ----------
    text : str
        The report.
    header : bool
        Put the header row's cells first in each table's rows.

    Returns
    -------
    dict of str to list of list of str
        Title -> rows (cells split on runs of 2+ spaces), up to the first blank line.
    """
    found, lines = {}, text.splitlines()
    for i, line in enumerate(lines):
        if i + 2 < len(lines) and set(lines[i + 2].replace(" ", "")) == {"-"}:
            rows = []
            for row in lines[i + 3 :]:
                if not row.strip():
                    break
                rows.append(re.split(r"\s{2,}", row.strip()))
            head = [re.split(r"\s{2,}", lines[i + 1].strip())] if header else []
            found[line] = [*head, *rows]
    return found


def two_policy_log(path, k_a: int, k_b: int, n: int, names=("A", "B"), paired: bool = False):
    """Write a CSV log of two policies with ``n`` trials each, the first ``k_a`` (``k_b``)
    of them successes; with ``paired``, trial i of both policies runs condition i.

    Parameters
    ----------
    path : pathlib.Path
        The file to write.
    k_a, k_b : int
        Successes of the first and the second policy.
    n : int
        Trials of each policy.
    names : tuple of str
        The two policies' names.
    paired : bool
        Add the ``condition`` column (0 .. n - 1).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    lines = ["policy,success,condition" if paired else "policy,success"]
    for name, k in zip(names, (k_a, k_b), strict=True):
        lines += [f"{name},{int(i < k)}" + (f",{i}" if paired else "") for i in range(n)]
    path.write_text("\n".join(lines) + "\n")
    return path
