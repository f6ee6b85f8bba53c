"""`vigil serve`: Vigil in a desktop browser, through textual-serve.

Each browser tab that opens the page starts its own `vigil` (with the arguments given after
`serve`) under Textual's web driver; closing the tab ends that app the way ctrl+q does (its
tools, background tasks and MCP servers are stopped). The server listens on 127.0.0.1 unless
told otherwise, and nothing runs without the random access token printed with the address: the
page and the websocket that starts the app both check it.
"""

from __future__ import annotations

import argparse
import hmac
import secrets
import shlex
import sys
from pathlib import Path
from typing import Any

PAGE_DIR = Path(__file__).with_name("serve_page")
DEFAULT_PORT = 8765
REFUSED = ("Vigil: this address needs its access token. Open the full address that `vigil serve` printed "
           "(it ends in ?token=…).\n")


def build_server(command: str, *, host: str, port: int, token: str, title: str = "Vigil") -> Any:
    """A textual-serve server for `command` that asks for `token` (imported here: only `serve`
    needs aiohttp)."""
    import aiohttp_jinja2
    import jinja2
    from aiohttp import web
    from textual_serve.server import Server, to_int

    class TokenServer(Server):
        def __init__(self) -> None:
            super().__init__(command, host=host, port=port, title=title, templates_path=PAGE_DIR)
            self.token = token

        def allowed(self, given: str | None) -> bool:
            return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

        async def _make_app(self) -> web.Application:
            app = web.Application(middlewares=[private_headers])
            aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(self.templates_path))
            app.add_routes([
                web.get("/", self.handle_index, name="index"),
                # the token is part of the websocket's path: textual.js adds its own query string
                web.get("/ws/{token}", self.handle_socket, name="websocket"),
                web.get("/download/{key}", self.handle_download, name="download"),
                web.static("/static", self.statics_path, name="static"),
            ])
            app.on_startup.append(self.on_startup)
            return app

        async def handle_index(self, request: web.Request) -> web.StreamResponse:
            if not self.allowed(request.query.get("token")):
                return web.Response(status=403, text=REFUSED)
            router = request.app.router
            static = f"{self.public_url}{router['static'].url_for(filename='/')}".rstrip("/") + "/"
            socket = f"{self.public_url}{router['websocket'].url_for(token=self.token)}"
            context = {
                "font_size": to_int(request.query.get("fontsize", "16"), 16),
                "app_websocket_url": "ws:" + socket.split(":", 1)[1],
                "config": {"static": {"url": static}},
                "application": {"name": self.title},
            }
            return aiohttp_jinja2.render_template("vigil_index.html", request, context)

        async def handle_socket(self, request: web.Request) -> web.StreamResponse:
            if not self.allowed(request.match_info.get("token")):
                return web.Response(status=403, text=REFUSED)
            return await self.handle_websocket(request)

        async def on_startup(self, app: web.Application) -> None:
            print(f"Vigil in your browser: {self.public_url}/?token={self.token}", flush=True)
            print(f"Each tab runs: {command}", flush=True)
            print("Press ctrl+c to stop serving.", flush=True)

    @web.middleware
    async def private_headers(request: web.Request, handler: Any) -> web.StreamResponse:
        response = await handler(request)
        # the token is in the address: it must not leak through a Referer or a cache
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        response.headers.setdefault("Cache-Control", "no-store")
        return response

    return TokenServer()


def vigil_command(arguments: list[str]) -> str:
    """The command each tab runs: this Python, this Vigil, the arguments given after `serve`."""
    return shlex.join([sys.executable, "-m", "tui_app", *arguments])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="vigil serve", description="Vigil in a browser: each tab runs its own Vigil. Arguments after the "
        "options (or after --) are passed to vigil, e.g. `vigil serve -- --demo`.")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--token", default=None, help="the access token (default: a new random one)")
    args, rest = parser.parse_known_args(argv)
    if rest[:1] == ["--"]:
        rest = rest[1:]
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        sys.stderr.write(f"vigil serve: listening on {args.host}: anyone who can reach it and has the token "
                         "controls an agent on this machine.\n")
    token = args.token or secrets.token_urlsafe(24)
    if len(token) < 16:
        sys.stderr.write("vigil serve: the token must be at least 16 characters\n")
        return 2
    server = build_server(vigil_command(rest), host=args.host, port=args.port, token=token)
    server.serve()
    return 0
