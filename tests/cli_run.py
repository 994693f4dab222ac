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


def write_log(path, outcomes: dict, condition: bool = False):
    """Write a trial log: each policy's 0/1 outcomes in order, policy by policy.

    Parameters
    ----------
    path : pathlib.Path
        The CSV file to write.
    outcomes : dict of str to sequence
        Policy name -> its outcomes (truthy = success), in trial order.
    condition : bool
        Add a ``condition`` column numbering each policy's trials from 0 (the pairing key).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    lines = ["policy,success,condition" if condition else "policy,success"]
    for policy, ys in outcomes.items():
        lines += [f"{policy},{int(y)}" + (f",{i}" if condition else "") for i, y in enumerate(ys)]
    path.write_text("\n".join(lines) + "\n")
    return path


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
