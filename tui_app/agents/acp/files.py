"""`fs/read_text_file` and `fs/write_text_file`: the agent's file access, served by Vigil.

A read passes Vigil's Read policy (deny rules, the working directories): when the policy lets it
through it is answered at once, without a row; otherwise it becomes a Read call of its own (the
denial, or the dialog, is in the table like any other). A whole-file read records a baseline in
Vigil's file state.

A write is always a Write call of its own, shown as an edit with its diff: Vigil's policy and
dialog (not asked again when the user already approved exactly this content in the agent's
permission request), then the write under the file's lock, atomically; a file whose baseline says
it changed since the agent read it is not overwritten. The agent hears an error for anything that
was not done.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any, Protocol

from acp import RequestError
from pydantic import Field

from tui_app.runtime.contract import (
    ApprovalPreview,
    PermissionSpec,
    RawResult,
    StrictInput,
    ToolContext,
    ToolFailure,
    ToolFlags,
    ToolSpec,
)
from tui_app.runtime.display import TextDisplay
from tui_app.runtime.files.atomic import write_in
from tui_app.runtime.files.diffing import structured_patch
from tui_app.runtime.files.opened import OpenedFile
from tui_app.runtime.files.state import sha256_hex, stale
from tui_app.runtime.permissions.decision import PermissionQuery
from tui_app.runtime.results import budgets
from tui_app.tools.common import READ_ONLY_FLAGS
from tui_app.tools.file_edits import (
    Current,
    Written,
    check_unchanged_since_preview,
    current_at,
    decode,
    diff_preview,
    encode,
    file_state,
    new_file,
    patch_json,
    place_for_write,
    read_current,
    result_of,
    updated_text,
    write_failure,
)
from tui_app.tools.opened_check import Check, opened_check

if TYPE_CHECKING:
    from tui_app.agents.acp.client_calls import ClientCalls
    from tui_app.agents.calls import CallBook


class FilesLink(Protocol):
    """What the agent's file reads and writes need: the session, the open turn and the calls that
    run them through Vigil's pipeline (docs/architecture.md §11)."""

    session: Any
    calls: CallBook | None
    label: str
    client_calls: ClientCalls


#: a file bigger than this is not sent to the agent whole
MAX_READ_BYTES = 32 * 1024 * 1024


class AgentWriteInput(StrictInput):
    file_path: str = Field(description="The absolute path of the file the agent writes")
    content: str = Field(description="The whole new content")


class AgentReadInput(StrictInput):
    file_path: str = Field(description="The absolute path of the file the agent reads")
    line: int | None = Field(default=None, ge=1, description="The first line to read (1-based)")
    limit: int | None = Field(default=None, ge=0, description="How many lines to read")


def _absolute(path: str) -> None:
    if not os.path.isabs(path):
        raise ToolFailure(f"{path} is not an absolute path (ACP paths are absolute).")
    if "\x00" in path:
        raise ToolFailure("The path contains a NUL byte.")


# ---- the write --------------------------------------------------------------------------------------

async def check_agent_write(args: AgentWriteInput, ctx: ToolContext) -> None:
    _absolute(args.file_path)
    current = await asyncio.to_thread(read_current, args.file_path, None, opened_check(ctx))
    _not_stale(ctx, args.file_path, current)


def _not_stale(ctx: ToolContext, path: str, current: Current) -> None:
    """A file the agent read through Vigil must still be what it read (whoever changed it since,
    the agent would overwrite their change). A file it never read through Vigil has no baseline."""
    base = file_state(ctx).baseline(path)
    if base is None or current.data is None:
        return
    if base.stale is not None or sha256_hex(current.data) != base.sha256:
        raise stale(path, base.stale or "modified")


