"""WebFetch: GET a page over http(s) and give the model its text (HTML as Markdown).

* Only http:// and https://. Targets on private networks are refused after DNS resolution (a
  name that resolves to 10.x is refused like 10.x itself); loopback is allowed. The connection
  goes to the very address that was checked (Host header and TLS SNI keep the name), so a
  second DNS answer cannot slip a private address in.
* HTTPS_PROXY / HTTP_PROXY / ALL_PROXY (and NO_PROXY) are honoured: through a proxy the name is
  still resolved and checked here first, and the proxy connects to it.
* Redirects on the same host are followed; a redirect to another host is reported to the model,
  which may fetch it with a new call (and a new permission decision).
* The body is read up to a size cap, then the connection is dropped; the timeout is the
  runtime's (60 s by default for this tool).
* HTML becomes Markdown with markdownify (MIT; html2text is GPL-3.0), after scripts and styles
  are removed. The `prompt` is echoed above the content: no second model reads the page here,
  the model answers it from the content. Large pages go to an artifact (result budget).
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import re
import socket
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import Field

from tui_app.runtime.contract import (
    PermissionSpec,
    RawResult,
    StrictInput,
    TimeoutPolicy,
    ToolContext,
    ToolFailure,
    ToolFlags,
    ToolSpec,
)
from tui_app.runtime.display import TextDisplay
from tui_app.runtime.lazy_import import lazy_import
from tui_app.runtime.results import budgets
from tui_app.runtime.results.serialize import format_bytes

if TYPE_CHECKING:
    import httpx
else:  # loaded on first use: a session that never fetches a page never pays for it
    httpx = lazy_import("httpx")

MAX_RESPONSE_BYTES = 10 * 1024 * 1024
MAX_REDIRECTS = 10
DISPLAY_CHARS = 100_000
USER_AGENT = "Vigil/0.1 (WebFetch)"
_REDIRECTS = {301, 302, 303, 307, 308}
_TEXT_TYPES = re.compile(
    r"^(text/|application/(json|xml|javascript|ecmascript|x-javascript|ld\+json|[\w.+-]*\+(json|xml))$)")
_HTML_TYPES = {"text/html", "application/xhtml+xml"}
_DROPPED_TAGS = ("script", "style", "noscript", "template", "svg", "iframe", "object", "embed", "canvas")

DESCRIPTION = "\n".join([
    "Fetches a URL (http or https) and returns its content, HTML converted to Markdown, together with your "
    "prompt. No other model reads the page: answer the prompt yourself from the content.",
    "",
    "- Redirects to another host are not followed: the result names the new URL; fetch it with a new call.",
    "- Private-network addresses are refused (loopback is allowed). Large pages are saved to an artifact "
    "and the result shows where, with a preview.",
    "- Read-only, but it reaches the network: it asks for approval unless a rule allows the domain.",
])


class WebFetchInput(StrictInput):
    url: str = Field(description="The URL to fetch (http:// or https://)")
    prompt: str = Field(description="What you want to learn from the page")


# ---- where we may connect ------------------------------------------------------------------------

def parse_url(raw: str) -> httpx.URL:
    try:
        url = httpx.URL(raw.strip())
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise ToolFailure(f"Invalid URL {raw!r}: {exc}") from None
    if url.scheme not in ("http", "https"):
        shown = f"{url.scheme}://" if url.scheme else "URLs without a scheme"
        raise ToolFailure(f"WebFetch fetches only http:// and https:// URLs, not {shown} ({raw}).")
    if not url.host:
        raise ToolFailure(f"Invalid URL {raw!r}: it names no host.")
    if url.userinfo:
        raise ToolFailure("WebFetch does not fetch URLs that carry a user name or password.")
    return url


def refusal_of(address: str) -> str | None:
    """Why an address may not be fetched, or None. Loopback yes; private, link-local, unique-local,
    shared, reserved, multicast or unspecified no."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return None
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_private or not ip.is_global or ip.is_multicast:
        return "a private-network address"
    return None


def _port(url: httpx.URL) -> int:
    return url.port or (443 if url.scheme == "https" else 80)


