"""A slow, timing-sensitive check of the PDF renderer: on the flake ledger, so it is skipped here."""

import time

import pytest


@pytest.mark.skip(reason="on the flake ledger (timing): fails when the renderer's poll window is short")
def test_pdf_render_settles() -> None:
    started = time.monotonic()
    assert time.monotonic() - started < 0.05
