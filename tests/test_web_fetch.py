"""WebFetch against a real HTTP server on 127.0.0.1: HTML to Markdown, redirects, the size cap,
the timeout, large pages to an artifact, and the addresses it refuses before connecting."""

from __future__ import annotations

import dataclasses
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from tests.fakes import make_env
from tests.waiting import DEADLINE_S
from tui_app.runtime.contract import TimeoutPolicy
from tui_app.runtime.events import ToolCallError, ToolCallResult
from tui_app.runtime.permissions.decision import ModePolicy
from tui_app.runtime.pipeline import ToolCall, run_call
from tui_app.runtime.results.artifacts import ArtifactStore
from tui_app.tools import web_fetch
from tui_app.tools.web_fetch import WEB_FETCH

PAGE = b"""<!doctype html><html><head><title>Release notes</title><style>body{color:red}</style>
<script>alert("never shown")</script></head><body>
<h1>Version 2.0</h1><p>Faster <b>diffs</b> and a <a href="/changelog">full changelog</a>.</p>
<ul><li>one</li><li>two</li></ul></body></html>"""


class Site(BaseHTTPRequestHandler):
    release = threading.Event()

    def log_message(self, *args) -> None:  # keep the test output clean
        pass

    def send(self, status: int, body: bytes, content_type: str = "text/html; charset=utf-8", **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading at its cap

    def do_GET(self) -> None:
        port = self.server.server_address[1]
        if self.path == "/page":
            self.send(200, PAGE)
        elif self.path == "/same":
            self.send(302, b"", Location="/page")
        elif self.path == "/away":
            self.send(301, b"", Location=f"http://localhost:{port}/page")
        elif self.path == "/huge":
            self.send(200, b"x" * (3 * 1024 * 1024), "text/plain")
        elif self.path == "/long":
            self.send(200, b"<html><body>" + b"<p>paragraph of text</p>" * 20000 + b"</body></html>")
        elif self.path == "/slow":
            self.release.wait(DEADLINE_S)
            self.send(200, b"late")
        elif self.path == "/image":
            self.send(200, b"\x89PNG\r\n\x1a\n" + bytes(100), "image/png")
        else:
            self.send(404, b"<html><body><p>No such page</p></body></html>")


PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


@pytest.fixture(autouse=True)
def no_proxy_variables(monkeypatch) -> None:
    """The loopback site is reached directly unless a test sets a proxy."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Site)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    Site.release.set()
    server.shutdown()
    server.server_close()


async def fetch(url: str, spec=WEB_FETCH, **services):
    env, rec = make_env(spec, policy=ModePolicy(allow={"WebFetch"}))
    env.services.update(services)
    out = await run_call(ToolCall("toolu_w", "WebFetch", {"url": url, "prompt": "What is new?"}), env)
    return out, rec


async def test_html_becomes_markdown_with_the_prompt_echoed(site):
    out, _ = await fetch(f"{site}/page")
    assert isinstance(out, ToolCallResult), out.model_content
    text = out.model_content
    assert text.startswith(f"URL: {site}/page\nStatus: 200 OK · text/html")
    assert "Title: Release notes" in text and "Prompt: What is new?" in text
    assert "# Version 2.0" in text and "Faster **diffs**" in text and "[full changelog](/changelog)" in text
    assert "- one\n- two" in text
    assert "alert" not in text and "color:red" not in text
    assert out.display.kind == "text" and "# Version 2.0" in out.display.text


async def test_a_same_host_redirect_is_followed(site):
    out, _ = await fetch(f"{site}/same")
    assert isinstance(out, ToolCallResult) and f"URL: {site}/page" in out.model_content


async def test_a_redirect_to_another_host_is_reported_not_followed(site):
    out, _ = await fetch(f"{site}/away")
    assert isinstance(out, ToolCallResult)
    port = site.rsplit(":", 1)[1]
    assert out.model_content.startswith("REDIRECT DETECTED")
    assert f"Redirect URL: http://localhost:{port}/page" in out.model_content
    assert "Status: 301 Moved Permanently" in out.model_content
    assert "# Version 2.0" not in out.model_content


async def test_the_body_is_cut_at_the_size_cap(site, monkeypatch):
    monkeypatch.setenv("VIGIL_WEBFETCH_MAX_BYTES", str(256 * 1024))
    out, _ = await fetch(f"{site}/huge")
    assert isinstance(out, ToolCallResult)
    assert "cut at 256.0KB, WebFetch's size cap" in out.model_content


async def test_a_large_page_goes_to_an_artifact(site, tmp_path):
    out, rec = await fetch(f"{site}/long", artifacts=ArtifactStore("s", tmp_path))
    assert isinstance(out, ToolCallResult) and out.strategy == "artifact"
    assert out.model_content.startswith("<persisted-output>")
    assert "Prompt: What is new?" in out.model_content  # the head of the page is in the preview
    [artifact] = out.artifacts
    assert Path(artifact.path).read_text(encoding="utf-8").count("paragraph of text") == 20000
    assert rec.of("ArtifactPersisted")


async def test_a_slow_server_times_out(site):
    quick = dataclasses.replace(WEB_FETCH, timeout=TimeoutPolicy(default_ms=300))
    out, _ = await fetch(f"{site}/slow", quick)
    assert isinstance(out, ToolCallError) and (out.phase, out.code) == ("timeout", "timeout")
    assert out.model_content == "Tool execution timed out after 300ms"


async def test_binary_content_and_http_errors_are_clear_errors(site):
    out, _ = await fetch(f"{site}/image")
    assert isinstance(out, ToolCallError) and "image/png" in out.model_content and "not text" in out.model_content
    out, _ = await fetch(f"{site}/nowhere")
    assert isinstance(out, ToolCallError) and out.code == "http_error"
    assert "HTTP 404 Not Found" in out.model_content and "No such page" in out.model_content


@pytest.mark.parametrize(("url", "words"), [
    ("file:///etc/passwd", "only http:// and https://"),
    ("ftp://127.0.0.1/x", "only http:// and https://"),
    ("http://10.1.2.3/", "private-network"),
    ("http://192.168.0.1:8080/admin", "private-network"),
    ("http://172.20.0.5/", "private-network"),
    ("http://169.254.169.254/latest/meta-data/", "link-local"),
    ("http://[fd00::1]/", "private-network"),
    ("http://[fe80::1]/", "link-local"),
    ("http://[::ffff:10.0.0.1]/", "private-network"),
    ("http://user:secret@127.0.0.1/", "user name or password"),
])
async def test_refused_before_any_connection(url, words):
    out, rec = await fetch(url)
    assert isinstance(out, ToolCallError) and out.phase == "precondition"
    assert words in out.model_content
    assert rec.of("ToolCallStarted") == []


async def test_a_name_that_resolves_to_a_private_address_is_refused(monkeypatch):
    async def intranet_dns(host: str, port: int) -> list[str]:
        # no DNS server here can answer with a private address, so this one answer is given
        return ["10.0.0.7"] if host == "intranet.example" else []

    monkeypatch.setattr(web_fetch, "getaddrinfo", intranet_dns)
    out, _ = await fetch("http://intranet.example/wiki")
    assert isinstance(out, ToolCallError) and out.phase == "precondition"
    assert "intranet.example (10.0.0.7)" in out.model_content and "private-network" in out.model_content


async def test_localhost_resolves_to_loopback_and_is_allowed(site):
    port = site.rsplit(":", 1)[1]
    out, _ = await fetch(f"http://localhost:{port}/page")
    assert isinstance(out, ToolCallResult) and "# Version 2.0" in out.model_content


def test_webfetch_is_read_only_but_not_effectively_so():
    flags = WEB_FETCH.flags
    assert flags.read_only and not flags.effectively_read_only and not flags.runs_in_parallel
    assert WEB_FETCH.permission.kind == "web" and WEB_FETCH.permission.rule_key == "url"
    assert WEB_FETCH.timeout.default_ms == 60_000


class ForwardProxy(BaseHTTPRequestHandler):
    """A plain HTTP forward proxy: it takes absolute-form requests and fetches them itself."""

    seen: ClassVar[list[str]] = []

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        ForwardProxy.seen.append(self.path)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("proxy-connection", "connection")}
        try:
            with opener.open(urllib.request.Request(self.path, headers=headers), timeout=10) as upstream:
                status, body, kind = upstream.status, upstream.read(), upstream.headers.get("Content-Type", "")
        except urllib.error.HTTPError as exc:
            status, body, kind = exc.code, exc.read(), exc.headers.get("Content-Type", "")
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def proxy() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), ForwardProxy)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    ForwardProxy.seen = []
    yield f"http://user:secret@127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


async def test_http_proxy_is_used_and_no_proxy_bypasses_it(site, proxy, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", proxy)
    out, _ = await fetch(f"{site}/page")
    assert isinstance(out, ToolCallResult), out.model_content
    assert "# Version 2.0" in out.model_content
    assert ForwardProxy.seen == [f"{site}/page"]

    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    out, _ = await fetch(f"{site}/page")
    assert isinstance(out, ToolCallResult) and ForwardProxy.seen == [f"{site}/page"]  # straight to the site


async def test_through_a_proxy_private_addresses_are_still_refused_and_a_dead_proxy_is_named(proxy, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", proxy)
    out, _ = await fetch("http://10.1.2.3/admin")
    assert isinstance(out, ToolCallError) and "it is a private-network address" in out.model_content
    assert ForwardProxy.seen == []
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))
    port = dead.getsockname()[1]
    dead.close()
    monkeypatch.setenv("HTTP_PROXY", f"http://user:secret@127.0.0.1:{port}")
    out, _ = await fetch("http://127.0.0.1:9/page")
    assert isinstance(out, ToolCallError)
    assert f"through the proxy http://127.0.0.1:{port}" in out.model_content and "secret" not in out.model_content
