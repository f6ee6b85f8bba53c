"""Every failure row of the seeds' tables: the model's text, the event, the phase and the code."""

from __future__ import annotations

import asyncio

import pytest

from tests.fakes import SAFE, Out, WorkInput, make_env, timed, work, work_spec
from tui_app.runtime.contract import RawResult, StrictInput, ToolFailure, ToolSpec
from tui_app.runtime.events import ToolCallError, ToolCallResult
from tui_app.runtime.hooks.runner import NoHooks, PreToolUseOutcome
from tui_app.runtime.outcome import project_exception
from tui_app.runtime.pipeline import ToolCall, run_call


class ReadLike(StrictInput):
    file_path: str
    offset: int | None = None
    limit: int | None = None


async def read_like(args: ReadLike, ctx) -> RawResult:
    return RawResult(output=f"read {args.file_path}")


READ_LIKE = ToolSpec(name="Read", description="read", handler=read_like, input_model=ReadLike, flags=SAFE,
                     aliases=("Cat",))


async def call(env, name, data, call_id="toolu_1"):
    return await run_call(ToolCall(call_id, name, data), env)


def only_outcome(rec):
    outcomes = [e for e in rec.events if e.type in ("ToolCallResult", "ToolCallError")]
    assert len(outcomes) == 1, rec.types()
    return outcomes[0]


async def test_unknown_tool_is_not_found_with_no_side_effects():
    env, rec = make_env(READ_LIKE)
    out = await call(env, "Fly", {})
    assert isinstance(out, ToolCallError)
    assert (out.phase, out.code, out.side_effects) == ("lookup", "unknown_tool", "none")
    assert out.model_content == "Tool not found: Fly"
    assert rec.types() == ["ToolCallError"]  # the row does not hang in "queued"


@pytest.mark.parametrize("blank", ["", " ", "\t"])
async def test_blank_tool_name_keeps_the_blank_in_the_message(blank):
    env, rec = make_env(READ_LIKE)
    out = await call(env, blank, {})
    assert out.code == "unknown_tool" and out.phase == "lookup"
    assert out.model_content == f"<tool_use_error>Error: No such tool available: {blank}</tool_use_error>"
    assert only_outcome(rec) is out


async def test_alias_reaches_the_canonical_tool():
    env, _ = make_env(READ_LIKE)
    out = await call(env, "Cat", {"file_path": "a.txt"})
    assert isinstance(out, ToolCallResult) and out.tool == "Read" and out.model_content == "read a.txt"


async def test_hidden_tool_is_not_visible():
    env, _ = make_env(READ_LIKE)
    env.registry.hide("Read")
    out = await call(env, "Read", {"file_path": "a"})
    assert (out.phase, out.code) == ("lookup", "tool_not_visible")


async def test_missing_parameter_in_claude_code_words():
    env, rec = make_env(READ_LIKE)
    out = await call(env, "Read", {})
    assert (out.phase, out.code) == ("validate", "schema_invalid")
    assert out.model_content == (
        "<tool_use_error>InputValidationError: Read failed due to the following issue:\n"
        "The required parameter `file_path` is missing</tool_use_error>"
    )
    assert rec.types() == ["ToolCallError"]


async def test_unexpected_and_wrong_type_parameters_each_get_a_line():
    env, _ = make_env(READ_LIKE)
    out = await call(env, "Read", {"file_path": 7, "offset": "3", "colour": "red"})
    assert out.model_content == (
        "<tool_use_error>InputValidationError: Read failed due to the following issues:\n"
        "An unexpected parameter `colour` was provided\n"
        "The parameter `file_path` type is expected as `string` but provided as `integer`\n"
        "The parameter `offset` type is expected as `integer` but provided as `string`</tool_use_error>"
    )


async def test_other_issues_go_out_as_a_json_list():
    from typing import Literal

    class Mode(StrictInput):
        mode: Literal["fast", "slow"]

    spec = ToolSpec(name="Pick", description="", handler=read_like, input_model=Mode, flags=SAFE)
    env, _ = make_env(spec)
    out = await call(env, "Pick", {"mode": "medium"})
    text = out.model_content
    assert text.startswith("<tool_use_error>InputValidationError: [")
    assert '"code": "invalid_value"' in text and '"path": [\n      "mode"\n    ]' in text


async def test_a_json_string_input_is_parsed_first():
    env, _ = make_env(READ_LIKE)
    out = await call(env, "Read", '{"file_path": "b.txt"}')
    assert isinstance(out, ToolCallResult) and out.model_content == "read b.txt"


async def test_invalid_json_text_is_a_schema_error_the_model_can_correct():
    env, _ = make_env(READ_LIKE)
    out = await call(env, "Read", '{"file_path": ')
    assert (out.phase, out.code, out.retryable) == ("validate", "schema_invalid", True)
    assert "not valid JSON" in out.model_content


class CountingHooks(NoHooks):
    def __init__(self):
        self.pre_calls = 0

    async def pre_tool_use(self, call):
        self.pre_calls += 1
        return PreToolUseOutcome()


class CountingPolicy:
    mode = "default"

    def __init__(self):
        self.asked = 0

    def hides_tool(self, name):
        return False

    def decide(self, query):
        from tui_app.runtime.permissions.decision import PermissionDecision

        self.asked += 1
        return PermissionDecision("allow", "mode")

    def add_rules(self, *a, **k):
        return []


