"""A repository as git holds it (a leaf: what the patch gate and the test signals both read).

- ``_git``: git run with a clean environment; a revision's file list, its tree entries and blobs, written out.
"""

from ._git import EXECUTABLE, REGULAR, cat_blobs, clean_env, files_at, git_out, top_level, tree_of, write_files

__all__ = ["EXECUTABLE", "REGULAR", "cat_blobs", "clean_env", "files_at", "git_out", "top_level", "tree_of",
           "write_files"]
