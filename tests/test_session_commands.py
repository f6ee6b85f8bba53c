"""The session port without a screen (docs/architecture.md §13): every command a client may send,
carried out by a real session of the built-in agent (real tools, files and processes) or of an ACP
agent (the fixture agent, a real subprocess): what it changes, the event it emits with the client
that sent it, and the typed refusal where it cannot apply. No Textual is imported here."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.acp_kit import fixture_session
from tests.builtin_kit import Workspace, of
from tests.builtin_kit import workspace as private_workspace
from tests.cc_kit import wait_for
from tui_app.runtime.commands import (
    Accepted,
    AddDirectory,
    AddMemoryNote,
    AnswerApproval,
    AnswerPlan,
    AnswerQuestion,
    Clear,
    Compact,
    EditRule,
    EndSession,
    Interrupt,
    Notify,
    ReconnectMcp,
    Refused,
    RunShell,
    SelectAgentMode,
    SetModel,
    SetPermissionMode,
    SetSystemPrompt,
    SubmitPrompt,
    parse_command,
)
from tui_app.runtime.session import Session

workspace = private_workspace  # the fixture, visible to this module's tests


class Live:
    """A started session, every event it emits, and its controller."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.events: list[Any] = []
        session.subscribe(self.events.append)

    async def __aenter__(self) -> Live:
        await self.session.start()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.session.close()

    async def send(self, command: Any) -> Any:
        return await self.session.controller.handle(command)

    async def idle(self) -> Any:
        return await self.session.controller.wait_idle()

    def of(self, kind: str, **fields: Any) -> list[Any]:
        return of(self.events, kind, **fields)

    async def event(self, kind: str, **fields: Any) -> Any:
        await wait_for(lambda: self.of(kind, **fields), kind)
        return self.of(kind, **fields)[0]


def write_call(path: str, content: str, call_id: str = "toolu_w") -> dict[str, Any]:
    return {"id": call_id, "name": "Write", "input": {"file_path": path, "content": content}}


# ---- turns ----------------------------------------------------------------------------------------

async def test_submit_prompt_starts_a_turn_that_records_its_client_and_a_second_is_refused_while_busy(
        workspace: Workspace):
    steps = [{"text": "Sleeping.", "tool_calls": [{"id": "toolu_s", "name": "Bash",
                                                    "input": {"command": "sleep 30"}}]}, {"text": "Woke."}]
    async with Live(workspace.session(steps, permission_mode="bypassPermissions")) as live:
        reply = await live.send(SubmitPrompt(text="sleep a while", client="tui"))
        assert isinstance(reply, Accepted) and reply.turn_id == "turn-1"
        await live.event("ToolCallStarted")
        busy = await live.send(SubmitPrompt(text="and another", client="host:2"))
        assert isinstance(busy, Refused) and busy.code == "busy"
        assert (await live.send(Interrupt(client="tui"))).ok
        await live.idle()
        [started] = live.of("TurnStarted")
        assert (started.prompt, started.client) == ("sleep a while", "tui")
        [ended] = live.of("TurnEnded")
        assert ended.reason == "interrupted"
        assert live.of("ToolCallError", call_id="toolu_s")[0].code == "cancelled"


async def test_interrupt_with_nothing_running_is_refused(workspace: Workspace):
    async with Live(workspace.session([])) as live:
        reply = await live.send(Interrupt(client="cli"))
        assert isinstance(reply, Refused) and reply.code == "not_found"


async def test_an_unknown_slash_word_is_refused_when_the_client_asks_for_it_and_sent_as_text_otherwise(
        workspace: Workspace):
    async with Live(workspace.session([{"text": "It is a path."}])) as live:
        refused = await live.send(SubmitPrompt(text="/nosuch thing", unknown_command="refuse", client="tui"))
        assert isinstance(refused, Refused) and refused.code == "unknown_command" and "/help" in refused.message
        assert live.of("TurnStarted") == []
        assert (await live.send(SubmitPrompt(text="/etc/hosts is what?", client="cli"))).ok
        await live.idle()
        assert [e.prompt for e in live.of("TurnStarted")] == ["/etc/hosts is what?"]


async def test_compact_summarises_the_conversation_and_says_so_in_an_event(workspace: Workspace):
    workspace.write("a.txt", "alpha\n")
    steps = [{"text": "Reading.", "tool_calls": [{"id": "toolu_r", "name": "Read", "input": {"file_path": "a.txt"}}]},
             {"text": "It says alpha."}, {"text": "<summary>a.txt says alpha.</summary>"}]
    async with Live(workspace.session(steps)) as live:
        assert (await live.send(SubmitPrompt(text="read a.txt"))).ok
        await live.idle()
        reply = await live.send(Compact(instructions="keep the file name", client="sdk"))
        assert reply.ok
        await live.idle()
        [compacted] = live.of("ConversationCompacted")
        assert compacted.trigger == "manual" and "alpha" in compacted.summary


