"""The `@` picker through the whole app: typing `@` lists the project's files (gitignore-aware),
letters narrow them, Tab inserts the path, Enter sends the prompt with the file attached; the
slash-command completion still works beside it."""

from __future__ import annotations

from tests.tui.app_harness import AppUnderTest, started, wait_until
from tests.tui.helpers import screen_text
from tests.tui.test_agent_flows import CALC, agent_session, turn_over
from widgets.mention_menu import MentionMenu
from widgets.slash_menu import SlashMenu

FILES = {"calc.py": CALC, "docs/notes.md": "# notes\n", "build/calc_generated.py": "x = 1\n",
         ".gitignore": "build/\n", "My Notes.txt": "milk\n"}


async def test_at_lists_the_files_narrows_and_inserts_the_chosen_path(tmp_path, monkeypatch):
    app = AppUnderTest(agent_session(tmp_path, monkeypatch, [{"text": "It adds."}], files=FILES))
    async with app.run_test(size=(120, 36)) as pilot:
        await started(pilot)
        menu = app.main.query_one(MentionMenu)
        await pilot.press(*"explain", "space", "@")
        await wait_until(pilot, lambda: menu.shown and "calc.py" in menu.paths, "the picker with the files")
        assert "build/calc_generated.py" not in menu.paths  # .gitignore keeps it out
        assert {"docs/", "docs/notes.md", "My Notes.txt"} <= set(menu.paths)
        await pilot.press("c", "a", "l")
        await wait_until(pilot, lambda: menu.paths[:1] == ["calc.py"], "calc.py first")
        await pilot.press("tab")
        assert app.main.prompt.text == "explain @calc.py " and not menu.shown
        await pilot.press(*"please", "enter")
        await turn_over(pilot, app)
        [attached] = [e for e in app.events_of("UserMessage") if e.source == "attachment"]
        assert "return add(x, x)" in attached.text
        sent = app.session.agent.client.requests[-1].messages
        assert any("return add(x, x)" in getattr(block, "text", "") for m in sent for block in m.content)
        assert "attached @calc.py (6 lines)" in screen_text(app)


async def test_the_picker_keys_and_the_slash_menu_beside_it(tmp_path, monkeypatch):
    app = AppUnderTest(agent_session(tmp_path, monkeypatch, [{"text": "ok"}], files=FILES))
    async with app.run_test(size=(120, 36)) as pilot:
        await started(pilot)
        mentions, slash = app.main.query_one(MentionMenu), app.main.query_one(SlashMenu)
        await pilot.press("@", "n", "o", "t", "e", "s")
        await wait_until(pilot, lambda: mentions.shown and mentions.paths[:1] == ["docs/notes.md"], "the notes")
        await pilot.press("down", "enter")
        assert app.main.prompt.text == '@"My Notes.txt" '  # a path with a space is quoted
        await pilot.press("@", "d", "o", "c")
        await wait_until(pilot, lambda: mentions.paths[:1] == ["docs/"], "the directory")
        await pilot.press("tab")  # a directory stays open for the rest of its path
        await wait_until(pilot, lambda: mentions.shown and mentions.paths[:1] == ["docs/notes.md"], "its files")
        await pilot.press("escape")
        assert not mentions.shown and app.main.prompt.text == '@"My Notes.txt" @docs/'
        await pilot.press("space", "z", "z", "q")
        assert not mentions.shown
        app.main.prompt.load_text("")
        await pilot.press("slash", "c", "l")
        await wait_until(pilot, lambda: slash.shown and "clear" in slash.names, "the slash menu")
        assert not mentions.shown
        await pilot.press("tab")
        assert app.main.prompt.text == "/clear "
