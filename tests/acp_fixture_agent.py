"""An ACP agent for tests, on the official SDK's agent side (`acp.run_agent`), driven by a script.

    python tests/acp_fixture_agent.py SCRIPT.json

The script: {"modes": {"current": "auto", "available": [{"id", "name"}…]}, "commands": [{"name",
"description", "hint"}…], "models": [{"value", "name"}…] (a model config option), "load": bool
(session/load: replays a little history, then goes on from the second turn), "turns": [[action…]…]}.
Each session/prompt plays the next turn's actions in order:

  {"say": "text", "message_id": "m1"}      agent_message_chunk(s)
  {"think": "text"}                        agent_thought_chunk(s)
  {"plan": [{"content", "status", "priority"}…]}
  {"tool_call": CALL} / {"update": CALL}   tool_call / tool_call_update; CALL: id, title, kind, status,
                                           locations [paths], raw_input, diffs [{path, old, new}], text,
                                           terminal (a terminal's variable name), output (raw_output)
  {"ask": CALL, "options": [[id, kind]…], "as": "var",
   "if_allowed": [...], "if_rejected": [...], "if_cancelled": [...]}
                                           session/request_permission; var = chosen option id or "cancelled"
  {"read": {"path", "line", "limit"}, "as": "var"}      fs/read_text_file (var = text or "ERROR: …")
  {"write": {"path", "content"}, "as": "var"}           fs/write_text_file (var = "ok" or "ERROR: …")
  {"terminal": {"command", "args", "env", "cwd", "limit"}, "as": "t", "wait": true, "release": true}
                                           terminal/create (t = its id, t.output / t.exit = what it gave)
  {"output": "t"} {"kill": "t"} {"release": "t"} {"wait": "t"}
  {"report": "text with {var}"}            a message chunk with variables filled in
  {"mode": "id"}                           current_mode_update
  {"commands": [...]}                      available_commands_update
  {"wait_cancel": true}                    wait until session/cancel comes (the turn ends cancelled)
  {"sleep": seconds} {"stop": "max_tokens"} {"stderr": "text"} {"stdout": "a line that is not JSON"}
  {"exit": code, "marker": path}           the process exits (once: not when the marker file exists)

Every request the client answered is also appended, as JSON lines, to $ACP_FIXTURE_LOG.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import acp
from acp import RequestError
from acp.schema import (
    AgentCapabilities,
    AvailableCommand,
    AvailableCommandsUpdate,
    ContentToolCallContent,
    CurrentModeUpdate,
    EnvVariable,
    FileEditToolCallContent,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PermissionOption,
    PlanEntry,
    PromptResponse,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    TerminalToolCallContent,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    UnstructuredCommandInput,
)

DEFAULT_OPTIONS = [["allow-once", "allow_once"], ["allow-always", "allow_always"], ["reject", "reject_once"]]


def log(entry: dict[str, Any]) -> None:
    path = os.environ.get("ACP_FIXTURE_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry) + "\n")


class FixtureAgent:
    def __init__(self, script: dict[str, Any]) -> None:
        self.script = script
        self.turns = list(script.get("turns", []))
        self.conn: Any = None
        self.session_id = "fixture-session-1"
        self.cancelled = asyncio.Event()
        self.vars: dict[str, Any] = {}
        modes = script.get("modes") or {}
        self.mode = modes.get("current")
        self.model = (script.get("models") or [{"value": None}])[0]["value"]

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
                         **kw: Any) -> InitializeResponse:
        caps = client_capabilities
        log({"initialize": {"fs_read": bool(caps and caps.fs and caps.fs.read_text_file),
                            "fs_write": bool(caps and caps.fs and caps.fs.write_text_file),
                            "terminal": bool(caps and caps.terminal),
                            "client": getattr(client_info, "name", None)}})
        return InitializeResponse(protocol_version=acp.PROTOCOL_VERSION, agent_capabilities=AgentCapabilities(
            load_session=bool(self.script.get("load"))), agent_info=acp.schema.Implementation(
                name="fixture-agent", title="Fixture agent", version="1.2.3"))

    def _modes(self) -> SessionModeState | None:
        modes = self.script.get("modes")
        if not modes:
            return None
        return SessionModeState(current_mode_id=self.mode, available_modes=[
            SessionMode(id=m["id"], name=m.get("name", m["id"]), description=m.get("description"))
            for m in modes["available"]])

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None, **kw: Any) -> NewSessionResponse:
        log({"new_session": {"cwd": cwd, "meta": kw}})
        if self.script.get("commands"):
            asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(
                self._commands(self.script["commands"])))
        return NewSessionResponse(session_id=self.session_id, modes=self._modes(), config_options=self._options())

    def _options(self) -> list[Any] | None:
        models = self.script.get("models")
        if not models:
            return None
        return [SessionConfigOptionSelect(id="model", name="Model", category="model", type="select",
                                          current_value=self.model, options=[
                                              SessionConfigSelectOption(value=m["value"], name=m["name"])
                                              for m in models])]

    async def set_config_option(self, config_id: str, session_id: str, value: Any, **kw: Any) -> Any:
        log({"set_config_option": {config_id: value}})
        if config_id == "model":
            self.model = value
        return SetSessionConfigOptionResponse(config_options=self._options() or [])

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
                           **kw: Any) -> LoadSessionResponse:
        log({"load_session": {"cwd": cwd, "session_id": session_id}})
        self.session_id = session_id
        if self.turns:
            self.turns.pop(0)  # the loaded session played its first turn already
        await self.conn.session_update(self.session_id, acp.update_user_message_text("an old prompt"))
        await self.conn.session_update(self.session_id, acp.update_agent_message_text("an old answer"))
        return LoadSessionResponse(modes=self._modes())

    async def set_session_mode(self, session_id: str, mode_id: str, **kw: Any) -> SetSessionModeResponse:
        log({"set_mode": mode_id})
        self.mode = mode_id
        return SetSessionModeResponse()

    async def authenticate(self, method_id: str, **kw: Any) -> None:
        return None

    async def cancel(self, session_id: str, **kw: Any) -> None:
        log({"cancel": session_id})
        self.cancelled.set()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        pass

    async def prompt(self, prompt: list[Any], session_id: str, **kw: Any) -> PromptResponse:
        self.cancelled.clear()
        texts = [getattr(block, "text", "") for block in prompt]
        log({"prompt": texts})
        actions = self.turns.pop(0) if self.turns else [{"say": "(the script has no more turns)"}]
        stop = await self.play(actions)
        return PromptResponse(stop_reason=stop)

    # ---- actions ----------------------------------------------------------------------------

    async def play(self, actions: list[dict[str, Any]]) -> str:
        for action in actions:
            if self.cancelled.is_set():
                return "cancelled"
            stop = await self.act(action)
            if stop is not None:
                return stop
        return "cancelled" if self.cancelled.is_set() else "end_turn"

    async def update(self, update: Any) -> None:
        await self.conn.session_update(self.session_id, update)

    async def act(self, a: dict[str, Any]) -> str | None:
        if "say" in a:
            text = a["say"]
            for i in range(0, len(text), 7):
                chunk = acp.update_agent_message_text(text[i:i + 7])
                if a.get("message_id"):
                    chunk = chunk.model_copy(update={"message_id": a["message_id"]})
                await self.update(chunk)
        elif "think" in a:
            await self.update(acp.update_agent_thought_text(a["think"]))
        elif "report" in a:
            await self.update(acp.update_agent_message_text(a["report"].format(**self.vars)))
        elif "plan" in a:
            await self.update(acp.update_plan([PlanEntry(content=e["content"], status=e.get("status", "pending"),
                                                         priority=e.get("priority", "medium")) for e in a["plan"]]))
        elif "tool_call" in a:
            await self.update(ToolCallStart(session_update="tool_call", **self.call_fields(a["tool_call"])))
        elif "update" in a:
            await self.update(ToolCallProgress(session_update="tool_call_update", **self.call_fields(a["update"])))
        elif "ask" in a:
            return await self.ask(a)
        elif "read" in a:
            spec = a["read"]
            try:
                response = await self.conn.read_text_file(session_id=self.session_id, path=spec["path"],
                                                          line=spec.get("line"), limit=spec.get("limit"))
                self.vars[a.get("as", "read")] = response.content
            except RequestError as exc:
                self.vars[a.get("as", "read")] = f"ERROR: {exc} {exc.data}"
            log({"read": spec["path"], "got": self.vars[a.get("as", "read")]})
        elif "write" in a:
            spec = a["write"]
            try:
                await self.conn.write_text_file(session_id=self.session_id, path=spec["path"],
                                                content=spec["content"])
                self.vars[a.get("as", "write")] = "ok"
            except RequestError as exc:
                self.vars[a.get("as", "write")] = f"ERROR: {exc} {exc.data}"
            log({"write": spec["path"], "got": self.vars[a.get("as", "write")]})
        elif "terminal" in a:
            await self.terminal(a)
        elif "output" in a:
            await self.output(a["output"])
        elif "wait" in a:
            await self.wait(a["wait"])
        elif "kill" in a:
            await self.conn.kill_terminal(session_id=self.session_id, terminal_id=self.vars[a["kill"]])
            log({"killed": a["kill"]})
        elif "release" in a:
            await self.conn.release_terminal(session_id=self.session_id, terminal_id=self.vars[a["release"]])
        elif "mode" in a:
            self.mode = a["mode"]
            await self.update(CurrentModeUpdate(session_update="current_mode_update", current_mode_id=a["mode"]))
        elif "commands" in a:
            await self._commands(a["commands"])
        elif "wait_cancel" in a:
            await self.cancelled.wait()
            return "cancelled"
        elif "sleep" in a:
            await asyncio.sleep(a["sleep"])
        elif "stop" in a:
            return a["stop"]
        elif "exit" in a:
            marker = a.get("marker")
            if marker and os.path.exists(marker):
                return None  # died once already: this run of the agent lives
            if marker:
                Path(marker).write_text("died")
            sys.stderr.write("fixture agent exits on purpose\n")
            sys.stderr.flush()
            os._exit(a["exit"])
        elif "stdout" in a:  # a stray line on the protocol's stream (agents that print debug output)
            os.write(1, (a["stdout"] + "\n").encode())
        elif "stderr" in a:
            sys.stderr.write(a["stderr"] + "\n")
            sys.stderr.flush()
        return None

    async def _commands(self, commands: list[dict[str, Any]]) -> None:
        await self.update(AvailableCommandsUpdate(session_update="available_commands_update", available_commands=[
            AvailableCommand(name=c["name"], description=c.get("description", ""),
                             input=UnstructuredCommandInput(hint=c["hint"]) if c.get("hint") else None)
            for c in commands]))

    def call_fields(self, c: dict[str, Any]) -> dict[str, Any]:
        fields: dict[str, Any] = {"tool_call_id": c["id"]}
        for key in ("title", "kind", "status", "raw_input"):
            if key in c:
                fields[key] = c[key]
        if "output" in c:
            fields["raw_output"] = c["output"]
        if "locations" in c:
            fields["locations"] = [ToolCallLocation(path=p) for p in c["locations"]]
        content: list[Any] = []
        for d in c.get("diffs", []):
            content.append(FileEditToolCallContent(type="diff", path=d["path"], old_text=d.get("old"),
                                                   new_text=d["new"]))
        if "text" in c:
            content.append(ContentToolCallContent(type="content", content=acp.text_block(c["text"])))
        if "terminal" in c:
            content.append(TerminalToolCallContent(type="terminal", terminal_id=self.vars[c["terminal"]]))
        if content:
            fields["content"] = content
        if "title" not in fields and "tool_call" in c:
            fields["title"] = c["id"]
        return fields

    async def ask(self, a: dict[str, Any]) -> str | None:
        fields = self.call_fields(a["ask"])
        fields.setdefault("title", a["ask"]["id"])
        options = [PermissionOption(option_id=i, name=i.replace("-", " "), kind=k)
                   for i, k in a.get("options", DEFAULT_OPTIONS)]
        response = await self.conn.request_permission(session_id=self.session_id, options=options,
                                                      tool_call=acp.schema.ToolCallUpdate(**fields))
        outcome = response.outcome
        chosen = outcome.option_id if outcome.outcome == "selected" else "cancelled"
        self.vars[a.get("as", "answer")] = chosen
        log({"asked": a["ask"]["id"], "answer": chosen})
        kind = next((k for i, k in a.get("options", DEFAULT_OPTIONS) if i == chosen), None)
        branch = ("if_cancelled" if chosen == "cancelled" else
                  "if_allowed" if kind in ("allow_once", "allow_always") else "if_rejected")
        stop = await self.play(a[branch]) if a.get(branch) else None
        return stop if stop != "end_turn" else None

    async def terminal(self, a: dict[str, Any]) -> None:
        spec = a["terminal"]
        name = a.get("as", "t")
        env = [EnvVariable(name=k, value=v) for k, v in (spec.get("env") or {}).items()] or None
        try:
            created = await self.conn.create_terminal(session_id=self.session_id, command=spec["command"],
                                                      args=spec.get("args"), env=env, cwd=spec.get("cwd"),
                                                      output_byte_limit=spec.get("limit"))
        except RequestError as exc:
            self.vars[name] = None
            self.vars[f"{name}_error"] = f"ERROR: {exc} {exc.data}"
            log({"terminal": spec["command"], "error": self.vars[f"{name}_error"]})
            return
        self.vars[name] = created.terminal_id
        log({"terminal": spec["command"], "id": created.terminal_id})
        if a.get("wait"):
            await self.wait(name)
            await self.output(name)
        if a.get("release"):
            await self.conn.release_terminal(session_id=self.session_id, terminal_id=created.terminal_id)

    async def wait(self, name: str) -> None:
        done = await self.conn.wait_for_terminal_exit(session_id=self.session_id, terminal_id=self.vars[name])
        self.vars[f"{name}_exit"] = done.exit_code if done.exit_code is not None else done.signal
        log({"exited": name, "exit_code": done.exit_code, "signal": done.signal})

    async def output(self, name: str) -> None:
        got = await self.conn.terminal_output(session_id=self.session_id, terminal_id=self.vars[name])
        self.vars[f"{name}_output"] = got.output
        self.vars[f"{name}_truncated"] = got.truncated
        log({"output": name, "text": got.output, "truncated": got.truncated,
             "exit_code": got.exit_status.exit_code if got.exit_status else None})


async def main() -> None:
    script = json.loads(Path(sys.argv[1]).read_text())
    await acp.run_agent(FixtureAgent(script))


if __name__ == "__main__":
    asyncio.run(main())
