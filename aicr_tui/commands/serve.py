"""``aicr-tui serve``: the wizard in a browser through textual-serve, on localhost by default.

Each browser session starts its own ``aicr-tui`` process (the same wizard as the
terminal). Binding to anything other than a loopback address is an explicit choice.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def register(sub: Any) -> None:
    p = sub.add_parser("serve", help="serve the wizard to a browser with textual-serve")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    p.add_argument("--demo", action="store_true", help="serve the wizard on the shipped samples")
    p.add_argument("--public-url", default=None, help="URL the browser reaches the server at")


def wizard_command(demo: bool) -> str:
    """The shell command textual-serve runs for each browser session."""
    parts = [sys.executable, "-m", "aicr_tui"]
    if demo:
        parts.append("--demo")
    return shlex.join(parts)


def build_server(args: argparse.Namespace) -> Any:
    from core.foundation.errors import invalid

    if not 1 <= int(args.port) <= 65535:
        raise invalid(f"--port {args.port} is out of range: expected 1-65535")
    if not str(args.host).strip():
        raise invalid("--host is empty: expected an address such as 127.0.0.1")
    from textual_serve.server import Server

    return Server(
        wizard_command(bool(args.demo)),
        host=args.host,
        port=int(args.port),
        title="aicr-tui",
        public_url=args.public_url,
    )


def run(args: argparse.Namespace) -> int:
    server = build_server(args)
    if args.host not in LOOPBACK:
        sys.stderr.write(
            f"aicr-tui: warning: serving on {args.host}, reachable beyond this machine\n"
        )
    sys.stderr.write(f"aicr-tui: serving the wizard on http://{args.host}:{args.port}\n")
    server.serve()
    return 0
