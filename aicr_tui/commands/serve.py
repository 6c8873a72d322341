"""``aicr-tui serve``: the wizard in a browser through textual-serve, safe by default.

Each browser session starts its own ``aicr-tui`` process (the same wizard as the terminal),
so whoever reaches the server can drive the wizard. textual-serve itself checks nothing;
``GuardedServer`` adds, for every HTTP request and websocket alike:

- **Host**: only the name the server is bound to (``127.0.0.1``/``::1`` also as
  ``localhost``), with the port, so a DNS-rebinding page (``evil.example`` resolving to
  127.0.0.1) is refused. On a wildcard bind (``0.0.0.0``/``::``) the host is the one of
  ``--public-url`` when given, otherwise any (the token still guards it).
- **Origin**: when a request carries one (every browser websocket does), it must be this
  server's own origin, so a page on another site cannot open the websocket.
- **Token**: a secret drawn per run (``secrets``, 256 bits), printed in the start URL as
  Jupyter does. The first page load with ``?token=`` sets an HttpOnly, SameSite=Strict
  cookie so the page's own assets and websocket carry it; clients may also send
  ``?token=`` or ``Authorization: token …``. ``--no-token`` is accepted on loopback only.
- **Sessions**: at most ``--max-sessions`` (default 4, at most 16) wizards at once; one
  more websocket is refused with HTTP 503 before any process starts. Inside a session every
  message is checked (``serve_session``): size, rate, JSON shape and a clamped terminal
  size (the ``SERVE_*`` limits in ``aicr_tui.core.foundation.limits``); one that breaks a limit
  closes the session.
- **Log**: the access log names the path without its query string, never a token; one
  plain line per request (no level column, no padding to the terminal width).
- **Offline**: the page loads nothing from outside this host. textual-serve's page asks a
  web font service for Roboto Mono; the page is rewritten to use the copy of that font
  textual-serve ships in its static files, and it names a favicon served here.
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import ipaddress
import secrets
import shlex
import signal
import sys
from typing import Any
from urllib.parse import urlsplit

LOOPBACK = ("127.0.0.1", "localhost", "::1")
WILDCARD = ("0.0.0.0", "::", "")
DEFAULT_MAX_SESSIONS = 4
MAX_SESSIONS_LIMIT = 16
TOKEN_QUERY = "token"

# The favicon: a green chip on the page's own background colour (drawn here, served here).
FAVICON_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">'
    '<rect width="16" height="16" rx="3" fill="#0c181f"/>'
    '<rect x="4" y="4" width="8" height="8" rx="1" fill="#76b900"/>'
    '<path d="M6 2v2M10 2v2M6 12v2M10 12v2M2 6h2M2 10h2M12 6h2M12 10h2" '
    'stroke="#76b900" stroke-width="1"/></svg>'
)
# textual-serve's page: the stylesheet link to the web font service it would load.
WEB_FONT_LINK = r"<link[^>]*href=\"https?://fonts\.googleapis\.com[^\"]*\"[^>]*>"


def offline_page(html: str, static_url: str) -> str:
    """textual-serve's page with nothing loaded from another host: the web font link
    replaced by the font files in textual-serve's own static directory, and a favicon."""
    font = (
        "<style>"
        '@font-face { font-family: "Roboto Mono"; font-style: normal; '
        f'src: url("{static_url}fonts/RobotoMono-VariableFont_wght.ttf") format("truetype"); }}'
        '@font-face { font-family: "Roboto Mono"; font-style: italic; '
        f'src: url("{static_url}fonts/RobotoMono-Italic-VariableFont_wght.ttf") '
        'format("truetype"); }'
        "</style>"
        '<link rel="icon" type="image/svg+xml" href="/favicon.ico" />'
    )
    import re

    return re.sub(WEB_FONT_LINK, lambda _: font, html, count=1)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "serve",
        help="serve the wizard to a browser with textual-serve",
        description=(
            "Serve the wizard to a web browser: every browser session runs its own wizard "
            "process on this machine. Binds to localhost by default; every request needs the "
            "token in the printed URL."
        ),
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    samples = p.add_mutually_exclusive_group()
    samples.add_argument(
        "--demo",
        dest="demo",
        action="store_true",
        default=True,
        help="list the shipped sample captures (the default)",
    )
    samples.add_argument(
        "--no-demo",
        dest="demo",
        action="store_false",
        help="start on an empty capture list (open files or fetch live only)",
    )
    p.add_argument("--public-url", default=None, help="URL the browser reaches the server at")
    p.add_argument(
        "--max-sessions",
        type=int,
        default=DEFAULT_MAX_SESSIONS,
        help=f"concurrent browser sessions (default {DEFAULT_MAX_SESSIONS}, "
        f"1-{MAX_SESSIONS_LIMIT}); one more is refused",
    )
    p.add_argument(
        "--no-token",
        action="store_true",
        help="do not require the per-run token (loopback --host only)",
    )


