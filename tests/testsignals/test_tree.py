"""The tree hash: a working tree and a commit's tree hash alike; any edit, untracked file or mode change moves it."""

from __future__ import annotations

import os

from signals_repo import Repo, repo  # noqa: F401  (repo: the fixture)

from tri_agent.testsignals._tree import commit_tree, working_tree


def test_a_clean_checkout_hashes_as_its_commit(repo: Repo) -> None:
    assert working_tree(repo.path).sha256 == commit_tree(repo.path, "HEAD").sha256
    assert working_tree(repo.path).files == 4


def test_every_kind_of_edit_moves_the_hash(repo: Repo) -> None:
    seen = {working_tree(repo.path).sha256}
    st = os.stat(repo.path / "calc.py")
    repo.write("calc.py", "def add(a, b):\n    return a - b\n")  # same size, same time: still another tree
    os.utime(repo.path / "calc.py", ns=(st.st_atime_ns, st.st_mtime_ns))
    seen.add(working_tree(repo.path).sha256)
    repo.write("notes/new_test_x.py", "x = 1\n")  # untracked, not ignored
    seen.add(working_tree(repo.path).sha256)
    os.chmod(repo.path / "calc.py", 0o755)
    seen.add(working_tree(repo.path).sha256)
    os.remove(repo.path / "tests" / "test_calc.py")  # tracked, deleted on disk
    seen.add(working_tree(repo.path).sha256)
    assert len(seen) == 5


def test_ignored_files_and_bytecode_do_not_move_it_and_the_index_is_not_written(repo: Repo) -> None:
    before = working_tree(repo.path).sha256
    index = (repo.path / ".git" / "index").stat().st_mtime_ns
    repo.write("__pycache__/calc.cpython-311.pyc", "junk")
    repo.write("pkg/mod.pyc", "junk")
    assert working_tree(repo.path).sha256 == before
    assert (repo.path / ".git" / "index").stat().st_mtime_ns == index
