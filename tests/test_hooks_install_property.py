"""Install then uninstall over generated Claude Code settings files: any object, any other tools'
hooks, any of the usual layouts (one line, indented by spaces or tabs, escaped or raw unicode,
with or without a final newline). Through the command line, the file comes back byte for byte
(uninstall puts back the bytes install remembered); by the edits alone (a teammate's clone, no
record of the install), it comes back byte for byte whenever install had no empty container to
fill, and else as the same settings without the empty ``hooks`` containers eidetic's entries
filled."""

from __future__ import annotations

import copy
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import console_script
from eidetic.hooks import claude_settings

pytestmark = pytest.mark.slow  # a property test: generated settings files

OUR_EVENTS = ("SessionStart", "UserPromptSubmit", "SessionEnd")
OTHER_EVENTS = ("PreToolUse", "PostToolUse", "Stop", "Notification")

scalars = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=12)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
commands = st.text(min_size=1, max_size=20).filter(lambda c: not claude_settings.OURS.search(c))
hook = st.fixed_dictionaries(
    {"type": st.just("command"), "command": commands}, optional={"timeout": st.integers(1, 60)}
)
group = st.fixed_dictionaries(
    {"hooks": st.lists(hook, min_size=1, max_size=2)}, optional={"matcher": st.text(max_size=8)}
)
hooks = st.dictionaries(st.sampled_from(OUR_EVENTS + OTHER_EVENTS), st.lists(group, max_size=2), max_size=4)
objects = st.builds(
    lambda rest, found: {**rest, **({"hooks": found} if found is not None else {})},
    st.dictionaries(st.text(max_size=8).filter(lambda k: k != "hooks"), values, max_size=4),
    st.none() | hooks,
)
layouts = st.fixed_dictionaries(
    {
        "indent": st.sampled_from([None, 1, 2, 4, "\t"]),
        "ensure_ascii": st.booleans(),
        "spaced": st.booleans(),
        "end": st.sampled_from(["", "\n", "\n\n", "  \n"]),
    }
)


def written(data: dict, layout: dict) -> str:
    separators = (", ", ": ") if layout["spaced"] or layout["indent"] is not None else (",", ":")
    text = json.dumps(data, indent=layout["indent"], ensure_ascii=layout["ensure_ascii"], separators=separators)
    return text + layout["end"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=objects, layout=layouts)
def test_install_then_uninstall_gives_back_any_settings_file_byte_for_byte(cli, env, monkeypatch, data, layout):
    console_script(env / "bin", "eidetic-hook", "eidetic.hooks.client:main")  # on PATH (README, Install)
    monkeypatch.setenv("PATH", f"{env / 'bin'}{os.pathsep}/usr/bin:/bin")
    original = written(data, layout)
    path = Path(tempfile.mkdtemp(dir=env)) / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(original.encode("utf-8"))
    run = cli("hooks", "install", "claude", "--file", str(path), "--json")
    assert run.code == 0, run.err
    assert run.json["added"] == sorted(OUR_EVENTS)
    after = path.read_text(encoding="utf-8")
    assert json.loads(after) == with_ours(data, claude_settings.installed(after))  # nothing else changed
    assert cli("hooks", "install", "claude", "--file", str(path)).code == 0
    assert path.read_text(encoding="utf-8") == after  # twice: nothing more
    removed = cli("hooks", "uninstall", "claude", "--file", str(path), "--json")
    assert removed.code == 0 and removed.json["removed"] == sorted(OUR_EVENTS)
    assert path.read_bytes() == original.encode("utf-8")


@settings(max_examples=300, deadline=None)
@given(data=objects, layout=layouts)
def test_the_edits_alone_remove_exactly_what_they_added(data, layout):
    original = written(data, layout)
    after = claude_settings.with_hooks(original, "eidetic-hook")
    assert json.loads(after) == with_ours(data, claude_settings.installed(after))
    assert claude_settings.with_hooks(after, "eidetic-hook") == after
    back = claude_settings.without_hooks(after)
    if filled_nothing_empty(data):
        assert back == original
    else:
        assert json.loads(back) == without_emptied(data)
    assert claude_settings.installed(back) == {}


def with_ours(data: dict, commands: dict[str, list[str]]) -> dict[str, Any]:
    """``data`` with eidetic's entry last in each of its events, as install writes it."""
    expected = copy.deepcopy(data)
    found = expected.setdefault("hooks", {})
    for event in OUR_EVENTS:
        (command,) = commands[event]
        found.setdefault(event, []).append(
            {"hooks": [{"type": "command", "command": command, "timeout": claude_settings.TIMEOUT}]}
        )
    return expected


def filled_nothing_empty(data: dict) -> bool:
    """Whether each container install added to already held something (the root, ``hooks``, and
    each of its events that eidetic's entry joined)."""
    found = data.get("hooks")
    if not data or found == {}:
        return False
    return found is None or all(found.get(event, [None]) != [] for event in OUR_EVENTS)


def without_emptied(data: dict) -> dict[str, Any]:
    """``data`` without the empty event lists eidetic's entries filled, and without ``hooks`` if
    only they were in it: uninstall removes a container that only eidetic's entries filled."""
    expected = copy.deepcopy(data)
    found = expected.get("hooks")
    if found is None:
        return expected
    for event in OUR_EVENTS:
        if found.get(event) == []:
            del found[event]
    if not found:
        del expected["hooks"]
    return expected
