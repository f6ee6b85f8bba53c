"""What the network providers share: one httpx client, a streaming POST, HTTP errors in plain words,
and the retry loop around each request.

A subclass says how a request is encoded (`encode`) and how the response's server-sent events
become stream events (`decode`); everything about the network is here.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx

from tui_app.providers.retry import (
    RETRYABLE_ERROR_TYPES,
    RETRYABLE_STATUS,
    RetryPolicy,
    StreamFailure,
    parse_retry_after,
    with_retries,
)
from tui_app.providers.sse import SSEEvent, iter_sse
from tui_app.runtime.model import ModelRequest, StreamEvent

DEFAULT_TIMEOUT = httpx.Timeout(connect=15.0, read=300.0, write=60.0, pool=15.0)
MAX_ERROR_BODY = 4000

_STATUS_WORDS = {
    400: "the request was rejected", 401: "authentication failed (check the API key)",
    403: "permission denied", 404: "not found (check the base URL and the model name)",
    408: "request timeout", 413: "the request is too large", 422: "the request was rejected",
    429: "rate limited", 500: "server error", 502: "bad gateway", 503: "service unavailable",
    504: "gateway timeout", 529: "overloaded",
}


def error_detail(body: str) -> tuple[str, str]:
    """(error type, message) from an error body in either provider's shape, or its raw text."""
    try:
        data = json.loads(body)
    except ValueError:
        return "", " ".join(body.split())[:300]
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        kind = error.get("type") or error.get("code") or ""
        message = error.get("message") or ""
        return str(kind), str(message)
    if isinstance(error, str):
        return "", error
    if isinstance(data, dict) and isinstance(data.get("message"), str):
        return "", data["message"]
    return "", " ".join(body.split())[:300]


def status_failure(provider: str, status: int, body: str, headers: httpx.Headers) -> StreamFailure:
    kind, message = error_detail(body)
    words = _STATUS_WORDS.get(status, "request failed")
    text = f"{provider} API error {status}: {words}"
    if kind or message:
        text += f" ({': '.join(p for p in (kind, message) if p)})"
    retryable = status in RETRYABLE_STATUS or kind in RETRYABLE_ERROR_TYPES
    return StreamFailure(text, status=status, retryable=retryable, retry_after=parse_retry_after(headers))


def transport_failure(provider: str, url: str, exc: httpx.HTTPError) -> StreamFailure:
    detail = type(exc).__name__ + (f": {exc}" if str(exc) else "")
    if isinstance(exc, httpx.ConnectError):
        text = f"cannot connect to {provider} at {url} ({detail})"
    elif isinstance(exc, httpx.TimeoutException):
        text = f"the {provider} server did not answer in time ({detail})"
    else:
        text = f"the connection to {provider} broke ({detail})"
    return StreamFailure(text, retryable=True)


def decode_json(data: str, provider: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        shown = data if len(data) <= 200 else data[:200] + "…"
        raise StreamFailure(f"{provider} sent a malformed stream event (not JSON): {shown}") from None


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class HttpModel:
    """Base of the network providers (one client per instance, closed by `aclose`)."""

    provider = "http"
    supports_images = True

    def __init__(
        self,
        *,
        model: str,
        base_url: str,
        api_key: str | None = None,
        max_tokens: int | None = None,
        retry: RetryPolicy | None = None,
        timeout: httpx.Timeout | float | None = None,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.max_tokens = max_tokens
        self.retry = retry or RetryPolicy()
        self._client = client or httpx.AsyncClient(timeout=timeout or DEFAULT_TIMEOUT)

    # ---- what a subclass provides ---------------------------------------------------------------

    @property
    def url(self) -> str:
        raise NotImplementedError

    def headers(self) -> dict[str, str]:
        raise NotImplementedError

    def encode(self, request: ModelRequest) -> bytes:
        raise NotImplementedError

    def decode(self, events: AsyncIterator[SSEEvent], request: ModelRequest) -> AsyncIterator[StreamEvent]:
        raise NotImplementedError

    # ---- the request ----------------------------------------------------------------------------

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        body = self.encode(request)
        return with_retries(self.retry, lambda: self._attempt(body, request))

    async def _attempt(self, body: bytes, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        headers = {"content-type": "application/json", "accept": "text/event-stream", **self.headers()}
        try:
            async with self._client.stream("POST", self.url, content=body, headers=headers) as response:
                if response.status_code >= 400:
                    raw = await response.aread()
                    text = raw[:MAX_ERROR_BODY].decode("utf-8", "replace")
                    raise status_failure(self.provider, response.status_code, text, response.headers)
                if "json" in response.headers.get("content-type", ""):
                    raise await self._not_a_stream(response)
                async for event in self.decode(iter_sse(response.aiter_lines()), request):
                    yield event
        except httpx.HTTPError as exc:
            raise transport_failure(self.provider, self.url, exc) from None

    async def _not_a_stream(self, response: httpx.Response) -> StreamFailure:
        """A 200 with a JSON body: an error some proxies send with the wrong status, or a server
        that ignored `stream: true`. Either way there is nothing to stream."""
        text = (await response.aread())[:MAX_ERROR_BODY].decode("utf-8", "replace")
        if '"error"' in text:
            kind, message = error_detail(text)
            retryable = kind in RETRYABLE_ERROR_TYPES
            return StreamFailure(f"{self.provider} API error: {': '.join(p for p in (kind, message) if p)}",
                                 retryable=retryable)
        return StreamFailure(f"{self.provider} answered with a JSON body instead of an event stream "
                             "(does the server support stream: true?)")

    async def aclose(self) -> None:
        await self._client.aclose()