async def test_compact_and_clear_on_an_agent_that_keeps_its_own_conversation_are_refused(tmp_path: Path):
    session, _ = fixture_session(tmp_path, tmp_path, {"turns": []})
    async with Live(session) as live:
        for command in (Compact(client="tui"), Clear(client="tui"), AddMemoryNote(note="x", path="CLAUDE.md")):
            reply = await live.send(command)
            assert isinstance(reply, Refused) and reply.code == "unsupported", command
            assert reply.message  # a sentence the client can show
        assert live.of("ConversationCompacted") == []


async def test_clear_starts_the_model_afresh_and_the_log_keeps_the_old_conversation(workspace: Workspace):
    steps = [{"text": "First answer."}, {"text": "Fresh answer."}]
    async with Live(workspace.session(steps)) as live:
        await live.send(SubmitPrompt(text="one"))
        await live.idle()
        assert (await live.send(Clear(client="tui"))).ok
        [cleared] = live.of("ConversationCompacted", trigger="clear")
        assert cleared is not None
        await live.send(SubmitPrompt(text="two"))
        await live.idle()
        assert [e.prompt for e in live.of("TurnStarted")] == ["one", "two"]


async def test_run_shell_runs_the_users_command_and_its_output_becomes_context(workspace: Workspace):
    async with Live(workspace.session([])) as live:
        empty = await live.send(RunShell(command="  ", client="tui"))
        assert isinstance(empty, Refused) and empty.code == "invalid"
        assert (await live.send(RunShell(command="echo made-by-user > out.txt; echo shown", client="tui"))).ok
        code = await live.idle()
        assert code == 0
        assert (workspace.project / "out.txt").read_text() == "made-by-user\n"
        [context] = [e for e in live.of("UserMessage") if e.source == "shell"]
        assert "shown" in context.text


async def test_add_memory_note_appends_to_a_memory_file_of_the_session_and_nowhere_else(workspace: Workspace):
    async with Live(workspace.session([])) as live:
        target = str(workspace.project / "CLAUDE.md")
        elsewhere = await live.send(AddMemoryNote(note="never here", path=str(workspace.root / "other.md")))
        assert isinstance(elsewhere, Refused) and elsewhere.code == "invalid"
        assert not (workspace.root / "other.md").exists()
        reply = await live.send(AddMemoryNote(note="Run the tests with make test", path=target, client="tui"))
        assert reply.ok
        assert "Run the tests with make test" in Path(target).read_text()


async def test_notify_runs_the_sessions_notification_hooks(workspace: Workspace):
    marker = workspace.root / "notified.json"
    hook = {"type": "command", "command": f"cat > {marker}"}
    settings = {"hooks": {"Notification": [{"hooks": [hook]}]}}
    async with Live(workspace.session([], settings=settings)) as live:
        assert (await live.send(Notify(message="Vigil waits for you", client="tui"))).ok
        # fired and not waited for (a notification never delays what it announces): wait for its effect
        await wait_for(lambda: marker.exists() and marker.read_text().rstrip().endswith("}"), "the hook's output")
        told = json.loads(marker.read_text())
        assert told["hook_event_name"] == "Notification" and told["message"] == "Vigil waits for you"


async def test_end_session_ends_it_and_every_later_command_is_refused(workspace: Workspace):
    session = workspace.session([])
    live = Live(session)
    await session.start()
    assert (await live.send(EndSession(reason="done", client="host:1"))).ok
    assert [e.reason for e in live.of("SessionEnded")] == ["done"]
    later = await live.send(SetPermissionMode(mode="plan", client="host:1"))
    assert isinstance(later, Refused) and later.code == "ended"
    assert (await live.send(EndSession(client="host:1"))).ok  # ending twice is not an error
    await session.close()


# ---- answers --------------------------------------------------------------------------------------

async def test_answer_approval_allows_the_call_records_the_client_and_a_second_answer_is_refused(
        workspace: Workspace):
    steps = [{"text": "Writing.", "tool_calls": [write_call("new.txt", "hello\n")]}, {"text": "Written."}]
    async with Live(workspace.session(steps, interactive=True)) as live:
        await live.send(SubmitPrompt(text="write it"))
        asked = await live.event("PermissionRequested")
        wrong_hash = await live.send(AnswerApproval(request_id=asked.request_id, decision="allow",
                                                    input_sha256="0" * 64, client="phone"))
        assert isinstance(wrong_hash, Refused) and wrong_hash.code == "not_found"
        reply = await live.send(AnswerApproval(request_id=asked.request_id, decision="allow",
                                               input_sha256=asked.input_sha256, client="host:7"))
        assert reply.ok
        again = await live.send(AnswerApproval(request_id=asked.request_id, decision="deny",
                                               input_sha256=asked.input_sha256, client="phone"))
        assert isinstance(again, Refused) and again.code == "not_found"
        await live.idle()
        [resolved] = live.of("PermissionResolved", request_id=asked.request_id)
        assert (resolved.decision, resolved.decided_by, resolved.client) == ("allow", "user", "host:7")
        assert (workspace.project / "new.txt").read_text() == "hello\n"


