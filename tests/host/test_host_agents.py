"""External agents in the host: the real Claude Code CLI (pinned in tests/agents, against the
loopback Anthropic server) and an ACP agent (the SDK-side fixture agent), each waiting on an
approval that is answered through the CLI."""

from __future__ import annotations

import json
import sys

from tests.acp_kit import FIXTURE
from tests.cc_kit import cc_reply, tool, trust
from tests.host.test_host_cli import waiting
from tests.host_kit import HostKit
from tests.real_agents import claude_binary
from tests.wire_server import LoopbackServer


def test_a_claude_code_session_in_the_host_asks_and_is_answered_from_the_cli(host: HostKit) -> None:
    claude = claude_binary()
    notes = host.project / "notes.txt"
    notes.write_text("hello world\n")
    trust(host.home, host.project)
    with LoopbackServer() as server:
        host.env.update(
            ANTHROPIC_BASE_URL=server.url,
            ANTHROPIC_API_KEY="sk-test",
            DISABLE_TELEMETRY="1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        )
        host.env.pop("ANTHROPIC_AUTH_TOKEN", None)
        server.queue(
            cc_reply(
                text="Changing it.",
                tool_calls=[tool("toolu_edit", "Edit", file_path=str(notes), old_string="hello", new_string="goodbye")],
            ),
            cc_reply(text="Done: it says goodbye now."),
        )
        out = host.vigil("new", "--agent", "claude-code", "--agent-command", str(claude), "-p", "say goodbye").stdout
        session = out.split()[-1]
        entry = waiting(host, 1)[0]
        assert (entry["session"], entry["agent"], entry["tool"]) == (session, "claude-code", "Edit")
        assert "-hello world" in entry["preview"] and "+goodbye world" in entry["preview"]
        host.vigil("answer", entry["id"], "allow")
        host.wait(lambda: notes.read_text() == "goodbye world\n", "Claude Code's edit")
        host.wait(lambda: host.row(session)["state"] == "idle", "the turn to end")
        events = host.events(session)
        resolved = [e for e in events if e["type"] == "PermissionResolved" and e["call_id"] == "toolu_edit"]
        assert resolved[0]["decided_by"] == "user" and resolved[0]["client"].startswith("cli:")
        assert [e["text"] for e in events if e["type"] == "AssistantText"][-1] == "Done: it says goodbye now."
        host.vigil("end", session)
        assert host.row(session)["state"] == "ended"


def test_an_acp_session_in_the_host_asks_and_is_denied_from_the_cli(host: HostKit) -> None:
    notes = host.project / "notes.txt"
    notes.write_text("hello world\n")
    script = {
        "turns": [
            [
                {
                    "ask": {
                        "id": "c1",
                        "title": "Edit notes.txt",
                        "kind": "edit",
                        "locations": [str(notes)],
                        "diffs": [{"path": str(notes), "old": "hello world\n", "new": "bye\n"}],
                    },
                    "as": "answer",
                    "if_allowed": [{"write": {"path": str(notes), "content": "bye\n"}, "as": "w"}],
                },
                {"report": "answer={answer}"},
            ]
        ]
    }
    script_path = host.root / "acp-script.json"
    script_path.write_text(json.dumps(script))
    settings = host.root / "acp-settings.json"
    settings.write_text(
        json.dumps(
            {
                "agents": {
                    "fixture": {"protocol": "acp", "command": sys.executable, "args": [str(FIXTURE), str(script_path)]}
                }
            }
        )
    )
    out = host.vigil(
        "new", "--agent", "fixture", "--settings", str(settings), "--no-claude-settings", "-p", "edit it"
    ).stdout
    session = out.split()[-1]
    entry = waiting(host, 1)[0]
    assert (entry["session"], entry["agent"], entry["kind"]) == (session, "fixture", "permission")
    assert "+bye" in entry["preview"]
    host.vigil("answer", entry["id"], "deny", "--feedback", "leave it")
    host.wait(lambda: host.row(session)["state"] == "idle", "the turn to end")
    assert notes.read_text() == "hello world\n"
    events = host.events(session)
    assert [e["text"] for e in events if e["type"] == "AssistantText"][-1] == "answer=reject"
    resolved = [e for e in events if e["type"] == "PermissionResolved"]
    assert [(e["decision"], e["client"][:4]) for e in resolved] == [("deny", "cli:")]