async def preview_agent_write(data: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
    path = data["file_path"]
    current = await asyncio.to_thread(read_current, path, None, opened_check(ctx))
    return await diff_preview(ctx, "Create" if current.data is None else "Write", path, current, data["content"])


async def agent_write(args: AgentWriteInput, ctx: ToolContext) -> RawResult:
    fs = file_state(ctx)
    path, call_id = args.file_path, ctx.call_id

    check = opened_check(ctx)

    def work() -> Written:
        # one walk to the directory; the file read, checked and replaced there (see file_edits.write_file)
        try:
            place = place_for_write(path, check)
        except OSError as exc:
            raise write_failure(path, exc) from None
        with place:
            try:
                current = current_at(place, path, check)
            except OSError as exc:
                raise write_failure(path, exc) from None
            if current.data is None and check is not None:
                check("edit", new_file(place.real))
            _not_stale(ctx, path, current)
            check_unchanged_since_preview(fs, call_id, path, current)
            old_text = decode(current.data)
            data = encode(args.content)
            if data != current.data:
                fs.record_write(path, data, write_in(place, data, current.mode))
            operation = "create" if current.data is None else "update"
            return Written(path, operation, old_text, args.content, structured_patch(old_text, args.content))

    written = await fs.mutate(path, work)
    text = f"File created successfully at: {path}" if written.operation == "create" else updated_text(written)
    output = {"type": written.operation, "filePath": path, "structuredPatch": patch_json(written.patch)}
    return result_of(written, text, output)


AGENT_WRITE = ToolSpec(
    name="Write", description="The agent writes a file through Vigil (fs/write_text_file)", handler=agent_write,
    input_model=AgentWriteInput, provider_visible=False,
    flags=ToolFlags(read_only=False, concurrency_safe=False, side_effect_scope="workspace", needs_approval=True,
                    risk="medium"),
    permission=PermissionSpec(kind="edit", rule_key="file_path", reason="writes a file"),
    budget=budgets.WRITE_EDIT, validate_input=check_agent_write, prepare_approval=preview_agent_write,
    cancellation_message="The write was interrupted; writes are atomic: the file holds the old or the new content.",
)


# ---- the read ---------------------------------------------------------------------------------------

def read_text(path: str, line: int | None, limit: int | None, check: Check | None = None) -> tuple[str, bytes]:
    """(the lines asked for, the whole file's bytes). The file is opened once and `check` judges
    what was opened before a byte is read (a link flipped after the decision is caught)."""
    try:
        with OpenedFile(path) as opened:
            if opened.who.directory:
                raise IsADirectoryError(path)
            if check is not None:
                check("read", opened.who)
            with opened.read_handle() as handle:
                if os.fstat(handle.fileno()).st_size > MAX_READ_BYTES:
                    raise ToolFailure(f"{path} is larger than {MAX_READ_BYTES // (1024 * 1024)} MB; read it in "
                                      "parts with a tool of your own.")
                data = handle.read()
    except FileNotFoundError:
        raise ToolFailure(f"File does not exist: {path}") from None
    except IsADirectoryError:
        raise ToolFailure(f"{path} is a directory, not a file.") from None
    except PermissionError:
        raise ToolFailure(f"Permission denied: {path}") from None
    except OSError as exc:
        raise ToolFailure(f"Cannot read {path}: {exc.strerror or exc}") from None
    text = decode(data)
    if line is None and limit is None:
        return text, data
    lines = text.splitlines(keepends=True)
    start = (line or 1) - 1
    end = len(lines) if limit is None else start + limit
    return "".join(lines[start:end]), data


def record_read(ctx_or_state: Any, path: str, data: bytes, whole: bool) -> None:
    state = ctx_or_state
    try:
        mtime = os.stat(path).st_mtime_ns
    except OSError:
        mtime = 0
    state.record_read(path=path, data_sha256=sha256_hex(data), size=len(data), mtime_ns=mtime, full=whole)


async def agent_read(args: AgentReadInput, ctx: ToolContext) -> RawResult:
    text, data = await asyncio.to_thread(read_text, args.file_path, args.line, args.limit, opened_check(ctx))
    state = ctx.service("file_state")
    if state is not None:
        record_read(state, args.file_path, data, args.line is None and args.limit is None)
    store = ctx.service("acp_reads")
    if isinstance(store, dict):
        store[ctx.call_id] = text  # the whole text for the agent; the row keeps the budgeted one
    return RawResult(output={"content": text}, text=text, display=TextDisplay(text=text, title=args.file_path))


async def check_agent_read(args: AgentReadInput, ctx: ToolContext) -> None:
    _absolute(args.file_path)


AGENT_READ = ToolSpec(
    name="Read", description="The agent reads a file through Vigil (fs/read_text_file)", handler=agent_read,
    input_model=AgentReadInput, provider_visible=False, flags=READ_ONLY_FLAGS,
    permission=PermissionSpec(kind="read", rule_key="file_path"), budget=budgets.READ,
    validate_input=check_agent_read,
)


def _check_against(session: Any, decision: Any) -> Check | None:
    """The file tools' second look for a read answered without a row: against this decision."""
    guard = session.services.get("path_guard")
    if guard is None:
        return None
    checked = tuple(getattr(decision, "paths", ()))

    def check(kind: str, who: Any) -> None:
        reason = guard("Read", kind, who, checked)
        if reason:
            raise ToolFailure(f"Refused: {reason}.")

    return check


class AgentFiles:
    def __init__(self, agent: FilesLink) -> None:
        self.agent = agent
        self.reads: dict[str, str] = {}

    async def read(self, path: str, line: int | None, limit: int | None) -> str:
        agent = self.agent
        session = agent.session
        data: dict[str, Any] = {"file_path": path}
        if line is not None:
            data["line"] = line
        if limit is not None:
            data["limit"] = limit
        if not os.path.isabs(path) or "\x00" in path:
            raise RequestError.invalid_params({"path": f"{path!r} is not an absolute path"})
        query = PermissionQuery(AGENT_READ, data, READ_ONLY_FLAGS, session.cwd)
        decision = session.policy.decide(query)
        if decision.behavior == "allow":
            check = _check_against(session, decision)
            try:
                text, whole = await asyncio.to_thread(read_text, path, line, limit, check)
            except ToolFailure as failure:
                raise RequestError.resource_not_found(path) if "does not exist" in failure.message else (
                    RequestError.internal_error({"details": failure.message})) from None
            state = session.services.get("file_state")
            if state is not None:
                record_read(state, path, whole, line is None and limit is None)
            return text
        if agent.calls is None or agent.calls.turn_id is None:
            raise RequestError.internal_error({"details": f"Vigil does not let {agent.label} read {path} "
                                                          "outside a turn (its rules ask or deny)"})
        calls = agent.client_calls
        call_id = calls.new_id("read")
        session.services["acp_reads"] = self.reads
        outcome = await calls.run(call_id, "Read", data)
        if outcome.type == "ToolCallError":
            raise RequestError.internal_error({"details": outcome.message})
        return self.reads.pop(call_id, "")

    async def write(self, path: str, content: str) -> None:
        agent = self.agent
        if not os.path.isabs(path) or "\x00" in path:
            raise RequestError.invalid_params({"path": f"{path!r} is not an absolute path"})
        if agent.calls is None or agent.calls.turn_id is None:
            raise RequestError.internal_error({"details": "Vigil takes writes only during a turn"})
        calls = agent.client_calls
        outcome = await calls.run(calls.new_id("write"), "Write", {"file_path": path, "content": content})
        if outcome.type == "ToolCallError":
            raise RequestError.internal_error({"details": outcome.message})