async def test_a_denial_with_feedback_reaches_the_model_and_nothing_is_written(workspace: Workspace):
    steps = [{"text": "Writing.", "tool_calls": [write_call("new.txt", "hello\n")]},
             {"expect": ["use notes.md instead"], "text": "Understood."}]
    async with Live(workspace.session(steps, interactive=True)) as live:
        await live.send(SubmitPrompt(text="write it"))
        asked = await live.event("PermissionRequested")
        await live.send(AnswerApproval(request_id=asked.request_id, decision="deny", input_sha256=asked.input_sha256,
                                       feedback="use notes.md instead", client="tui"))
        result = await live.idle()
        assert result.reason == "completed"
        assert not (workspace.project / "new.txt").exists()
        assert live.of("PermissionResolved")[0].feedback == "use notes.md instead"


async def test_answer_question_gives_the_model_the_users_choice(workspace: Workspace):
    question = {"question": "Which colour?", "header": "Colour", "multiSelect": False,
                "options": [{"label": "red", "description": "warm"}, {"label": "blue", "description": "cold"}]}
    steps = [{"text": "Asking.", "tool_calls": [{"id": "toolu_q", "name": "AskUserQuestion",
                                                  "input": {"questions": [question]}}]},
             {"expect": ["blue"], "text": "Blue it is."}]
    async with Live(workspace.session(steps, interactive=True)) as live:
        await live.send(SubmitPrompt(text="pick"))
        asked = await live.event("UserQuestionAsked")
        reply = await live.send(AnswerQuestion(request_id=asked.request_id, answers={"Which colour?": "blue"},
                                               client="tui"))
        assert reply.ok
        assert (await live.idle()).reason == "completed"
        [answered] = live.of("UserQuestionAnswered")
        assert answered.answers == {"Which colour?": "blue"} and answered.client == "tui"
        late = await live.send(AnswerQuestion(request_id=asked.request_id, answers={}, client="tui"))
        assert isinstance(late, Refused) and late.code == "not_found"


async def test_answer_plan_leaves_plan_mode_for_the_chosen_mode(workspace: Workspace):
    steps = [{"text": "My plan.", "tool_calls": [{"id": "toolu_p", "name": "ExitPlanMode",
                                                   "input": {"plan": "1. edit a.txt"}}]},
             {"text": "Going on."}]
    async with Live(workspace.session(steps, interactive=True, permission_mode="plan")) as live:
        await live.send(SubmitPrompt(text="plan it"))
        asked = await live.event("PlanApprovalAsked")
        assert asked.plan == "1. edit a.txt"
        assert (await live.send(AnswerPlan(request_id=asked.request_id, decision="acceptEdits", client="tui"))).ok
        await live.idle()
        assert [e.mode for e in live.of("PermissionModeChanged")] == ["acceptEdits"]
        assert live.session.controller.facts().permission_mode == "acceptEdits"


# ---- the session's settings -----------------------------------------------------------------------

async def test_set_permission_mode_changes_the_mode_and_a_mode_that_does_not_exist_is_refused(
        workspace: Workspace):
    async with Live(workspace.session([])) as live:
        reply = await live.send(SetPermissionMode(mode="acceptEdits", client="sdk"))
        assert reply.ok
        [changed] = live.of("PermissionModeChanged")
        assert (changed.mode, changed.previous, changed.client) == ("acceptEdits", "default", "sdk")
        bad = await live.send(SetPermissionMode(mode="yolo", client="sdk"))
        assert isinstance(bad, Refused) and bad.code == "invalid" and "bypassPermissions" in bad.message
        assert live.session.controller.facts().permission_mode == "acceptEdits"


async def test_set_model_changes_the_model_of_later_requests(workspace: Workspace):
    async with Live(workspace.session([])) as live:
        before = live.session.controller.facts().model
        reply = await live.send(SetModel(model="claude-opus-4-1", client="tui"))
        assert reply.ok and reply.data["model"] == "claude-opus-4-1"
        [changed] = live.of("ModelChanged")
        assert (changed.model, changed.previous, changed.client) == ("claude-opus-4-1", before, "tui")
        assert live.session.controller.facts().model == "claude-opus-4-1"
        empty = await live.send(SetModel(model="  "))
        assert isinstance(empty, Refused) and empty.code == "invalid"