async def getaddrinfo(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def allowed_addresses(url: httpx.URL) -> list[str]:
    """Every address the host resolves to, all of them checked (one bad answer refuses)."""
    host = url.host
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
        addresses = [host]
    except ValueError:
        try:
            addresses = await getaddrinfo(host, _port(url))
        except OSError as exc:
            raise ToolFailure(f"Could not resolve {host}: {exc.strerror or exc}") from None
    for address in addresses:
        reason = refusal_of(address)
        if reason is not None:
            name = host if address == host else f"{host} ({address})"
            raise ToolFailure(f"WebFetch refuses {name}: it is {reason}. Only public addresses and loopback "
                              "may be fetched.", retryable=False)
    if not addresses:
        raise ToolFailure(f"Could not resolve {host}: no address.")
    return addresses


def same_site(old: httpx.URL, new: httpx.URL) -> bool:
    """Followed without asking: same host and port, or the same host moving from http to https."""
    if old.host.lower() != new.host.lower():
        return False
    if old.scheme == new.scheme:
        return _port(old) == _port(new)
    return old.scheme == "http" and new.scheme == "https" and old.port is None and new.port is None


# ---- one GET ----------------------------------------------------------------------------------------

@dataclass
class Fetched:
    url: httpx.URL
    status: int
    reason: str
    content_type: str
    charset: str | None
    body: bytes
    cut: bool
    location: str | None


def max_bytes() -> int:
    try:
        return max(1, int(os.environ.get("VIGIL_WEBFETCH_MAX_BYTES", MAX_RESPONSE_BYTES)))
    except ValueError:
        return MAX_RESPONSE_BYTES


def proxy_for(url: httpx.URL) -> str | None:
    """The proxy the environment names for this URL, None to connect directly."""
    import urllib.request

    proxies = urllib.request.getproxies_environment()
    if proxies.get("no") and urllib.request.proxy_bypass_environment(url.host, proxies):
        return None
    return proxies.get(url.scheme) or proxies.get("all")


def shown_proxy(proxy: str) -> str:
    """A proxy as an error message may show it: without its credentials."""
    parsed = httpx.URL(proxy)
    return f"{parsed.scheme}://{parsed.host}" + (f":{parsed.port}" if parsed.port else "")


class Clients:
    """One HTTP client per proxy (None: direct), closed together."""

    def __init__(self, **options: Any) -> None:
        self.options = options
        self.made: dict[str | None, httpx.AsyncClient] = {}

    def get(self, proxy: str | None) -> httpx.AsyncClient:
        if proxy not in self.made:
            self.made[proxy] = httpx.AsyncClient(proxy=proxy, trust_env=False, follow_redirects=False, **self.options)
        return self.made[proxy]

    async def aclose(self) -> None:
        await asyncio.gather(*(client.aclose() for client in self.made.values()))


async def get_once(clients: Clients, url: httpx.URL, limit: int) -> Fetched:
    addresses = await allowed_addresses(url)
    proxy = proxy_for(url)
    if proxy is not None:  # the proxy connects; the name was checked above all the same
        try:
            return await read_response(clients.get(proxy), url, url, {}, {}, limit)
        except (httpx.ConnectError, httpx.ProxyError) as exc:
            raise ToolFailure(f"Could not fetch {url.host} through the proxy {shown_proxy(proxy)}: {exc}") from None
    last: Exception | None = None
    for address in addresses:
        pinned = url.copy_with(host=address)
        headers = {"Host": url.netloc.decode("ascii")}
        extensions = {"sni_hostname": url.host} if url.scheme == "https" else {}
        try:
            return await read_response(clients.get(None), url, pinned, headers, extensions, limit)
        except httpx.ConnectError as exc:
            last = exc
    raise ToolFailure(f"Could not connect to {url.host}: {last}")


async def read_response(client: httpx.AsyncClient, url: httpx.URL, target: httpx.URL, headers: dict[str, str],
                        extensions: dict[str, Any], limit: int) -> Fetched:
    async with client.stream("GET", target, headers=headers, extensions=extensions) as response:
        body = bytearray()
        cut = False
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > limit:
                del body[limit:]
                cut = True
                break
        mime, _, params = response.headers.get("content-type", "").partition(";")
        charset = re.search(r"charset=[\"']?([\w.:-]+)", params, re.IGNORECASE)
        return Fetched(url, response.status_code, response.reason_phrase, mime.strip().lower(),
                       charset.group(1) if charset else None, bytes(body), cut, response.headers.get("location"))


# ---- content ----------------------------------------------------------------------------------------

def looks_like_text(data: bytes) -> bool:
    sample = data[:4096]
    return b"\x00" not in sample


def html_to_markdown(data: bytes, charset: str | None) -> tuple[str, str]:
    """(title, Markdown) of an HTML page."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(data, "html.parser", from_encoding=charset)
    for tag in soup(_DROPPED_TAGS):
        tag.decompose()
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    if soup.head is not None:
        soup.head.decompose()
    markdown = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
    markdown = re.sub(r"[ \t]+\n", "\n", markdown)
    return title, re.sub(r"\n{3,}", "\n\n", markdown).strip()


def decode_text(data: bytes, charset: str | None) -> str:
    try:
        return data.decode(charset or "utf-8", "replace")
    except LookupError:
        return data.decode("utf-8", "replace")


def content_of(fetched: Fetched) -> tuple[str, str]:
    """(title, text) for the model; refuses what is not text."""
    mime = fetched.content_type
    sniffed_html = fetched.body.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html"))
    if mime in _HTML_TYPES or (not mime and sniffed_html):
        return html_to_markdown(fetched.body, fetched.charset)
    if _TEXT_TYPES.match(mime) or (not mime and looks_like_text(fetched.body)):
        return "", decode_text(fetched.body, fetched.charset)
    raise ToolFailure(f"{fetched.url} returned {mime or 'binary data'} ({format_bytes(len(fetched.body))}), which "
                      "is not text; WebFetch reads HTML and text only.", retryable=False)


# ---- the tool ---------------------------------------------------------------------------------------

def redirect_report(fetched: Fetched, target: httpx.URL, prompt: str) -> RawResult:
    text = "\n".join([
        "REDIRECT DETECTED: the URL redirects to a different host, which WebFetch does not follow on its own.",
        "",
        f"Original URL: {fetched.url}",
        f"Redirect URL: {target}",
        f"Status: {fetched.status} {fetched.reason}",
        "",
        f"To fetch the redirected page, call WebFetch again with url \"{target}\" and the same prompt.",
    ])
    return RawResult(output={"url": str(fetched.url), "code": fetched.status, "codeText": fetched.reason,
                             "redirect": str(target), "prompt": prompt},
                     text=text, display=TextDisplay(title=f"{fetched.status} → {target}", text=text))


def model_text(fetched: Fetched, title: str, content: str, prompt: str) -> str:
    head = [f"URL: {fetched.url}",
            f"Status: {fetched.status} {fetched.reason} · {fetched.content_type or 'unknown type'} · "
            f"{format_bytes(len(fetched.body))}"]
    if title:
        head.append(f"Title: {title}")
    head += [f"Prompt: {prompt}",
             "(No other model has read this page: answer the prompt from the content below.)"]
    if fetched.cut:
        head.append(f"[The response was cut at {format_bytes(len(fetched.body))}, WebFetch's size cap.]")
    return "\n".join(head) + "\n\n---\n\n" + (content or "(the page has no text)")


async def check_fetch(args: WebFetchInput, ctx: ToolContext) -> None:
    await allowed_addresses(parse_url(args.url))


async def web_fetch(args: WebFetchInput, ctx: ToolContext) -> RawResult:
    began = time.perf_counter()
    url = parse_url(args.url)
    limit = max_bytes()
    timeout = httpx.Timeout(30.0, connect=10.0)
    clients = Clients(timeout=timeout,
                      headers={"User-Agent": USER_AGENT, "Accept": "text/html, text/*;q=0.9, */*;q=0.5"})
    try:
        for _ in range(MAX_REDIRECTS + 1):
            fetched = await get_once(clients, url, limit)
            if fetched.status not in _REDIRECTS or not fetched.location:
                break
            target = url.join(fetched.location)
            if not same_site(url, target):
                return redirect_report(fetched, target, args.prompt)
            ctx.progress.message(f"{fetched.status} → {target}")
            url = target
        else:
            raise ToolFailure(f"Too many redirects (more than {MAX_REDIRECTS}) from {args.url}.")
    finally:
        await clients.aclose()
    title, content = await asyncio.to_thread(content_of, fetched)
    if fetched.status >= 400:
        raise ToolFailure(f"HTTP {fetched.status} {fetched.reason} from {fetched.url}.\n\n{content[:2000]}",
                          code="http_error")
    text = model_text(fetched, title, content, args.prompt)
    shown = content if len(content) <= DISPLAY_CHARS else content[:DISPLAY_CHARS] + "\n… (the rest is in the result)"
    output: dict[str, Any] = {
        "url": str(fetched.url), "code": fetched.status, "codeText": fetched.reason, "bytes": len(fetched.body),
        "contentType": fetched.content_type, "result": content, "truncated": fetched.cut,
        "durationMs": int((time.perf_counter() - began) * 1000)}
    return RawResult(output=output, text=text, display=TextDisplay(title=f"{fetched.status} {fetched.url}", text=shown))


WEB_FETCH = ToolSpec(
    name="WebFetch",
    description=DESCRIPTION,
    handler=web_fetch,
    input_model=WebFetchInput,
    # read-only, but it reaches the network: not "effectively read-only", not run in parallel
    flags=ToolFlags(read_only=True, concurrency_safe=False, side_effect_scope="network", needs_approval=True,
                    risk="medium"),
    permission=PermissionSpec(kind="web", rule_key="url", reason="fetches a URL"),
    budget=budgets.WEB_FETCH,
    timeout=TimeoutPolicy(default_ms=60_000),
    validate_input=check_fetch,
    cancellation_message="The user interrupted the fetch.",
)