def wizard_command(demo: bool) -> str:
    """The shell command textual-serve runs for each browser session."""
    parts = [sys.executable, "-m", "aicr_tui"]
    if demo:
        parts.append("--demo")
    return shlex.join(parts)


def is_loopback(host: str) -> bool:
    if host in LOOPBACK:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _host_names(host: str, public_url: str | None) -> set[str] | None:
    """Lower-case host names (without port) a request may name; None means any."""
    names: set[str] = set()
    if public_url:
        public = urlsplit(public_url).hostname
        if public:
            names.add(public.lower())
    bare = host.strip("[]").lower()
    if bare in WILDCARD:
        return names or None
    names.add(bare)
    if is_loopback(bare):
        names.add("localhost")
    return names


def _split_host(value: str) -> tuple[str, int | None] | None:
    """``host[:port]`` / ``[v6][:port]`` of a Host header; None when malformed."""
    parsed = urlsplit("//" + value)
    try:
        port = parsed.port
    except ValueError:
        return None
    if parsed.hostname is None or parsed.username is not None or parsed.path:
        return None
    return parsed.hostname.lower(), port


def _make_guarded_server_class() -> type:
    """``GuardedServer``, built on first use so the CLI does not import aiohttp to parse flags."""
    from aiohttp import web
    from textual_serve.server import Server

    from aicr_tui.commands.serve_session import make_access_logger, run_session

    class GuardedServer(Server):
        def __init__(
            self,
            command: str,
            *,
            host: str,
            port: int,
            public_url: str | None,
            token: str | None,
            max_sessions: int,
        ) -> None:
            super().__init__(command, host=host, port=port, title="aicr-tui", public_url=public_url)
            self.explicit_public_url = public_url
            self.token = token
            self.max_sessions = max_sessions
            self.sessions = 0
            self.allowed_hosts = _host_names(host, public_url)
            self.cookie_name = f"aicr-tui-token-{port}"

        @property
        def start_url(self) -> str:
            base = self.explicit_public_url or self.public_url
            if not self.token:
                return base
            return f"{base.rstrip('/')}/?{TOKEN_QUERY}={self.token}"

        # -- the checks, one place for HTTP and websocket --------------------------
        def refusal(self, request: web.Request) -> str | None:
            host = request.headers.get("Host", "")
            split = _split_host(host)
            if split is None:
                return "missing or malformed Host header"
            name, port = split
            if port is None:
                port = 443 if request.secure else 80
            if port != self.port and self.explicit_public_url is None:
                return f"Host {host!r} is not this server"
            if self.allowed_hosts is not None and name not in self.allowed_hosts:
                return f"Host {host!r} is not this server"
            origin = request.headers.get("Origin")
            if origin is not None:
                parsed = urlsplit(origin)
                if parsed.scheme not in ("http", "https") or parsed.netloc.lower() != host.lower():
                    public = self.explicit_public_url
                    if not public or origin.rstrip("/").lower() != _origin_of(public):
                        return f"Origin {origin!r} is not this server"
            if self.token and not self.token_ok(request):
                return "missing or wrong token"
            return None

        def token_ok(self, request: web.Request) -> bool:
            assert self.token is not None
            offered = [
                request.query.get(TOKEN_QUERY, ""),
                request.cookies.get(self.cookie_name, ""),
            ]
            auth = request.headers.get("Authorization", "")
            if auth.lower().startswith("token "):
                offered.append(auth[6:].strip())
            expected = self.token.encode()
            return any(hmac.compare_digest(o.encode(), expected) for o in offered if o)

        @web.middleware
        async def guard(self, request: web.Request, handler: Any) -> web.StreamResponse:
            reason = self.refusal(request)
            if reason is not None:
                return web.Response(status=403, text=f"aicr-tui serve: refused: {reason}\n")
            response: web.StreamResponse = await handler(request)
            if self.token and request.query.get(TOKEN_QUERY) and not response.prepared:
                response.set_cookie(
                    self.cookie_name, self.token, httponly=True, samesite="Strict", path="/"
                )
            return response

        async def _make_app(self) -> web.Application:
            app: web.Application = await super()._make_app()
            app.middlewares.append(self.guard)
            app.router.add_get("/favicon.ico", self.handle_favicon)
            return app

        async def handle_favicon(self, request: web.Request) -> web.StreamResponse:
            return web.Response(
                text=FAVICON_SVG,
                content_type="image/svg+xml",
                headers={"Cache-Control": "max-age=86400"},
            )

        def initialize_logging(self) -> None:
            """One plain line per request on stdout (textual-serve's Rich handler adds a
            level column and pads every line to the terminal width)."""
            import logging

            handler = logging.StreamHandler(sys.stdout)
            handler.setFormatter(logging.Formatter("%(message)s"))
            logging.basicConfig(level="DEBUG" if self.debug else "INFO", handlers=[handler])

        async def on_startup(self, app: web.Application) -> None:
            """textual-serve prints a logo and a token-less URL; the CLI prints its own line."""

        async def handle_index(self, request: web.Request) -> web.StreamResponse:
            # Asset and websocket URLs follow the Host the browser used (already checked),
            # so the cookie set for that host goes with them.
            if self.explicit_public_url is None:
                self.public_url = f"{request.scheme}://{request.host}"
            response: web.StreamResponse = await super().handle_index(request)
            if isinstance(response, web.Response) and response.text is not None:
                response.text = offline_page(response.text, f"{self.public_url}/static/")
            return response

        # The refusal is a plain 503 response (aiohttp accepts any StreamResponse from a
        # handler); textual-serve annotates its own handler with the WebSocketResponse.
        async def handle_websocket(  # type: ignore[override]
            self, request: web.Request
        ) -> web.StreamResponse:
            if self.sessions >= self.max_sessions:
                return web.Response(
                    status=503,
                    text=f"aicr-tui serve: refused: {self.max_sessions} sessions already open\n",
                )
            self.sessions += 1
            try:
                response: web.StreamResponse = await run_session(self, request)
                return response
            finally:
                self.sessions -= 1

        def serve(self, debug: bool = False) -> None:
            """textual-serve's loop, with the access log that never names the token."""
            self.debug = debug
            self.initialize_logging()
            loop = asyncio.new_event_loop()
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(signum, self.request_exit)
            web.run_app(
                self._make_app(),
                host=self.host,
                port=self.port,
                handle_signals=False,
                loop=loop,
                print=lambda *_: None,
                access_log_class=make_access_logger(self.token),
            )

    return GuardedServer


