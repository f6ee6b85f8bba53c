"""The diff view: line numbers, unified and side-by-side, word emphasis, hunk navigation, big diffs."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Static

from tests.tui.helpers import screen_lines, style_of
from tests.tui.session_data import stats_diff
from tui_app.runtime.display import FileDiffDisplay
from widgets.diff.view import DiffView


def long_file(lines: int, every: int = 50) -> tuple[str, str]:
    old = [f"value_{i} = compute({i}, factor={i % 7})" for i in range(lines)]
    new = list(old)
    for i in range(10, lines, every):
        new[i] = f"value_{i} = compute({i}, factor={i % 7} + 1)"
    return "\n".join(old) + "\n", "\n".join(new) + "\n"


class DiffApp(App[None]):
    def __init__(self, display: FileDiffDisplay | None = None, **options) -> None:
        super().__init__()
        self.display_model = display
        self.options = options
        self.ready = 0

    def compose(self) -> ComposeResult:
        yield DiffView(self.display_model, cwd="/home/dev/proj", **self.options)

    def on_mount(self) -> None:
        self.query_one(DiffView).focus()

    def on_diff_view_ready(self) -> None:
        self.ready += 1


async def test_unified_shows_old_and_new_line_numbers_and_signs():
    app = DiffApp(stats_diff())
    async with app.run_test(size=(90, 20)) as pilot:
        await pilot.pause()
        lines = screen_lines(app)
        assert lines[0].startswith(" calc/stats.py (update)  +4 −2  ·  hunk 1/1  ·  unified")
        assert lines[1].startswith(" @@ -9,10 +9,12 @@")
        text = "\n".join(lines)
        assert " 12     -     return total(values) / len(values)" in text
        assert "     12 +     return total(values) / max(len(values), 1)" in text
        assert " 15  15   def median(values):" in text


async def test_changed_words_are_emphasised_over_the_line_colour():
    app = DiffApp(stats_diff())
    async with app.run_test(size=(90, 20)) as pilot:
        await pilot.pause()
        word = style_of(app, "max(len").bgcolor
        line = style_of(app, "len(values), 1)").bgcolor
        plain = style_of(app, "def median").bgcolor
        removed_line = style_of(app, "return total(values) / len(").bgcolor
        assert len({word, line, plain, removed_line}) == 4


async def test_code_is_syntax_highlighted():
    app = DiffApp(stats_diff())
    async with app.run_test(size=(90, 20)) as pilot:
        await pilot.pause()
        keyword = style_of(app, "def median").color
        name = style_of(app, "median(values)").color
        number = style_of(app, "% 2:", 2).color
        assert len({keyword, name, number}) == 3


async def test_side_by_side_pairs_old_and_new_and_toggles_back():
    app = DiffApp(stats_diff())
    async with app.run_test(size=(120, 20)) as pilot:
        await pilot.press("s")
        lines = screen_lines(app)
        assert "side by side" in lines[0]
        pair = next(line for line in lines if "len(values)" in line and "│" in line)
        left, right = pair.split("│")
        assert left.strip().startswith("12 -") and right.strip().startswith("12 +")
        assert "max(len(values), 1)" in right
        added_alone = next(line for line in lines if "(ordered[middle - 1]" in line)
        assert added_alone.split("│")[0].strip() == ""
        await pilot.press("s")
        assert "unified" in screen_lines(app)[0]


async def test_hunk_navigation_with_n_p_and_brackets():
    old, new = long_file(600)
    app = DiffApp(FileDiffDisplay(path="calc/values.py", old_text=old, new_text=new))
    async with app.run_test(size=(90, 12)) as pilot:
        view = app.query_one(DiffView)
        await pilot.pause()
        hunks = len(view.model.hunk_starts)
        assert hunks == 12
        await pilot.press("n", "n")
        assert view.current_hunk == 2
        assert "hunk 3/12" in screen_lines(app)[0]
        assert screen_lines(app)[1].startswith(" @@ -108,7 +108,7 @@")
        await pilot.press("right_square_bracket")
        assert view.current_hunk == 3
        await pilot.press("p", "left_square_bracket")
        assert view.current_hunk == 1
        assert screen_lines(app)[1].startswith(" @@ -58,7 +58,7 @@")
        await pilot.press(*["n"] * 20)
        assert view.current_hunk == hunks - 1


async def test_letter_keys_can_be_left_to_the_parent():
    class Parent(App[None]):
        def __init__(self) -> None:
            super().__init__()
            self.pressed: list[str] = []

        BINDINGS = [("n", "mark('n')", "")]  # noqa: RUF012

        def compose(self) -> ComposeResult:
            yield DiffView(stats_diff(), letter_keys=False)

        def on_mount(self) -> None:
            self.query_one(DiffView).focus()

        def action_mark(self, key: str) -> None:
            self.pressed.append(key)

    app = Parent()
    async with app.run_test(size=(90, 12)) as pilot:
        await pilot.press("n", "right_square_bracket")
        assert app.pressed == ["n"]


async def test_a_10000_line_diff_builds_in_a_worker_and_scrolls():
    old, new = long_file(10_000, every=40)
    app = DiffApp()
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.query_one(DiffView)
        view.load(FileDiffDisplay(path="big.py", old_text=old, new_text=new))
        assert not view.is_ready
        assert "preparing the diff of big.py" in screen_lines(app)[1]
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert view.is_ready and app.ready == 1
        assert len(view.model.hunk_starts) == 250
        await pilot.press("end")
        await pilot.pause()
        # the last hunk changes line 9971 and shows three lines of context after it
        assert screen_lines(app)[-1].startswith("9974 9974   value_9973 = compute(9973, factor=5)")


async def test_a_newer_load_wins_over_a_slower_older_one():
    old, new = long_file(5000)
    app = DiffApp()
    async with app.run_test(size=(90, 12)) as pilot:
        view = app.query_one(DiffView)
        view.load(FileDiffDisplay(path="big.py", old_text=old, new_text=new), background=True)
        view.load(stats_diff())
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert view.model.path.endswith("calc/stats.py")


async def test_no_diff_says_why():
    app = DiffApp()
    async with app.run_test(size=(60, 6)) as pilot:
        app.query_one(DiffView).clear("No diff for this call.")
        await pilot.pause()
        assert "No diff for this call." in screen_lines(app)[1]
        assert not app.query(Static)


async def test_a_diff_with_many_rows_shows_at_once_and_is_coloured_from_a_thread():
    old = "".join(f"value_{i} = {i}\n" for i in range(500))
    new = "".join(f"value_{i} = {i + 1}\n" for i in range(500))  # every line replaced: 1,000 rows
    app = DiffApp()
    async with app.run_test(size=(90, 12)) as pilot:
        view = app.query_one(DiffView)
        view.load(FileDiffDisplay(path="values.py", old_text=old, new_text=new))
        assert view.model is not None and view.row_count > 1000  # there to read straight away
        assert not view.is_ready  # the highlighting was not done on the UI thread
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert view.is_ready
