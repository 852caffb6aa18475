"""The in-session fence against settings that loosen it: paths that reach the fence once resolved (relative,
``~``, ``/proc/*/root``, ``..``, symlinks, globs), extra directories, sockets, a weaker nested sandbox and
plugins. Each must be named by ``missing``; what leaves the fence alone must not be."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tri_agent.acceptance._session import LOCAL, PROJECT, missing, session_settings, write_settings


@pytest.fixture()
def setup(tmp_path: Path) -> tuple[Path, Path, list[Path]]:
    """A fenced project nested three folders deep, so relative paths can climb out of it."""
    home, project = tmp_path / "home", tmp_path / "a" / "b" / "p"
    fence = [tmp_path / "state" / "tri-agent", tmp_path / "exam"]
    for path in (home, project, *fence):
        path.mkdir(parents=True)
    write_settings(project / PROJECT, session_settings(fence))
    assert missing(project, home, fence) == []
    return project, home, fence


def _loosen(project: Path, extra: dict[str, Any]) -> None:
    """What a session can write itself: Claude Code's local settings file, later in the merge."""
    (project / LOCAL).write_text(json.dumps(extra), encoding="utf-8")


def _paths(project: Path, home: Path, fence: list[Path]) -> list[str]:
    """Ways to name the state home (or a folder above it) that only resolution makes equal to it."""
    state, root = fence[0], fence[0].parent.parent
    (root / "link").symlink_to(state.parent, target_is_directory=True)
    return [os.path.relpath(state, project),                      # relative to the project
            os.path.relpath(state, project / ".claude"),          # relative to the settings file's folder
            "./" + os.path.relpath(fence[1], project),            # the exam, ./-relative
            os.path.relpath(root, project),                       # an ancestor, relative
            "~/" + os.path.relpath(state, home),                  # relative to the home the session runs in
            "~" + str(state),                                     # HOME empty: ~ is the filesystem root
            "/proc/self/root" + str(state),                       # the same file through /proc
            "//proc/1/root/proc/self/root" + str(state),          # // is the root, twice through /proc
            str(root / "other" / ".." / "state" / "tri-agent"),   # .. inside an absolute path
            str(root / "link" / "tri-agent"),                     # a symlink to the state
            str(root) + "/*/tri-agent",                           # a glob over it
            "//"]                                                 # everything


@pytest.mark.parametrize("key", ["allowRead", "allowWrite"])
def test_a_sandbox_path_that_resolves_into_the_fence_reopens_it(setup: tuple[Path, Path, list[Path]],
                                                                 key: str) -> None:
    project, home, fence = setup
    for path in _paths(project, home, fence):
        _loosen(project, {"sandbox": {"filesystem": {key: [path]}}})
        assert any(f"sandbox.filesystem.{key}" in m for m in missing(project, home, fence)), path


def test_an_additional_directory_that_reaches_the_fence_reopens_it(setup: tuple[Path, Path, list[Path]]) -> None:
    project, home, fence = setup
    for path in _paths(project, home, fence):
        _loosen(project, {"permissions": {"additionalDirectories": [path]}})
        assert any("permissions.additionalDirectories" in m for m in missing(project, home, fence)), path


def test_paths_beside_the_fence_leave_it_alone(setup: tuple[Path, Path, list[Path]]) -> None:
    project, home, fence = setup
    beside = ["build", "./out", "~/.kube", str(fence[0].parent / "tri-agent-other"), "../../../elsewhere"]
    _loosen(project, {"sandbox": {"filesystem": {"allowRead": beside, "allowWrite": beside}},
                      "permissions": {"additionalDirectories": beside}})
    assert missing(project, home, fence) == []


@pytest.mark.parametrize(("extra", "named"), [
    ({"sandbox": {"network": {"allowUnixSockets": ["/var/run/docker.sock"]}}}, "sandbox.network.allowUnixSockets"),
    ({"sandbox": {"network": {"allowAllUnixSockets": True}}}, "sandbox.network.allowAllUnixSockets"),
    ({"sandbox": {"enableWeakerNestedSandbox": True}}, "sandbox.enableWeakerNestedSandbox"),
    ({"enabledPlugins": {"helper@market": True}}, "enabledPlugins"),
])
def test_sockets_a_weaker_sandbox_and_plugins_are_loosenings(setup: tuple[Path, Path, list[Path]],
                                                             extra: dict[str, Any], named: str) -> None:
    project, home, fence = setup
    _loosen(project, extra)
    assert any(named in m for m in missing(project, home, fence))
    (project / LOCAL).unlink()
    write_settings(home / PROJECT, extra)  # the user's own settings count as much
    assert any(named in m for m in missing(project, home, fence))


def test_what_is_switched_off_is_no_loosening(setup: tuple[Path, Path, list[Path]]) -> None:
    project, home, fence = setup
    _loosen(project, {"sandbox": {"network": {"allowAllUnixSockets": False, "allowUnixSockets": []},
                                  "enableWeakerNestedSandbox": False},
                      "enabledPlugins": {"helper@market": False}})
    assert missing(project, home, fence) == []
