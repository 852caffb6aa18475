"""A tree a role wrote enters a run only as plain files: no hard link, no special file, no link leading out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tri_agent import PolicyViolation
from tri_agent.sandbox._jail import odd_files, require_plain
from tri_agent.targets._batch import preloadable
from tri_agent.targets._gateway import Gateway
from tri_agent.targets._target import Target

TARGET = """schema_version: 1
baseline: target
run: [python3, "{target}/t.py"]
extract: {file: out.csv, format: csv}
"""


def _target(tmp: Path) -> Target:
    (tmp / "target").mkdir()
    (tmp / "target" / "t.py").write_text("print('hi')\n")
    (tmp / "target.yaml").write_text(TARGET)
    (tmp / "KEY").write_text("the sealed answer\n")
    return Target.load(tmp / "target.yaml")


def _gateway(tmp: Path, target: Target) -> Gateway:
    (tmp / "scratch").mkdir()
    return Gateway(target, tmp, tmp / "scratch")


def test_a_hard_link_in_the_baseline_is_refused_before_any_copy(tmp_path: Path) -> None:
    target = _target(tmp_path)
    os.link(tmp_path / "KEY", tmp_path / "target" / "data.txt")
    with pytest.raises(PolicyViolation) as err:
        _gateway(tmp_path, target)
    assert "a hard link (2 names) at data.txt" in err.value.message and err.value.exit_code == 5
    assert not (tmp_path / "scratch" / "built").exists()


@pytest.mark.parametrize("link", ["/etc/hostname", "../KEY", "sub/../../KEY"])
def test_a_link_leading_out_of_the_baseline_is_refused(tmp_path: Path, link: str) -> None:
    target = _target(tmp_path)
    (tmp_path / "target" / "sub").mkdir()
    (tmp_path / "target" / "data.txt").symlink_to(link)
    with pytest.raises(PolicyViolation, match="a symbolic link to"):
        _gateway(tmp_path, target)


def test_a_relative_link_inside_the_baseline_stays(tmp_path: Path) -> None:
    target = _target(tmp_path)
    (tmp_path / "target" / "alias.py").symlink_to("t.py")
    assert (_gateway(tmp_path, target).built / "alias.py").is_symlink()


def test_a_pipe_in_the_baseline_is_refused(tmp_path: Path) -> None:
    target = _target(tmp_path)
    os.mkfifo(tmp_path / "target" / "pipe")
    with pytest.raises(PolicyViolation, match="special file"):
        _gateway(tmp_path, target)


def test_a_build_step_that_plants_a_link_is_refused(tmp_path: Path) -> None:
    _target(tmp_path)
    (tmp_path / "target.yaml").write_text(TARGET + 'build: [ln, -s, /etc/hostname, "{target}/x"]\n'
                                          .replace("{target}/x", "x"))
    with pytest.raises(PolicyViolation, match="the target's build"):
        _gateway(tmp_path, Target.load(tmp_path / "target.yaml"))


def test_skipped_folders_are_not_checked(tmp_path: Path) -> None:
    (tmp_path / "exam" / ".git").mkdir(parents=True)
    (tmp_path / "KEY").write_text("k")
    os.link(tmp_path / "KEY", tmp_path / "exam" / ".git" / "obj")
    require_plain(tmp_path / "exam", "the exam folder", (".git",))
    with pytest.raises(PolicyViolation, match="the exam folder"):
        require_plain(tmp_path / "exam", "the exam folder")


def test_a_hard_link_in_a_run_output_is_odd(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "a.csv").write_text("x\n")
    os.link(tmp_path / "out" / "a.csv", tmp_path / "out" / "b.csv")
    (tmp_path / "out" / "plain.csv").write_text("x\n")
    assert odd_files(tmp_path / "out") == ["a.csv", "b.csv"]


def test_preloading_never_reads_through_a_link_or_a_huge_file(tmp_path: Path) -> None:
    (tmp_path / "real.py").write_text("import json\n")
    (tmp_path / "big.py").write_bytes(b"import json\n")
    os.truncate(tmp_path / "big.py", 1 << 30)  # sparse: a gigabyte of apparent size, never read
    (tmp_path / "link.py").symlink_to(tmp_path / "real.py")
    assert preloadable(tmp_path, "{target}/real.py") == ["json"]
    assert preloadable(tmp_path, "{target}/link.py") == []
    assert preloadable(tmp_path, "{target}/big.py") == []
