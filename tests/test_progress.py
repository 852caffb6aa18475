"""Live progress: the counters a stage advances, the line and estimate a terminal shows, nothing without a watcher,
and the real stages (the gateway's cases) counting what they run."""

from __future__ import annotations

import io
from pathlib import Path

from conftest import toy_copy
from rich.console import Console

from tri_agent import _progress as progress
from tri_agent._progress import Meter, watching
from tri_agent.acceptance._live import live


def test_a_meter_counts_in_words_with_kills_beside_mutants_and_estimates_what_is_left() -> None:
    meter = Meter(started=100.0)
    assert meter.fraction() is None and meter.line() == "" and meter.remaining(110.0) is None
    meter.expect("mutants", 10)
    meter.expect("hunted", 340)
    meter.advance("mutants", 4)
    meter.advance("killed", 3)
    meter.advance("hunted", 34)
    assert meter.line() == "mutants 4/10 (3 killed) · hunted inputs 34/340"
    assert meter.fraction() == 0.4  # the first counter in the table's order that has a total
    assert meter.remaining(110.0) == 15.0  # 10 s for 40%: 15 s for the rest


def test_without_a_watcher_expect_and_advance_do_nothing_and_a_watcher_gets_them_all() -> None:
    progress.advance("cases")  # nobody watching: no error, nothing kept
    with watching(Meter()) as meter:
        progress.expect("cases", 2)
        progress.advance("cases")
    progress.advance("cases")
    assert meter.done == {"cases": 1} and meter.total == {"cases": 2}


def test_the_gateway_counts_the_cases_it_runs(toy_build: Path, tmp_path: Path) -> None:
    from tri_agent.targets._gateway import run_exam

    toy = toy_copy(tmp_path / "toy", fixed=True)
    with watching(Meter()) as meter:
        run_exam(toy_build, toy / "target.yaml", tmp_path / "run")
    cases = len((toy_build / "visible" / "cases.jsonl").read_text().splitlines())
    assert meter.total["cases"] == meter.done["cases"] >= cases  # every case expected, every case done


def test_the_bar_is_drawn_on_a_terminal_and_nothing_is_drawn_on_a_pipe() -> None:
    for terminal in (True, False):
        out = io.StringIO()
        console = Console(file=out, force_terminal=terminal, width=120)
        meter = Meter()
        meter.expect("cases", 4)
        meter.advance("cases", 2)
        with live(console, "every case, twice", meter):
            console.print("inside")
        text = out.getvalue()
        assert ("cases 2/4" in text) is terminal and "inside" in text


def test_the_ticker_tells_a_pipe_each_new_state_and_nothing_when_nothing_moved() -> None:
    import time as clock

    from tri_agent._progress import Meter, ticker

    meter, said = Meter(), []
    with ticker(meter, said.append, every=0.05):
        clock.sleep(0.2)  # nothing expected yet: nothing to tell
        meter.expect("mutants", 4)
        meter.advance("mutants")
        meter.advance("killed")
        clock.sleep(0.2)
    assert said and said[0].startswith("mutants 1/4 (1 killed)") and len(set(said)) == len(said)
