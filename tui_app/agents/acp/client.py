"""The ACP client side Vigil shows the agent (the SDK's `Client` interface): each request is
handed to the part of the driver that serves it. Requests the agent may not make are refused with
a JSON-RPC error, never with a crash."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from acp import RequestError
from acp.schema import (
    CreateTerminalResponse,
    KillTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

if TYPE_CHECKING:
    from tui_app.agents.acp.files import AgentFiles
    from tui_app.agents.acp.permission import PermissionAsker
    from tui_app.agents.acp.terminals import AgentTerminals


class ClientLink(Protocol):
    """What Vigil's side of the connection needs of the agent: which ACP session is its own, and the
    parts that answer the agent's requests (docs/architecture.md §11)."""

    acp_session_id: str | None
    permissions: PermissionAsker
    files: AgentFiles
    terminals: AgentTerminals

    def on_update(self, session_id: str, update: Any) -> None: ...


class VigilClient:
    def __init__(self, agent: ClientLink) -> None:
        self.agent = agent

    def on_connect(self, conn: Any) -> None:
        pass

    def _ours(self, session_id: str) -> None:
        if self.agent.acp_session_id is not None and session_id != self.agent.acp_session_id:
            raise RequestError.invalid_params({"sessionId": f"no session {session_id!r} here"})

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.agent.on_update(session_id, update)

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any],
                                 **kwargs: Any) -> RequestPermissionResponse:
        self._ours(session_id)
        return await self.agent.permissions.request(tool_call, options)

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
                             **kwargs: Any) -> ReadTextFileResponse:
        self._ours(session_id)
        return ReadTextFileResponse(content=await self.agent.files.read(path, line, limit))

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> WriteTextFileResponse:
        self._ours(session_id)
        await self.agent.files.write(path, content)
        return WriteTextFileResponse()

    async def create_terminal(self, session_id: str, command: str, args: list[str] | None = None,
                              env: list[Any] | None = None, cwd: str | None = None,
                              output_byte_limit: int | None = None, **kwargs: Any) -> CreateTerminalResponse:
        self._ours(session_id)
        terminal_id = await self.agent.terminals.create(command, args, env, cwd, output_byte_limit)
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> TerminalOutputResponse:
        self._ours(session_id)
        output, truncated, status = self.agent.terminals.output(terminal_id)
        exit_status = TerminalExitStatus(exit_code=status[0], signal=status[1]) if status is not None else None
        return TerminalOutputResponse(output=output, truncated=truncated, exit_status=exit_status)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str,
                                     **kwargs: Any) -> WaitForTerminalExitResponse:
        self._ours(session_id)
        code, signal = await self.agent.terminals.wait_for_exit(terminal_id)
        return WaitForTerminalExitResponse(exit_code=code, signal=signal)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> KillTerminalResponse:
        self._ours(session_id)
        await self.agent.terminals.kill(terminal_id)
        return KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> ReleaseTerminalResponse:
        self._ours(session_id)
        await self.agent.terminals.release(terminal_id)
        return ReleaseTerminalResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        pass  # agents' own notifications (the Claude adapter's _auth/status_update) say nothing Vigil shows
