"""Data that ships inside the wheel (role charters, presets, skeletons, SKILL.md), found the same way from a checkout.

A wheel carries them under ``tri_agent/_data/``; a source checkout keeps them at the repository root.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def shipped(name: str) -> Path:
    """Where the shipped file or folder ``name`` (``roles``, ``presets``, ``skeletons``, ``SKILL.md``) lives."""
    inside = _PACKAGE / "_data" / name
    return inside if inside.exists() else _PACKAGE.parent / name
