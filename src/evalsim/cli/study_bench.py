"""``evalsim study serve`` and ``evalsim study demo``: the console at the robot (issue 42).

Subcommands of ``evalsim study`` (see :mod:`evalsim.cli.study`)::

    evalsim study serve DIR [--port 8765] [--lan]
    evalsim study demo [DIR] [--port 8765] [--no-browser] [--no-serve]

``serve`` runs the console (:func:`evalsim.study.web.app.create_app`) under uvicorn. It binds
127.0.0.1; ``--lan`` binds every interface with a fresh random access token
(:func:`secrets.token_urlsafe`), and prints the URL with its token and a QR code as text.
It prints nothing that names an arm. Both need the ``bench`` extra
(``pip install 'evalsim[bench]'``); without it they say so in one line and exit 2.
"""

from __future__ import annotations

import argparse
import secrets
import socket
import sys
import webbrowser

from evalsim.cli._common import Report, Subcommand, arg

__all__ = ["register", "STUDY_SUBCOMMANDS", "lan_address", "serve"]

DEFAULT_PORT = 8765


def lan_address() -> str:
    """This machine's address on the LAN (the interface of the default route; no packet is
    sent), or 127.0.0.1 when there is none."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("10.255.255.255", 1))
        return s.getsockname()[0]
    except OSError:
        return "127.0.0.1"
    finally:
        s.close()


def _port(value: str) -> int:

    try:
        port = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {value!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port must be in 1..65535, got {port}")
    return port


def serve(study_dir, port: int = DEFAULT_PORT, lan: bool = False, out=None, opened=None) -> int:
    """Run the console until Ctrl-C (see the module docstring); returns 0."""
    import uvicorn

    from evalsim.study.web.app import create_app

    out = out or sys.stdout
    if lan:
        token = secrets.token_urlsafe(24)
        host, shown = "0.0.0.0", lan_address()
        app = create_app(study_dir, token=token, allowed_hosts=None)
        url = f"http://{shown}:{port}/?token={token}"
    else:
        host = shown = "127.0.0.1"
        app = create_app(study_dir)
        url = f"http://{shown}:{port}/"
    print(f"evalsim console: {url}", file=out)
    print("  operator: /   mirror: /mirror   blind review: /review   (Ctrl-C stops)", file=out)
    if lan:
        print("  LAN mode: every request needs the token above; scan it on the phone:", file=out)
        try:
            import segno

            segno.make(url, error="m").terminal(out=out, compact=True)
        except ModuleNotFoundError:
            print("  (install segno for a QR code)", file=out)
    out.flush()
    if opened is not None:
        opened(url)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=2,
        access_log=False,
    )
    uvicorn.Server(config).run()
    return 0


def _run_serve(args):
    import starlette  # noqa: F401
    import uvicorn  # noqa: F401  (the bench extra: a missing one is named in one line)

    serve(args.dir, args.port, args.lan)
    return Report({"stopped": True}, [("line", "evalsim console stopped")])


def _run_demo(args):
    import starlette  # noqa: F401
    import uvicorn  # noqa: F401

    from evalsim.study.demo import prepare_demo

    folder = prepare_demo(args.dir)
    done = Report({"study": str(folder)}, [("line", f"demo study: {folder}")])
    print(f"evalsim study demo: {folder} (half run; lesson 25's A and B on the SO-101)")
    if args.no_serve:
        return done

    def opened(url):
        if not args.no_browser:
            webbrowser.open(url)

    serve(folder, args.port, False, opened=opened)
    return done


_PORT = arg("--port", type=_port, default=DEFAULT_PORT, help="TCP port (default 8765)")

#: The study subcommands this module adds, for :data:`evalsim.cli.study.STUDY_SUBCOMMANDS`.
STUDY_SUBCOMMANDS = (
    Subcommand(
        "serve",
        "run the blinded console for a locked study",
        _run_serve,
        (
            arg("dir", metavar="DIR", help="the locked study folder"),
            _PORT,
            arg(
                "--lan",
                action="store_true",
                help="bind every interface, with a random access token (printed with a QR code)",
            ),
        ),
        json=False,
    ),
    Subcommand(
        "demo",
        "a half-run demo study on the MuJoCo SO-101, in the browser",
        _run_demo,
        (
            arg(
                "dir",
                metavar="DIR",
                nargs="?",
                default="evalsim-demo",
                help="the demo's folder (default ./evalsim-demo; reused when locked)",
            ),
            _PORT,
            arg("--no-browser", action="store_true", help="do not open a browser"),
            arg("--no-serve", action="store_true", help="prepare the study and stop"),
        ),
        json=False,
    ),
)


def register(sub) -> None:
    """Add ``serve`` and ``demo`` to the ``evalsim study`` subparsers ``sub``."""
    for command in STUDY_SUBCOMMANDS:
        command.register(sub)
