"""Running ``evalsim`` subcommands in-process for the CLI tests."""

from __future__ import annotations

import json

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
