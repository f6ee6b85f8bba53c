"""The header: session, model, permission mode, what the session is doing, tokens, cwd."""

from __future__ import annotations

from tui_app.runtime.events import (
    AgentConnected,
    ModelStepEnded,
    PermissionModeChanged,
    PermissionRequested,
    PermissionResolved,
    SessionStarted,
    TurnEnded,
    TurnStarted,
)
from tui_app.view_model.header import HeaderState
from widgets.session_header import header_content


def test_the_header_follows_the_session():
    state = HeaderState()
    state.apply(SessionStarted(session_id="s-1", cwd="/w/p", provider="anthropic", model="claude-x",
                               permission_mode="default"))
    assert header_content(state).plain == " Vigil s-1 · claude-x · mode default · idle · tokens 0 in / 0 out · /w/p"
    state.apply(TurnStarted(prompt="go"))
    state.apply(ModelStepEnded(step=1, usage={"input_tokens": 12_300, "output_tokens": 45}))
    state.apply(ModelStepEnded(step=2, usage={"input_tokens": 1_000, "output_tokens": 5}))
    assert "▶ working · tokens 13.3k in / 50 out" in header_content(state).plain
    state.apply(PermissionRequested(request_id="p1", tool="Edit", input={}, input_sha256="0", summary=""))
    assert "◆ waiting for you (1)" in header_content(state).plain
    state.apply(PermissionResolved(request_id="p1", decision="allow", decided_by="user"))
    state.apply(PermissionModeChanged(mode="plan", previous="default"))
    assert "mode plan · ▶ working" in header_content(state).plain
    state.apply(TurnEnded(reason="completed"))
    assert "· idle ·" in header_content(state).plain
    assert "/cwd-label" in header_content(state, "/cwd-label").plain


def test_the_header_names_the_external_agent_and_the_model_it_reports():
    state = HeaderState()
    state.apply(SessionStarted(session_id="s-2", cwd="/w/p", provider="claude-code", model="",
                               permission_mode="default", agent="claude-code"))
    assert header_content(state).plain.startswith(" Vigil s-2 · claude-code its default model · mode default")
    state.apply(AgentConnected(agent="claude-code", version="2.1.332", agent_session_id="u-1", model="opus-x"))
    assert header_content(state).plain.startswith(" Vigil s-2 · claude-code opus-x · mode default")