async def test_a_failed_precondition_ends_the_call_before_any_hook_or_permission():
    async def not_read_first(args, ctx):
        raise ToolFailure("File has not been read yet. Read it first before writing to it.")

    spec = work_spec("Edit", validate_input=not_read_first)
    hooks, policy = CountingHooks(), CountingPolicy()
    env, rec = make_env(spec, hooks=hooks, policy=policy)
    out = await call(env, "Edit", {"label": "x"})
    assert (out.phase, out.code) == ("precondition", "precondition_failed")
    assert out.model_content == (
        "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>")
    assert hooks.pre_calls == 0 and policy.asked == 0
    assert "PermissionRequested" not in rec.types() and "ToolCallStarted" not in rec.types()


async def test_a_business_failure_is_wrapped_for_the_model():
    env, _ = make_env(work_spec("Work"))
    out = await call(env, "Work", {"fail": "business"})
    assert (out.phase, out.code) == ("execute", "execution_failed")
    assert out.model_content == "<tool_use_error>the thing is not ready</tool_use_error>"


async def test_a_handler_exception_becomes_execution_failed_with_its_message():
    env, rec = make_env(work_spec("Work"))
    out = await call(env, "Work", {"fail": "crash", "label": "the   report\n\tnow"})
    assert (out.phase, out.code, out.side_effects) == ("execute", "execution_failed", "unknown")
    assert out.model_content == "crashed while working on the report now"  # whitespace collapsed
    assert rec.types() == ["ToolCallStarted", "ToolCallError"]


def test_error_projection_follows_the_cause_chain_at_most_12_deep():
    root = ValueError("disk quota exceeded while writing cache")
    wrapped: BaseException = root
    for _ in range(5):
        outer = RuntimeError("")
        outer.__cause__ = wrapped
        wrapped = outer
    assert project_exception(wrapped) == "disk quota exceeded while writing cache"

    deep: BaseException = ValueError("too deep to reach")
    for _ in range(12):
        outer = RuntimeError("")
        outer.__cause__ = deep
        deep = outer
    assert project_exception(deep) == "RuntimeError"  # the 13th layer is never visited


def test_error_projection_is_at_most_500_characters():
    text = project_exception(RuntimeError("x" * 2000))
    assert len(text) == 500 and text.endswith("…")


async def test_timeout_message_names_the_limit():
    async def slow(args, ctx):
        await asyncio.sleep(5)
        return RawResult(output="late")

    spec = ToolSpec(name="Slow", description="", handler=slow, input_model=WorkInput, flags=SAFE,
                    timeout=timed(50))
    env, rec = make_env(spec)
    out = await call(env, "Slow", {})
    assert (out.phase, out.code) == ("timeout", "timeout")
    assert out.model_content == "Tool execution timed out after 50ms"
    assert rec.types()[-1] == "ToolCallError"


async def test_cancellation_gives_the_tools_own_message():
    started = asyncio.Event()

    async def wait_forever(args, ctx):
        started.set()
        await asyncio.sleep(30)
        return RawResult(output="never")

    spec = ToolSpec(name="Wait", description="", handler=wait_forever, input_model=WorkInput, flags=SAFE,
                    cancellation_message="Waiting was interrupted by the user.")
    env, _rec = make_env(spec)
    task = asyncio.ensure_future(call(env, "Wait", {}))
    await started.wait()
    task.cancel()
    out = await task
    assert (out.phase, out.code, out.side_effects) == ("cancel", "cancelled", "unknown")
    assert out.model_content == "Waiting was interrupted by the user."


async def test_output_that_fails_its_schema_is_output_invalid():
    async def bad(args, ctx):
        return RawResult(output={"value": "not a number"})

    spec = ToolSpec(name="Count", description="", handler=bad, input_model=WorkInput, flags=SAFE,
                    output_model=Out)
    env, _ = make_env(spec)
    out = await call(env, "Count", {})
    assert (out.phase, out.code) == ("output", "output_invalid")
    assert out.model_content == "Tool output failed runtimeOutputSchema validation"


async def test_empty_output_is_named():
    env, _ = make_env(work_spec("Work"))
    out = await call(env, "Work", {"output": ""})
    assert out.model_content == "(Work completed with no output)"


async def test_headless_ask_is_denied_with_no_permission_client():
    env, rec = make_env(work_spec("Work", flags=SAFE.model_copy(update={"needs_approval": True,
                                                                         "read_only": False})))
    out = await call(env, "Work", {})
    assert (out.phase, out.code) == ("permission", "no_permission_client")
    assert out.model_content == "No permission client configured"
    assert rec.types() == ["PermissionRequested", "PermissionResolved", "ToolCallError"]


async def test_jsonschema_tools_get_the_same_words():
    spec = ToolSpec(name="mcp__srv__echo", description="", handler=work, source="mcp", flags=SAFE,
                    input_schema={"type": "object", "properties": {"message": {"type": "string"}},
                                  "required": ["message"], "additionalProperties": False})
    env, _ = make_env(spec)
    out = await call(env, "mcp__srv__echo", {"message": 3, "extra": True})
    assert out.model_content == (
        "<tool_use_error>InputValidationError: mcp__srv__echo failed due to the following issues:\n"
        "An unexpected parameter `extra` was provided\n"
        "The parameter `message` type is expected as `string` but provided as `integer`</tool_use_error>"
    )
    out = await call(env, "mcp__srv__echo", {})
    assert "The required parameter `message` is missing" in out.model_content