async def test_select_agent_mode_is_refused_by_an_agent_without_modes_and_done_by_one_with_them(
        workspace: Workspace, tmp_path: Path):
    async with Live(workspace.session([])) as live:
        reply = await live.send(SelectAgentMode(mode_id="architect"))
        assert isinstance(reply, Refused) and reply.code == "unsupported"
    script = {"modes": {"current": "default", "available": [{"id": "default", "name": "Default"},
                                                            {"id": "architect", "name": "Architect"}]},
              "turns": []}
    session, _ = fixture_session(tmp_path, workspace.project, script)
    async with Live(session) as live:
        assert (await live.send(SelectAgentMode(mode_id="architect", client="tui"))).ok
        await live.event("AgentModeChanged", mode="architect")
        facts = live.session.controller.facts()
        assert facts.agent_mode == "architect" and [m.id for m in facts.agent_modes] == ["default", "architect"]


async def test_set_system_prompt_appends_to_the_agents_system_prompt(workspace: Workspace):
    async with Live(workspace.session([{"text": "Ok."}])) as live:
        assert (await live.send(SetSystemPrompt(append="Always answer in French.", client="sdk"))).ok
        await live.send(SubmitPrompt(text="hi"))
        await live.idle()
        assert live.session.agent.system_prompt.endswith("Always answer in French.")


async def test_add_directory_widens_the_working_directories_and_a_file_is_refused(workspace: Workspace):
    lib = workspace.root / "lib"
    lib.mkdir()
    (workspace.root / "file.txt").write_text("x")
    async with Live(workspace.session([])) as live:
        bad = await live.send(AddDirectory(path=str(workspace.root / "file.txt")))
        assert isinstance(bad, Refused) and bad.code == "invalid"
        reply = await live.send(AddDirectory(path="../lib", client="tui"))
        assert reply.ok
        [changed] = live.of("WorkingDirectoriesChanged")
        assert changed.added == [str(lib.resolve())] and changed.client == "tui"
        assert str(lib.resolve()) in live.session.controller.facts().working_directories


async def test_edit_rule_adds_replaces_and_removes_rules_in_force_and_on_disk(workspace: Workspace):
    async with Live(workspace.session([])) as live:
        facts = live.session.controller.facts()
        local = Path(facts.rule_destinations["localSettings"])
        added = await live.send(EditRule(action="add", behavior="allow", rules=["Bash(make test)"], client="tui"))
        assert added.ok
        assert json.loads(local.read_text())["permissions"]["allow"] == ["Bash(make test)"]
        texts = {(r.behavior, r.text) for r in live.session.controller.facts().rules}
        assert ("allow", "Bash(make test)") in texts
        replaced = await live.send(EditRule(action="replace", behavior="allow", rules=["Bash(make test)"],
                                            replace_with=["Bash(make check)"], client="tui"))
        assert replaced.ok
        assert json.loads(local.read_text())["permissions"]["allow"] == ["Bash(make check)"]
        removed = await live.send(EditRule(action="remove", behavior="allow", rules=["Bash(make check)"]))
        assert removed.ok
        assert json.loads(local.read_text())["permissions"]["allow"] == []
        changes = live.of("RulesChanged")
        assert [(c.added, c.removed) for c in changes] == [
            (["Bash(make test)"], []), (["Bash(make check)"], ["Bash(make test)"]), ([], ["Bash(make check)"])]
        assert changes[0].client == "tui" and changes[0].path == str(local)
        nowhere = await live.send(EditRule(action="add", behavior="deny", rules=["Read"],
                                           destination=str(workspace.root / "elsewhere.json")))
        assert isinstance(nowhere, Refused) and nowhere.code == "invalid"
        assert not (workspace.root / "elsewhere.json").exists()


async def test_reconnect_mcp_of_a_server_the_session_does_not_have_is_refused(workspace: Workspace):
    async with Live(workspace.session([])) as live:
        reply = await live.send(ReconnectMcp(server="nosuch", client="tui"))
        assert isinstance(reply, Refused) and reply.code == "unsupported"
        assert reply.message == "This session has no MCP servers."


def test_commands_are_plain_data_that_round_trip_through_json():
    command = EditRule(action="replace", behavior="allow", rules=["Bash(a)"], replace_with=["Bash(b)"], client="h:1")
    assert parse_command(command.model_dump_json()) == command
    with pytest.raises(ValueError):
        parse_command('{"type": "RunShell"}')  # a command without its fields
    with pytest.raises(ValueError):
        parse_command('{"type": "FormatDisk", "client": "x"}')


def test_this_module_runs_without_textual():
    import subprocess

    code = "import sys, tests.test_session_commands; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).parent.parent)
    assert out.stdout.strip() == "False"
