"""The project's files as a tree, directories opened on demand (a project of 100k files costs the
nodes the user opens, not more); files changed in this session are marked, and so is every
directory above them. Enter (or a click) on a file posts `FileTree.FileChosen`.

Names come from the disk: labels are Text, never markup.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from widgets.text.line_render import load_css
from widgets.text.untrusted import one_line

#: how a changed file is marked: edited by the agent, created by it, changed outside Vigil
MARKS = {"update": ("●", "bold $warning"), "create": ("+", "bold $success"), "outside": ("◇", "$secondary")}
MAX_CHILDREN = 2000


class FileTree(Tree[str]):
    DEFAULT_CSS = load_css("panels")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("r", "reload", "Reload", show=False)]
    ICON_NODE = "▸ "
    ICON_NODE_EXPANDED = "▾ "

    class FileChosen(Message):
        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = path

    class ReloadWanted(Message):
        pass

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("files", id=id)
        self.show_root = False
        self.guide_depth = 2
        #: directory ("" for the root, else "a/b/") → its entries (names, directories end in "/")
        self.children_of: dict[str, list[str]] = {"": []}
        #: relative path → mark kind
        self.changed: dict[str, str] = {}
        self.listed = False

    # ---- data -------------------------------------------------------------------------------

    def set_files(self, paths: Iterable[str]) -> None:
        """The project's files (relative, "/"-separated); the open directories stay open."""
        children: dict[str, set[str]] = {"": set()}
        for path in [*paths, *self.changed]:
            parent = ""
            for part in path.split("/")[:-1]:
                children.setdefault(parent, set()).add(part + "/")
                parent = f"{parent}{part}/"
                children.setdefault(parent, set())
            children.setdefault(parent, set()).add(path.rsplit("/", 1)[-1])
        self.children_of = {d: sorted(names, key=lambda n: (not n.endswith("/"), n.lower())) for d, names in
                            children.items()}
        self.listed = True
        opened = self._opened()
        line = self.cursor_line
        self.clear()
        self._fill(self.root, "", opened)
        self.cursor_line = max(0, line)  # Enter works at once, on the first entry

    def mark(self, path: str, kind: str) -> None:
        """`path` (relative) changed in this session; a new file joins the tree."""
        if self.changed.get(path) == kind or (self.changed.get(path) == "create" and kind == "update"):
            return
        known = path.rsplit("/", 1)[-1] in self.children_of.get(path.rpartition("/")[0] + "/" if "/" in path else "",
                                                                 [])
        self.changed[path] = kind
        if self.listed and not known:
            self.set_files(self._all_files())
        else:
            self._relabel()

    def clear_marks(self) -> None:
        """No file is marked changed (a replay stepping back marks them again as they were then)."""
        if self.changed:
            self.changed = {}
            self._relabel()

    # ---- nodes ------------------------------------------------------------------------------

    def _fill(self, node: TreeNode[str], directory: str, opened: set[str]) -> None:
        names = self.children_of.get(directory, [])
        for name in names[:MAX_CHILDREN]:
            path = directory + name
            if name.endswith("/"):
                child = node.add(self._label(path), data=path, allow_expand=True)
                if path in opened:
                    self._fill(child, path, opened)
                    child.expand()
            else:
                node.add_leaf(self._label(path), data=path)
        if len(names) > MAX_CHILDREN:
            node.add_leaf(Text(f"… {len(names) - MAX_CHILDREN} more", style="dim"), data=None)

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[str]) -> None:
        node = event.node
        if node.data and not node.children:
            self._fill(node, node.data, set())

    def on_tree_node_selected(self, event: Tree.NodeSelected[str]) -> None:
        path = event.node.data
        if path and not path.endswith("/"):
            event.stop()
            self.post_message(self.FileChosen(path))

    def action_reload(self) -> None:
        self.post_message(self.ReloadWanted())

    def _label(self, path: str) -> Text:
        name = path.rstrip("/").rsplit("/", 1)[-1] + ("/" if path.endswith("/") else "")
        label = Text(one_line(name, 120), style="bold" if path.endswith("/") else "")
        kind = self.changed.get(path) if not path.endswith("/") else self._dir_mark(path)
        if kind is not None:
            glyph, style = MARKS[kind]
            label.append(f" {glyph}", style=_rich_style(self, style))
        return label

    def _dir_mark(self, directory: str) -> str | None:
        kinds = {kind for path, kind in self.changed.items() if path.startswith(directory)}
        return "update" if "update" in kinds or "create" in kinds else "outside" if kinds else None

    def _relabel(self) -> None:
        def walk(node: TreeNode[str]) -> None:
            for child in node.children:
                if child.data:
                    child.set_label(self._label(child.data))
                walk(child)

        walk(self.root)

    def _opened(self) -> set[str]:
        found: set[str] = set()

        def walk(node: TreeNode[str]) -> None:
            for child in node.children:
                if child.data and child.is_expanded:
                    found.add(child.data)
                    walk(child)

        walk(self.root)
        return found

    def _all_files(self) -> list[str]:
        return [directory + name for directory, names in self.children_of.items() for name in names
                if not name.endswith("/")]


def _rich_style(widget: Any, style: str) -> str:
    """A `$variable` style of the theme as a Rich style string (Tree labels are Rich Text)."""
    variables = widget.app.theme_variables
    return " ".join(variables.get(part[1:], "") if part.startswith("$") else part for part in style.split())
