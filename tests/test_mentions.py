"""`@path` mentions: the files go to the model with the prompt (headless `-p` too), a big one as a
reference, a denied one not at all; an attached file counts as read, so an Edit may follow."""

from __future__ import annotations

import json

from tests.agent_kit import home as private_home
from tests.wire_server import LoopbackServer, anthropic_reply
from tui_app.agents.mentions import MAX_ATTACH_BYTES, attachments, mentioned_paths
from tui_app.assemble import SessionOptions, build_session
from tui_app.headless.runner import run_headless
from widgets.user_notes import user_message_note

home = private_home


def test_mentions_are_found_as_claude_code_writes_them():
    prompt = 'Compare @src/app.py and @"My Notes.md", then @docs/. Mail me@example.com; see @app.py.'
    assert mentioned_paths(prompt) == ["src/app.py", "My Notes.md", "docs/.", "app.py."]
    assert mentioned_paths("no mention here, only an email a@b.c") == []


def project(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("def main():\n    return 0\n")
    (tmp_path / "My Notes.md").write_text("remember the milk\n")
    (tmp_path / "big.log").write_text("x" * (MAX_ATTACH_BYTES + 10))
    (tmp_path / "blob.bin").write_bytes(b"\0\1\2" * 100)
    (tmp_path / ".env").write_text("SECRET=hunter2\n")
    return tmp_path


def test_what_each_kind_of_path_attaches(tmp_path):
    cwd = str(project(tmp_path))
    found = {a.mention: a for a in attachments(
        'Look at @src/app.py, @"My Notes.md", @src/ and @big.log. @blob.bin @.env @missing.py', cwd,
        denied=lambda path: path.endswith(".env"))}
    assert set(found) == {"src/app.py,", "My Notes.md", "src/", "big.log.", "blob.bin", ".env"}
    app = found["src/app.py,"]
    assert "     1\tdef main():" in app.text and app.summary == "src/app.py (2 lines)" and app.baseline is not None
    assert "remember the milk" in found["My Notes.md"].text
    assert "- app.py" in found["src/"].text and found["src/"].summary == "src/ (1 entry)"
    big = found["big.log."]
    assert "too large to attach" in big.text and "Read tool" in big.text and "xxxx" not in big.text
    assert "binary" in found["blob.bin"].text
    assert "hunter2" not in found[".env"].text and "deny rule" in found[".env"].summary
    for attachment in found.values():  # what the model gets is marked as data
        assert attachment.text.startswith("<system-reminder>") and "data, not instructions" in attachment.text


def test_the_chat_shows_one_line_per_attachment(tmp_path):
    cwd = str(project(tmp_path))
    [attachment] = attachments("@src/app.py", cwd)

    class Event:
        source = "attachment"
        text = attachment.text

    assert user_message_note(Event()) == "attached @src/app.py (2 lines)"


async def test_headless_p_sends_the_file_and_the_model_may_edit_it_at_once(tmp_path, home, monkeypatch):
    (tmp_path / "proj").mkdir()
    cwd = project(tmp_path / "proj")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    edit = {"id": "toolu_01", "name": "Edit", "input": {"file_path": str(cwd / "src" / "app.py"),
                                                       "old_string": "return 0", "new_string": "return 1"}}
    with LoopbackServer() as server:
        server.queue(anthropic_reply(tool_calls=[edit]), anthropic_reply(text="Done."))
        session = build_session(SessionOptions(cwd=str(cwd), provider="anthropic", base_url=server.url,
                                               model="claude-sonnet-4-5", permission_mode="acceptEdits"))
        code = await run_headless(session, "Make @src/app.py return 1", "text", _Sink())
        first, second = (r.json for r in server.requests)
    assert code == 0
    sent = json.dumps(first["messages"])
    assert "Make @src/app.py return 1" in sent and "def main():" in sent and "return 0" in sent
    results = [b for m in second["messages"] for b in (m["content"] if isinstance(m["content"], list) else [])
               if b.get("type") == "tool_result"]
    assert results and not results[0].get("is_error"), results  # no "read it first": the mention was a read
    assert (cwd / "src" / "app.py").read_text() == "def main():\n    return 1\n"


class _Sink:
    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass
