"""`vigil acp` driven by the official ACP SDK's client side (`acp.spawn_agent_process`): a real
process on stdio, a scripted model behind it, a client that answers permission requests and, when
it says so, lends its file system and terminals."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import acp
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    CurrentModeUpdate,
    DeniedOutcome,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from tests.waiting import DEADLINE_S

ROOT = Path(__file__).resolve().parent.parent


class EditorClient:
    """An ACP client as an editor is one: it answers permission requests by kind, and (when it
    advertises them) serves files from its buffers and runs commands in its terminals."""

    def __init__(self, allow_kinds: set[str], buffers: dict[str, str] | None = None) -> None:
        self.allow_kinds = allow_kinds
        self.buffers = buffers or {}
        self.updates: list[Any] = []
        self.asked: list[Any] = []
        self.options: list[list[str]] = []
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []
        self.terminals: dict[str, dict[str, Any]] = {}
        self.started_commands: list[list[str]] = []
        self.on_update: Any = None

    def on_connect(self, conn: Any) -> None:
        pass

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kw: Any):
        self.asked.append(tool_call)
        self.options.append([o.option_id for o in options])
        if tool_call.kind in self.allow_kinds:
            return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="allow-once"))
        reject = next(o.option_id for o in options if o.kind == "reject_once")
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=reject))

    async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
        self.updates.append(update)
        if self.on_update is not None:
            await self.on_update(update)

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
                             **kw: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        return ReadTextFileResponse(content=Path(path).read_text())

    async def write_text_file(self, session_id: str, path: str, content: str, **kw: Any) -> WriteTextFileResponse:
        self.writes.append((path, content))
        self.buffers[path] = content
        Path(path).write_text(content)  # the editor saves
        return WriteTextFileResponse()

    async def create_terminal(self, session_id: str, command: str, args: list[str] | None = None,
                              env: Any = None, cwd: str | None = None, output_byte_limit: int | None = None,
                              **kw: Any) -> CreateTerminalResponse:
        self.started_commands.append([command, *(args or [])])
        process = await asyncio.create_subprocess_exec(command, *(args or []), cwd=cwd, start_new_session=True,
                                                       stdout=asyncio.subprocess.PIPE,
                                                       stderr=asyncio.subprocess.STDOUT)
        terminal = {"process": process, "output": b""}

        async def pump() -> None:
            assert process.stdout is not None
            while chunk := await process.stdout.read(4096):
                terminal["output"] += chunk

        terminal["pump"] = asyncio.ensure_future(pump())
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = terminal
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kw: Any):
        terminal = self.terminals[terminal_id]
        code = await terminal["process"].wait()
        await terminal["pump"]
        return WaitForTerminalExitResponse(exit_code=code if code >= 0 else None,
                                           signal=None if code >= 0 else signal.Signals(-code).name)

    async def terminal_output(self, session_id: str, terminal_id: str, **kw: Any) -> TerminalOutputResponse:
        terminal = self.terminals[terminal_id]
        code = terminal["process"].returncode
        status = None if code is None else TerminalExitStatus(exit_code=code if code >= 0 else None)
        return TerminalOutputResponse(output=terminal["output"].decode(), truncated=False, exit_status=status)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kw: Any) -> None:
        process = self.terminals[terminal_id]["process"]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)

    async def release_terminal(self, session_id: str, terminal_id: str, **kw: Any) -> None:
        await self.kill_terminal(session_id, terminal_id)
        self.terminals[terminal_id]["released"] = True

    def of(self, kind: type) -> list[Any]:
        return [u for u in self.updates if isinstance(u, kind)]

    def call_updates(self, call_id: str) -> list[Any]:
        return [u for u in self.updates if getattr(u, "tool_call_id", None) == call_id]


def script(tmp_path: Path, steps: list[dict[str, Any]]) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"steps": steps}))
    return path


@contextlib.asynccontextmanager
async def vigil_acp(client: EditorClient, tmp_path: Path, steps: list[dict[str, Any]], *flags: str,
                    capabilities: ClientCapabilities | None = None):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "VIGIL_HOME": str(tmp_path / "vigil-home"),
           "ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""}
    async with acp.spawn_agent_process(client, sys.executable, "-m", "tui_app", "acp", "--script",
                                       str(script(tmp_path, steps)), *flags, env=env, cwd=str(tmp_path),
                                       # the SDK gives the agent 2 s to exit after stdin closes, then
                                       # terminates it (and fails if it exited meanwhile): on a loaded
                                       # machine the orderly exit takes longer, and that is what is tested
                                       transport_kwargs={"stderr": None, "limit": 1 << 24,
                                                         "shutdown_timeout": DEADLINE_S}) as (conn, process):
        await asyncio.wait_for(conn.initialize(protocol_version=acp.PROTOCOL_VERSION,
                                               client_capabilities=capabilities or ClientCapabilities()), 60)
        yield conn, process


def project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "notes.txt").write_text("hello world\n")
    return proj


EDIT_THEN_COMMAND = [
    {"thinking": "Read first, then change it.", "text": "Reading the notes.", "tool_calls": [
        {"id": "r1", "name": "Read", "input": {"file_path": "notes.txt"}}]},
    {"expect": ["hello world"], "text": "Changing them and cleaning up.", "tool_calls": [
        {"id": "e1", "name": "Edit", "input": {"file_path": "notes.txt", "old_string": "hello",
                                               "new_string": "goodbye"}},
        {"id": "b1", "name": "Bash", "input": {"command": "touch command-ran.txt"}}]},
    {"expect": ["updated", "denied"], "text": "Edited; the command was refused."},
]


async def test_a_turn_with_an_approved_edit_and_a_rejected_command(tmp_path):
    proj = project(tmp_path)
    client = EditorClient(allow_kinds={"edit"})
    async with vigil_acp(client, tmp_path, EDIT_THEN_COMMAND) as (conn, _process):
        session = await conn.new_session(cwd=str(proj), mcp_servers=[])
        assert session.modes.current_mode_id == "default"
        assert {m.id for m in session.modes.available_modes} >= {"default", "acceptEdits", "plan"}
        response = await asyncio.wait_for(conn.prompt(session_id=session.session_id,
                                                      prompt=[acp.text_block("Update the notes.")]), 120)
    assert response.stop_reason == "end_turn"
    assert (proj / "notes.txt").read_text() == "goodbye world\n"  # the approved edit was applied
    assert not (proj / "command-ran.txt").exists()  # the rejected command never ran
    # asked exactly twice: the edit, with Vigil's diff of what will change, and the command
    edit_ask, bash_ask = client.asked
    assert (edit_ask.tool_call_id, edit_ask.kind, bash_ask.tool_call_id, bash_ask.kind) == (
        "e1", "edit", "b1", "execute")
    (diff,) = edit_ask.content
    assert (diff.type, diff.path, diff.old_text, diff.new_text) == (
        "diff", str(proj / "notes.txt"), "hello world\n", "goodbye world\n")
    assert bash_ask.title == "touch command-ran.txt" and "allow-always" in client.options[1]
    text = "".join(u.content.text for u in client.of(AgentMessageChunk))
    assert text == "Reading the notes.Changing them and cleaning up.Edited; the command was refused."
    assert "".join(u.content.text for u in client.of(AgentThoughtChunk)) == "Read first, then change it."
    # each call announced, then updated to its end
    starts = {u.tool_call_id: u for u in client.of(ToolCallStart)}
    assert {k: v.kind for k, v in starts.items()} == {"r1": "read", "e1": "edit", "b1": "execute"}
    assert [u.status for u in client.call_updates("e1") if u.status] == ["pending", "in_progress", "completed"]
    assert client.call_updates("b1")[-1].status == "failed"
    final_edit = client.call_updates("e1")[-1]
    assert final_edit.content[0].type == "diff" and final_edit.content[0].new_text == "goodbye world\n"


async def test_the_clients_files_and_terminal_are_used_when_it_offers_them(tmp_path):
    proj = project(tmp_path)
    notes = str(proj / "notes.txt")
    # the editor holds an unsaved change: Vigil must read (and edit) what the user sees
    client = EditorClient(allow_kinds={"edit", "execute"}, buffers={notes: "hello from the buffer\n"})
    steps = [{"text": "Reading.", "tool_calls": [{"id": "r1", "name": "Read", "input": {"file_path": "notes.txt"}}]},
             {"expect": ["hello from the buffer"], "text": "Editing.", "tool_calls": [
                 {"id": "e1", "name": "Edit", "input": {"file_path": "notes.txt", "old_string": "buffer",
                                                        "new_string": "editor"}},
                 {"id": "b1", "name": "Bash", "input": {"command": "cat notes.txt; echo from-the-terminal"}}]},
             {"expect": ["hello from the editor", "from-the-terminal"], "text": "Done."}]
    capabilities = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True),
                                      terminal=True)
    async with vigil_acp(client, tmp_path, steps, capabilities=capabilities) as (conn, _process):
        session = await conn.new_session(cwd=str(proj), mcp_servers=[])
        response = await asyncio.wait_for(conn.prompt(session_id=session.session_id,
                                                      prompt=[acp.text_block("edit")]), 120)
    assert response.stop_reason == "end_turn"
    assert notes in client.reads  # Read and Edit asked the editor
    assert client.writes == [(notes, "hello from the editor\n")]  # the edit went through the editor
    assert client.started_commands == [["bash", "-c", "cat notes.txt; echo from-the-terminal"]]
    (terminal,) = client.terminals.values()
    assert terminal["released"]
    embedded = [c for u in client.call_updates("b1") for c in (u.content or []) if c.type == "terminal"]
    assert [c.terminal_id for c in embedded] == ["term-1"]  # the client shows its own live terminal
    assert client.call_updates("b1")[-1].status == "completed"


async def test_cancel_stops_the_running_command_and_the_prompt_ends_cancelled(tmp_path):
    from tests.procs import marker, wait_gone

    proj = project(tmp_path)
    mark = marker()
    steps = [{"text": "Waiting.", "tool_calls": [{"id": "s1", "name": "Bash", "input": {"command": f"sleep {mark}"}}]},
             {"text": "Back again."}]
    client = EditorClient(allow_kinds=set())
    async with vigil_acp(client, tmp_path, steps, "--allowedTools", "Bash(sleep *)") as (conn, _process):
        session = await conn.new_session(cwd=str(proj), mcp_servers=[])

        async def cancel_once_running(update: Any) -> None:
            if isinstance(update, ToolCallProgress) and update.status == "in_progress":
                await conn.cancel(session_id=session.session_id)

        client.on_update = cancel_once_running
        response = await asyncio.wait_for(conn.prompt(session_id=session.session_id,
                                                      prompt=[acp.text_block("wait")]), 120)
        assert response.stop_reason == "cancelled"
        assert wait_gone(mark) == {}  # the command was stopped with the turn
        assert client.call_updates("s1")[-1].status == "failed"
        client.on_update = None
        again = await asyncio.wait_for(conn.prompt(session_id=session.session_id,
                                                   prompt=[acp.text_block("again")]), 120)
        assert again.stop_reason == "end_turn" and client.asked == []


async def test_modes_switch_and_a_session_loads_back_with_its_history(tmp_path):
    proj = project(tmp_path)
    steps = [{"text": "Writing.", "tool_calls": [{"id": "w1", "name": "Write",
                                                  "input": {"file_path": "new.txt", "content": "new\n"}}]},
             {"text": "Written."}]
    client = EditorClient(allow_kinds=set())
    async with vigil_acp(client, tmp_path, steps) as (conn, _process):
        session = await conn.new_session(cwd=str(proj), mcp_servers=[])
        await conn.set_session_mode(session_id=session.session_id, mode_id="acceptEdits")
        response = await asyncio.wait_for(conn.prompt(session_id=session.session_id,
                                                      prompt=[acp.text_block("write it")]), 120)
        assert response.stop_reason == "end_turn"
    assert (proj / "new.txt").read_text() == "new\n" and client.asked == []  # acceptEdits: not asked
    assert [u.current_mode_id for u in client.of(CurrentModeUpdate)] == ["acceptEdits"]

    replayed = EditorClient(allow_kinds=set())
    async with vigil_acp(replayed, tmp_path, [{"text": "unused"}]) as (conn, _process):
        await conn.load_session(cwd=str(proj), session_id=session.session_id, mcp_servers=[])
    assert [u.content.text for u in replayed.of(UserMessageChunk)] == ["write it"]
    assert "".join(u.content.text for u in replayed.of(AgentMessageChunk)) == "Writing.Written."
    assert [u.status for u in replayed.call_updates("w1") if u.status] == ["pending", "completed"]


async def test_a_cancelled_permission_request_denies_the_call(tmp_path):
    proj = project(tmp_path)
    steps = [{"text": "A command.", "tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": "touch x"}}]},
             {"expect": ["denied"], "text": "Refused."}]

    class Cancelling(EditorClient):
        async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kw: Any):
            self.asked.append(tool_call)
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    client = Cancelling(allow_kinds=set())
    async with vigil_acp(client, tmp_path, steps) as (conn, _process):
        session = await conn.new_session(cwd=str(proj), mcp_servers=[])
        response = await asyncio.wait_for(conn.prompt(session_id=session.session_id,
                                                      prompt=[acp.text_block("go")]), 120)
    assert response.stop_reason == "end_turn" and not (proj / "x").exists()
