"""The live bar of a long stage, on a terminal only: what its meter counts, the time so far and an estimate.

On a pipe or in CI nothing is drawn while a stage runs (a log gets each stage's one closing line, unbroken).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console, RenderableType
from rich.progress import Progress, ProgressColumn, SpinnerColumn, Task, TextColumn, TimeElapsedColumn
from rich.progress_bar import ProgressBar
from rich.text import Text

from .._progress import Meter


class _Bar(ProgressColumn):
    def __init__(self, meter: Meter) -> None:
        super().__init__()
        self.meter = meter

    def render(self, task: Task) -> RenderableType:
        part = self.meter.fraction()
        return ProgressBar(total=None if part is None else 1.0, completed=part or 0.0, width=24)


class _Counts(ProgressColumn):
    def __init__(self, meter: Meter) -> None:
        super().__init__()
        self.meter = meter

    def render(self, task: Task) -> RenderableType:
        left = self.meter.remaining(time.monotonic())
        estimate = f" · about {left:.0f} s left" if left is not None else ""
        return Text(self.meter.line() + estimate, style="dim")


@contextmanager
def live(console: Console, what: str, meter: Meter) -> Iterator[None]:
    """Draw ``meter`` under ``what`` while the block runs, when ``console`` is a terminal; else nothing."""
    if not console.is_terminal:
        yield
        return
    columns = (SpinnerColumn(), TextColumn(f"[bold]{what}[/bold]"), _Bar(meter), TimeElapsedColumn(), _Counts(meter))
    with Progress(*columns, console=console, transient=True, refresh_per_second=4) as progress:
        progress.add_task(what, total=None)
        yield
