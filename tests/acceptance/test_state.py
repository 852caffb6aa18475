"""The run state: outside the project, its trail pinned line by line, seeds secret and committed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tri_agent import TamperDetected, UsageError
from tri_agent.acceptance._state import (
    Abandonment,
    RunState,
    abandon,
    check_pin,
    commitment,
    earlier_run,
    locate,
    read_pin,
    secret,
    seed,
)


def _state(tmp_path: Path) -> RunState:
    return RunState(project=tmp_path / "project", root=tmp_path / "state" / "run",
                    pin_path=tmp_path / "pins" / "p.json")


def _fill(folder: Path) -> None:
    (folder / "x.json").write_text("{}\n")


def test_every_appended_line_is_pinned_first(tmp_path: Path) -> None:
    state = _state(tmp_path)
    check_pin(state)  # nothing yet: nothing to check
    state.store.append("a", "step", _fill)
    state.store.append("b", "step", _fill)
    pin = read_pin(state)
    assert pin is not None and pin.seq == 1 and pin.store == str(state.root)
    check_pin(state)


def test_a_stop_between_pinning_and_appending_is_accepted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tri_agent.evidence import _trail

    state = _state(tmp_path)
    state.store.append("a", "step", _fill)

    def killed(path: Path, data: bytes) -> None:
        raise KeyboardInterrupt  # the stop falls after the pin, before the line reaches the trail

    monkeypatch.setattr(_trail, "_append_line", killed)
    with pytest.raises(KeyboardInterrupt):
        state.store.append("b", "step", _fill)
    pin = read_pin(state)
    assert pin is not None and pin.seq == 1 and not pin.appended
    check_pin(state)


def test_the_last_line_dropped_after_it_was_appended_is_a_rewrite(tmp_path: Path) -> None:
    """A store writer who drops the last line (a red round, say) makes the trail look like a stop came between
    pin and append; the pin says the line was appended, so it is a rewrite."""
    state = _state(tmp_path)
    for name in ("a", "b"):
        state.store.append(name, "step", _fill)
    lines = state.store.trail.read_bytes().splitlines(keepends=True)
    state.store.trail.write_bytes(lines[0])
    with pytest.raises(TamperDetected, match="does not end at its pinned head"):
        check_pin(state)


@pytest.mark.parametrize("attack", ["extended", "rewritten", "truncated", "unpinned", "foreign"])
def test_a_trail_that_does_not_end_at_its_pin_is_refused(tmp_path: Path, attack: str) -> None:
    state = _state(tmp_path)
    for name in ("a", "b", "c"):
        state.store.append(name, "step", _fill)
    lines = state.store.trail.read_bytes().splitlines(keepends=True)
    if attack == "extended":
        from tri_agent.evidence._trail import EvidenceStore

        EvidenceStore(state.root).append("d", "step", _fill)  # appended without the pin hook
    elif attack == "rewritten":
        state.store.trail.write_bytes(b"".join(lines[:2]) + lines[2].replace(b'"seq": 2', b'"seq": 2 '))
    elif attack == "truncated":
        state.store.trail.write_bytes(b"".join(lines[:1]))
    elif attack == "unpinned":
        state.pin_path.unlink()
    else:
        state.pin_path.write_text(state.pin_path.read_text().replace(str(state.root), "/elsewhere"))
    with pytest.raises(TamperDetected) as err:
        check_pin(state)
    assert err.value.exit_code == 4


def test_seeds_come_from_a_private_secret_and_commitments_bind_them(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRI_AGENT_SEED_SECRET")
    state = _state(tmp_path)
    key, fixed = secret(state)
    assert not fixed and (state.root / "secret").stat().st_mode & 0o777 == 0o600
    assert secret(state) == (key, False)  # stable across a resume
    other = _state(tmp_path / "other")
    assert seed(secret(other)[0], "round-1") != seed(key, "round-1")
    assert seed(key, "round-1") != seed(key, "round-2") and len(seed(key, "baseline")) == 32
    assert commitment(seed(key, "round-1")) != commitment(seed(key, "round-2"))
    monkeypatch.setenv("TRI_AGENT_SEED_SECRET", "fixed")
    assert secret(state) == (b"fixed", True)


def _stopped_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, RunState]:
    """A toy project whose run stopped after one record, its state under a private state home."""
    from conftest import toy_project

    from tri_agent.acceptance._config import load_config

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state-home"))
    project = toy_project(tmp_path / "toy")
    state = locate(project, load_config(project))
    state.store.append("preflight", "note", _fill)
    return project, state


def test_accept_fresh_abandons_a_stopped_run_on_the_record_and_starts_anew(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: a stopped run could only be resumed (exit 2), and naming another store was tamper (exit 4)."""
    from tri_agent.acceptance import _rounds
    from tri_agent.acceptance._config import load_config
    from tri_agent.acceptance._verify import verify_trail

    project, old = _stopped_run(tmp_path, monkeypatch)
    with pytest.raises(UsageError, match="already holds a trail") as err:
        _rounds.accept(project)
    assert "--fresh" in err.value.hint
    with pytest.raises(UsageError, match="contradict"):
        _rounds.accept(project, resume=True, fresh="why")

    def stop(project: Path) -> None:  # the new run's first step: readiness; stop there, the abandonment is done
        raise UsageError("new run reached")

    monkeypatch.setattr(_rounds, "ready", stop)
    with pytest.raises(UsageError, match="new run reached"):
        _rounds.accept(project, fresh="the spec changed")
    last = old.store.entries()[-1]
    assert (last.kind, last.name) == ("abandoned", "abandoned")
    record = Abandonment.model_validate_json((old.root / "records" / "abandoned" / "abandoned.json").read_text())
    assert (record.reason, record.records) == ("the spec changed", 1)
    assert verify_trail(old.root).ok  # the abandoned run is kept, and still verifies with its pin
    new = locate(project, load_config(project))
    assert (new.root.name, new.pin_path.name) == (old.root.name + ".2", old.pin_path.stem + ".2.json")
    # the new run opens by naming the run it replaced: never mistaken for a first attempt
    assert [e.kind for e in new.store.entries()] == ["earlier-run"] and verify_trail(new.root).ok
    earlier = earlier_run(new.root)
    assert earlier is not None and (earlier.store, earlier.head, earlier.reason, earlier.records) == (
        str(old.root), old.store.digest(), "the spec changed", 1)
    from tri_agent.acceptance._scoreboard import verdict_line

    assert verdict_line(new.store).endswith("(a new run, after one abandoned with 1 record(s): the spec changed)")
    with pytest.raises(UsageError, match="new run reached"):  # the new run is still new: readiness, not --resume
        _rounds.accept(project)


def test_an_abandonment_is_honoured_only_at_its_pinned_head(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Appending an 'abandoned' line by hand, to get past a red run without a trace, is a rewrite (exit 4)."""
    from tri_agent.acceptance._config import load_config

    project, state = _stopped_run(tmp_path, monkeypatch)
    lines = state.store.trail.read_bytes()
    abandon(state, "honest")
    forged = state.store.trail.read_bytes()
    state.store.trail.write_bytes(lines)
    state.store.append("preflight2", "note", _fill)  # the run went on: the pin moves with it
    state.store.trail.write_bytes(forged)  # and then the old abandonment line is put back
    with pytest.raises(TamperDetected, match="does not end at its pinned head"):
        locate(project, load_config(project))
    with pytest.raises(UsageError, match="needs a reason"):
        abandon(state, "  ")