def _origin_of(url: str) -> str:
    parsed = urlsplit(url)
    return f"{parsed.scheme}://{parsed.netloc}".lower()


def build_server(args: argparse.Namespace, *, token: str | None = None) -> Any:
    """The guarded server for ``args``; ``token`` fixes the secret (tests), else a fresh one."""
    from aicr_tui.core.foundation.errors import invalid

    if not 1 <= int(args.port) <= 65535:
        raise invalid(f"--port {args.port} is out of range: expected 1-65535")
    host = str(args.host).strip()
    if not host:
        raise invalid("--host is empty: expected an address such as 127.0.0.1")
    max_sessions = int(getattr(args, "max_sessions", DEFAULT_MAX_SESSIONS))
    if not 1 <= max_sessions <= MAX_SESSIONS_LIMIT:
        raise invalid(
            f"--max-sessions {max_sessions} is out of range: expected 1-{MAX_SESSIONS_LIMIT}"
        )
    no_token = bool(getattr(args, "no_token", False))
    if no_token and not is_loopback(host):
        raise invalid(
            f"--no-token with --host {host}: a server reachable beyond this machine "
            "requires the token; drop --no-token"
        )
    public_url = getattr(args, "public_url", None)
    if public_url is not None and urlsplit(public_url).scheme not in ("http", "https"):
        raise invalid(f"--public-url {public_url!r}: expected an http:// or https:// URL")
    server_class = _make_guarded_server_class()
    return server_class(
        wizard_command(bool(args.demo)),
        host=host,
        port=int(args.port),
        public_url=public_url,
        token=None if no_token else (token or secrets.token_urlsafe(32)),
        max_sessions=max_sessions,
    )


def run(args: argparse.Namespace) -> int:
    server = build_server(args)
    if not is_loopback(server.host):
        sys.stderr.write(
            f"aicr-tui: serving on {server.host}, reachable beyond this machine; "
            "every request needs the token in the URL below\n"
        )
    elif server.token is None:
        sys.stderr.write(
            "aicr-tui: warning: --no-token: any local process or page that can reach "
            f"port {server.port} can drive the wizard\n"
        )
    sys.stderr.write(
        f"aicr-tui: serving the wizard on {server.start_url} "
        f"(at most {server.max_sessions} sessions)\n"
    )
    sys.stderr.flush()
    server.serve()
    return 0
