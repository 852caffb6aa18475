"""Shared by every test folder: nothing yet (this file is on the way to the scoring tree, so it is frozen)."""
