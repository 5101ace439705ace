"""Permission prompts people can judge (design G7): where, exactly what, and what the mode means."""

from __future__ import annotations

from pathlib import Path

from desktop.ui.bridge import change_diff
from desktop.ui.permission_dialog import MODE_CONSEQUENCES, PermissionDialog


def test_write_diff_compares_with_the_file_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("one\ntwo\n", encoding="utf-8")
    diff = change_diff("write", {"path": "notes.md", "content": "one\nthree\n"}, str(tmp_path))
    assert "--- a/notes.md" in diff and "-two" in diff and "+three" in diff and " one" in diff
    new = change_diff("write", {"path": "new.txt", "content": "hello\n"}, str(tmp_path))
    assert "--- /dev/null" in new and "+hello" in new


def test_edit_diff_applies_the_replacements_to_the_current_text(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("a = 1\nb = 2\nc = 3\n", encoding="utf-8")
    edits = {"path": "app.py", "edits": [{"oldText": "b = 2", "newText": "b = 20"}]}
    diff = change_diff("edit", edits, str(tmp_path))
    assert "-b = 2" in diff and "+b = 20" in diff and " a = 1" in diff
    assert change_diff("bash", {"command": "ls"}, str(tmp_path)) == ""


def test_the_dialog_shows_directory_full_command_and_the_mode(qtbot) -> None:
    command = "find . -name '*.py' | xargs grep -n TODO " + "--and-a-very-long-option " * 20
    info = {
        "tool": "bash",
        "effect": "execute",
        "arguments": {"command": command},
        "summary": command[:40],
        "mode": "ask",
        "cwd": "/home/me/project",
        "diff": "",
    }
    dialog = PermissionDialog(1, info)
    qtbot.addWidget(dialog)
    assert "/home/me/project" in dialog.findChild(type(dialog.consequence), "permissionSummary").text()
    assert dialog.detail.toPlainText() == command
    assert dialog.consequence.text() == MODE_CONSEQUENCES["ask"]
    assert dialog.deny_button.isDefault()


def test_the_dialog_shows_a_diff_for_write(qtbot) -> None:
    info = {
        "tool": "write",
        "effect": "write",
        "arguments": {"path": "x", "content": "new"},
        "summary": "x",
        "mode": "accept-edits",
        "cwd": "/w",
        "diff": "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new",
    }
    dialog = PermissionDialog(2, info)
    qtbot.addWidget(dialog)
    text = dialog.detail.toPlainText()
    assert "-old" in text and "+new" in text and '"content"' not in text
    assert "commands and external tools ask" in dialog.consequence.text()
