"""``verify-trail`` re-verifies a stored run: each forgery below is made the way a forger with write access to the
store (and, where it says so, to the pin) would make it, and each is caught with its exact finding; an honest run
verifies clean.

The runs are hand-made, record by record, with the gate's own functions (``gate``, ``advance``): a real toy
acceptance takes tens of seconds and ``_verify`` has nothing to say about how the records were produced, only about
what they claim. ``HONEST`` is the shape of an accepted, certified run at gate N = 1: a preflight (the sealed
acceptance.yaml, the seed commitments), a baseline, two green rounds (the second one the final round) and the
verdict."""

from __future__ import annotations

import hashlib
import json
import locale
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tri_agent._errors import ExitCode, UsageError
from tri_agent.acceptance._config import load_config
from tri_agent.acceptance._gate import Certification, Progress, RoundFacts, advance, gate
from tri_agent.acceptance._state import Pin, RunState, _pin, commitment, locate, seed, state_home
from tri_agent.acceptance._verify import certification_of, claims, resolve, verify_run
from tri_agent.evidence._seal import seal
from tri_agent.evidence._trail import TRAIL, EvidenceStore, TrailEntry, TrailFinding

KEY = b"verify-tests"
ROLES = ("examiner", "builder", "tester", "judge")
MODEL_LAYERS = ["physical-omission", "write-audit", "tool-confinement"]  # what an API driver's episode needs
SANDBOX = ["landlock", "bubblewrap"]  # role-written code under the OS sandbox
ALL_ANTHROPIC = {role: "anthropic" for role in sorted(ROLES)}
CONFIG_YAML = """schema_version: 1
scope: the grades CLI
spec: [spec/README.md]
gate_n: {gate_n}
target_kind: warehouse
consent: {{given_at: "2026-11-29T00:00:00Z", cost_note: "no model spend"}}
"""

# what certification says, word for word (the reasons users read)
FIXED = "the seeds were fixed by the caller (TRI_AGENT_SEED_SECRET), so the exam was predictable"
LANDLOCK_ONLY = ("role-written code ran under Landlock only, which leaves the host's named unix sockets and file "
                 "metadata open: install bubblewrap to certify")
UNSANDBOXED = ("role-written code (the target in every case and mutant, the exam's generator and oracle) ran outside "
               "the OS sandbox")
VERDICT = "records/verdict/verdict.json"


# --- hand-made runs ----------------------------------------------------------------------------------------------

def green(k: int) -> RoundFacts:
    return RoundFacts(round=k, stable=True, passed=4, total=4, mutants_judged=3, mutants_detected=3)


def red(k: int) -> RoundFacts:
    return green(k).model_copy(update={"passed": 3, "failing_tickets": ["builder:judge:abc"]})


def episode(role: str, driver: str = "anthropic", isolation: list[str] = MODEL_LAYERS, *,
            simulation: bool = False, drivers: list[str] | None = None) -> dict[str, Any]:
    """An episode as ``episodes.json`` holds it (volatile fields scrubbed); ``drivers``: every attempt's driver."""
    attempts = [{"driver": d, "status": "ok"} for d in ([driver] if drivers is None else drivers)]
    return {"role": role, "status": "ok", "simulation": simulation, "isolation": list(isolation), "attempts": attempts}


def _write(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def pin_path(root: Path) -> Path:
    return state_home() / "pins" / f"verify-{hashlib.sha256(str(root).encode()).hexdigest()[:12]}.json"


def build_run(root: Path, rounds: list[RoundFacts] | None = None, *, gate_n: int = 1, fixed: bool = False,
              exposed: list[str] | None = None, preflight: bool = True, verdict: dict[str, Any] | None = None,
              with_verdict: bool = True, pinned: Path | None = None, pin: bool = True,
              episodes: Callable[[int], list[dict[str, Any]]] | None = None) -> EvidenceStore:
    """A run as ``accept`` seals it, pinned under the state home (``pinned``: at that path) unless ``pin`` is off.
    ``verdict`` overrides fields of the honest verdict (accepted after the rounds played, certified, every role
    played by anthropic): the verdict is written as given, never computed by the code under test."""
    root = root.resolve()
    rounds = [green(1), green(2)] if rounds is None else rounds
    where = pinned or pin_path(root)
    store = RunState(Path("/"), root, where).store if pin else EvidenceStore(root)

    def fill_preflight(folder: Path) -> None:
        (folder / "acceptance.yaml").write_text(CONFIG_YAML.format(gate_n=gate_n), encoding="utf-8")
        _write(folder / "seeds.json", {"fixed_by_caller": fixed, "commitments": {
            label: commitment(seed(KEY, label)) for label in ("baseline", "round-1")}})
        if exposed is not None:
            _write(folder / "exposure.json", {"exam_readable_by_the_session": exposed})

    def fill_baseline(folder: Path) -> None:
        _write(folder / "build.json", {"exam_sha256": "0" * 64, "isolation": SANDBOX})
        _write(folder / "run.json", {"isolation": SANDBOX})

    if preflight:
        store.append("preflight", "preflight", fill_preflight)
    store.append("baseline", "baseline", fill_baseline)
    progress = Progress(gate_n=gate_n)
    for facts in rounds:
        k, result = facts.round, gate(facts)
        progress, _ = advance(progress, result, facts)

        def fill_round(folder: Path, k: int = k, facts: RoundFacts = facts, progress: Progress = progress) -> None:
            _write(folder / "facts.json", facts.model_dump(mode="json"))
            _write(folder / "gate.json", gate(facts).model_dump(mode="json"))
            _write(folder / "progress.json", progress.model_dump(mode="json"))
            _write(folder / "episodes.json", episodes(k) if episodes else [episode(role) for role in ROLES])
            for name in ("build.json", "run.json", "mutation-summary.json"):
                _write(folder / name, {"isolation": SANDBOX})
            _write(folder / "seeds.json", {"revealed": {f"round-{k}": seed(KEY, f"round-{k}")},
                                           "commitments": {f"round-{k + 1}": commitment(seed(KEY, f"round-{k + 1}"))}})

        store.append(f"round-{k:04d}", "round", fill_round)
    if with_verdict:
        data = {"decision": "accepted", "rounds": progress.rounds, "gate_n": gate_n, "certified": True, "reasons": [],
                "drivers": ALL_ANTHROPIC, **(verdict or {})}
        store.append("verdict", "verdict", lambda folder: _write(folder / "verdict.json", data))
    return EvidenceStore(root)


def repin(root: Path, where: Path | None = None) -> None:
    """What a forger with write access to the pins does too: pin the (forged) last line."""
    lines = (root / TRAIL).read_bytes().splitlines()
    _pin(RunState(Path("/"), root, where or pin_path(root)), len(lines) - 1, lines[-1],
         lines[-2] if len(lines) > 1 else None)


def forge(root: Path, name: str, edit: Callable[[Path], object] | None = None, *, drop: bool = False,
          kind: str | None = None, rename: str | None = None, pin: bool = True) -> None:
    """What a forger with write access to the store does: edit a record (or drop it, rename it, or change its kind
    in the trail), reseal it, re-chain every line; with ``pin``, also pin the new head where the run's pin lives."""
    folder = root / "records" / name
    digest = None
    if drop:
        shutil.rmtree(folder)
    elif rename is not None:
        folder.rename(root / "records" / rename)
    elif edit is not None:
        edit(folder)
        (folder / "MANIFEST.sha256").unlink()
        (folder / "SEAL-LOG.jsonl").unlink(missing_ok=True)
        digest = seal(folder)
    lines: list[bytes] = []
    for raw in (root / TRAIL).read_bytes().splitlines():
        entry = TrailEntry.model_validate_json(raw)
        if entry.name == name and drop:
            continue
        update: dict[str, object] = {"seq": len(lines),
                                     "previous_line_sha256": hashlib.sha256(lines[-1]).hexdigest() if lines else None}
        if entry.name == name:
            update.update({"digest": digest or entry.digest, "kind": kind or entry.kind, "name": rename or name})
        lines.append(json.dumps(entry.model_copy(update=update).model_dump(mode="json"), sort_keys=True).encode())
    (root / TRAIL).write_bytes(b"".join(line + b"\n" for line in lines))
    if pin:
        repin(root)


def edit_json(file: str, change: Callable[[Any], object]) -> Callable[[Path], None]:
    """An edit of one JSON file of a record: ``change`` alters the data in place."""
    def edit(folder: Path) -> None:
        data = json.loads((folder / file).read_text())
        change(data)
        _write(folder / file, data)

    return edit


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The honest run, built once per module; tests that tamper with it work on a ``clone``."""
    root = tmp_path_factory.mktemp("honest").resolve() / "store"
    build_run(root)
    return root


def clone(root: Path, dest: Path) -> Path:
    """A copy of a run in its own store, with its own pin."""
    dest = dest.resolve() / "store"
    shutil.copytree(root, dest)
    repin(dest)
    return dest


@pytest.fixture
def run(honest: Path, tmp_path: Path) -> Path:
    return clone(honest, tmp_path)


@pytest.fixture
def own_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A state home of this test's own (its pins folder holds only what the test puts there)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return state_home()


def findings(target: Path, expect: str | None = None) -> list[TrailFinding]:
    return verify_run(target, expect)[1]


def finding(where: str, detail: str) -> TrailFinding:
    return TrailFinding(where=where, detail=detail)


def no_pin() -> TrailFinding:
    return finding("pin", f"no pin for this store under {state_home() / 'pins'}: nothing shows it was not rewritten "
                          "since its last stop")


# --- an honest run -----------------------------------------------------------------------------------------------

def test_an_honest_run_verifies_clean_and_certifies(honest: Path, cli) -> None:  # type: ignore[no-untyped-def]
    store, found = verify_run(honest)
    assert store.root == honest and found == []
    assert claims(store) == []
    assert certification_of(store) == Certification(certified=True, reasons=[], drivers=ALL_ANTHROPIC)
    code, out, _ = cli("verify-trail", honest, "--expect", store.digest())
    assert (code, out) == (0, f"OK 5 records in {honest}, trail digest {store.digest()}\n")


def test_a_run_verifies_by_its_project_folder_and_a_forgery_behind_the_pin_is_caught(tmp_path: Path) -> None:
    project = tmp_path / "toy"
    project.mkdir()
    (project / "acceptance.yaml").write_text(CONFIG_YAML.format(gate_n=1))
    state = locate(project, load_config(project))
    build_run(state.root, pinned=state.pin_path)
    store, run_state = resolve(project)
    assert (store.root, run_state) == (state.root, state)
    assert findings(project) == []
    # the forger reseals and re-chains, but cannot reach the pin: the pin and what the records claim both speak
    forge(state.root, "round-0001", edit_json("gate.json", lambda g: g.update(green=False, reasons=["forged"])),
          pin=False)
    assert findings(project) == [
        finding("pin", f"the trail at {state.root} does not end at its pinned head (line 5 of 5)"),
        finding("records/round-0001/gate.json", "the gate does not follow from the round's facts")]


def test_a_folder_that_is_neither_a_store_nor_a_project_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as err:
        verify_run(tmp_path)
    assert (err.value.message, err.value.hint) == (f"{tmp_path} holds no TRAIL.jsonl and no acceptance.yaml",
                                                   "pass a run's evidence store or its project folder")


# --- the pin of a store named by its folder ----------------------------------------------------------------------

def test_a_store_finds_its_own_pin_past_a_broken_one_and_another_stores(tmp_path: Path, own_home: Path) -> None:
    root = tmp_path.resolve() / "store"
    build_run(root)
    pins = own_home / "pins"
    (pins / "0-broken.json").write_text("not a pin\n")
    other = Pin(store=str(tmp_path / "elsewhere"), seq=0, line_sha256="0" * 64, previous_line_sha256=None)
    (pins / "1-other.json").write_text(other.model_dump_json())
    store, state = resolve(root)
    assert state is not None and (store.root, state.root, state.pin_path) == (root, root, pin_path(root))
    assert findings(root) == []
    (pins / pin_path(root).name).unlink()  # only the others are left: this store has no pin
    assert resolve(root)[1] is None
    assert findings(root) == [no_pin()]


def test_a_store_named_by_a_relative_path_finds_its_pin(honest: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(honest.parent)
    assert findings(Path("store")) == []


def test_a_pin_that_no_longer_matches_is_a_pin_finding(run: Path) -> None:
    forge(run, "baseline", lambda folder: (folder / "note.md").write_text("added later\n"), pin=False)
    assert findings(run) == [finding("pin", f"the trail at {run} does not end at its pinned head (line 5 of 5)")]


def test_an_acceptance_store_whose_pin_was_removed_is_a_finding(run: Path) -> None:
    pin_path(run).unlink()
    assert findings(run) == [no_pin()]


def test_a_run_stopped_after_its_preflight_had_a_pin_too(tmp_path: Path) -> None:
    store = EvidenceStore(tmp_path / "store")
    store.append("preflight", "preflight", lambda folder: _write(folder / "seeds.json", {"fixed_by_caller": False}))
    assert findings(store.root) == [no_pin()]


def test_sealed_rounds_without_a_preflight_had_a_pin_too(tmp_path: Path) -> None:
    root = tmp_path.resolve() / "store"
    build_run(root, preflight=False, with_verdict=False, pin=False)
    assert findings(root) == [no_pin(), finding("records/round-0001/seeds.json", "the seed of round-1 does not "
                                                                                 "match its commitment")]


def test_a_store_disguised_as_a_plain_one_still_needs_its_pin(run: Path) -> None:
    # the forger drops the pin, renames the preflight and files the rounds under another kind: the verdict, which
    # every reader finds by its name, still marks the store as an acceptance's (and claims what nothing supports)
    pin_path(run).unlink()
    forge(run, "preflight", rename="setup", kind="setup", pin=False)
    for name in ("round-0001", "round-0002"):
        forge(run, name, kind="step", pin=False)
    assert findings(run) == [no_pin(), finding(VERDICT, "the verdict claims acceptance after 2 rounds, but the sealed "
                                                        "rounds decide nothing after 0 (acceptance needs 1 green "
                                                        "rounds in a row, then a green final round)")]


def test_a_plain_store_never_had_a_pin(tmp_path: Path) -> None:
    store = EvidenceStore(tmp_path / "plain")
    store.append("step-1", "step", lambda folder: _write(folder / "note.json", {"n": 1}))
    assert findings(store.root) == []


# --- the chain comes first ---------------------------------------------------------------------------------------

def test_a_broken_chain_is_all_that_is_reported(run: Path) -> None:
    gate_json = run / "records" / "round-0001" / "gate.json"
    gate_json.write_text(gate_json.read_text().replace('"green": true', '"green": false'))
    found = findings(run)
    assert [f.where for f in found] == ["records/round-0001/gate.json"]
    assert found[0].detail.startswith("modified: ")  # not "the gate does not follow": a broken chain claims nothing


def test_the_trail_must_have_the_expected_digest(run: Path) -> None:
    digest = EvidenceStore(run).digest()
    assert findings(run, expect=digest) == []
    assert findings(run, expect="0" * 64) == [finding(TRAIL, f"trail digest {digest} != expected {'0' * 64}")]


# --- what the records claim: each forgery resealed, re-chained and pinned ---------------------------------------

def test_a_revealed_seed_that_is_not_the_committed_one_is_caught(run: Path) -> None:
    forge(run, "round-0002", edit_json("seeds.json", lambda s: s["revealed"].update({"round-2": "0" * 32})))
    assert findings(run) == [finding("records/round-0002/seeds.json", "the seed of round-2 does not match its "
                                                                      "commitment")]


def test_a_round_that_commits_its_own_seed_does_not_vouch_for_it(run: Path) -> None:
    # commitments count from the records before a round, never from the round itself
    def edit(s: dict[str, Any]) -> None:
        s["revealed"]["round-2"] = "0" * 32
        s["commitments"]["round-2"] = commitment("0" * 32)

    forge(run, "round-0002", edit_json("seeds.json", edit))
    assert findings(run) == [finding("records/round-0002/seeds.json", "the seed of round-2 does not match its "
                                                                      "commitment")]


@pytest.mark.parametrize("hide", [lambda folder: _write(folder / "seeds.json", {"revealed": {}}),
                                  lambda folder: (folder / "seeds.json").unlink()], ids=["emptied", "removed"])
def test_a_round_that_hides_its_seed_is_caught(run: Path, hide: Callable[[Path], None]) -> None:
    forge(run, "round-0002", hide)
    assert findings(run) == [finding("records/round-0002/seeds.json", "the round does not reveal the seed committed "
                                                                      "for it")]


def test_a_round_record_without_facts_is_caught_and_does_not_count(run: Path) -> None:
    forge(run, "round-0002", lambda folder: (folder / "facts.json").unlink())
    assert findings(run) == [
        finding("records/round-0002", "a round record without facts.json: not written by tri-agent accept"),
        finding(VERDICT, "the verdict claims acceptance after 2 rounds, but the sealed rounds decide final_round "
                         "after 1 (acceptance needs 1 green rounds in a row, then a green final round)")]


def test_a_red_round_whose_gate_was_forged_green_is_caught(tmp_path: Path) -> None:
    root = tmp_path.resolve() / "store"
    build_run(root, [red(1), green(2), green(3)], verdict={"rounds": 3})
    assert findings(root) == []
    forge(root, "round-0001", edit_json("gate.json", lambda g: g.update(green=True, reasons=[])))
    assert findings(root) == [finding("records/round-0001/gate.json", "the gate does not follow from the round's "
                                                                      "facts")]


def test_a_gate_with_a_field_added_does_not_follow(run: Path) -> None:
    forge(run, "round-0001", edit_json("gate.json", lambda g: g.update(note="looks fine")))
    assert findings(run) == [finding("records/round-0001/gate.json", "the gate does not follow from the round's "
                                                                     "facts")]


def test_a_dropped_red_round_breaks_the_seed_chain_and_the_verdict(tmp_path: Path) -> None:
    root = tmp_path.resolve() / "store"
    build_run(root, [red(1), green(2), green(3)], verdict={"rounds": 3})
    forge(root, "round-0001", drop=True)
    assert findings(root) == [
        finding("records/round-0002/seeds.json", "the seed of round-2 does not match its commitment"),
        finding(VERDICT, "the verdict claims acceptance after 3 rounds, but the sealed rounds decide accepted after 2 "
                         "(acceptance needs 1 green rounds in a row, then a green final round)")]


def test_a_verdict_that_miscounts_its_rounds_is_caught(run: Path) -> None:
    forge(run, "verdict", edit_json("verdict.json", lambda v: v.update(rounds=1)))
    assert findings(run) == [finding(VERDICT, "the verdict claims acceptance after 1 rounds, but the sealed rounds "
                                              "decide accepted after 2 (acceptance needs 1 green rounds in a row, "
                                              "then a green final round)")]


def test_a_verdict_before_the_final_round_is_caught(tmp_path: Path) -> None:
    root = tmp_path.resolve() / "store"
    build_run(root, [green(1)])  # green, so the final round is next: nothing is accepted yet
    assert findings(root) == [finding(VERDICT, "the verdict claims acceptance after 1 rounds, but the sealed rounds "
                                               "decide final_round after 1 (acceptance needs 1 green rounds in a "
                                               "row, then a green final round)")]


def test_a_verdict_without_any_round_is_caught(tmp_path: Path) -> None:
    root = tmp_path.resolve() / "store"
    build_run(root, [], verdict={"rounds": 0})
    assert findings(root) == [finding(VERDICT, "the verdict claims acceptance after 0 rounds, but the sealed rounds "
                                               "decide nothing after 0 (acceptance needs 1 green rounds in a row, "
                                               "then a green final round)")]


def test_a_verdict_that_claims_a_stricter_gate_is_caught(run: Path) -> None:
    forge(run, "verdict", edit_json("verdict.json", lambda v: v.update(gate_n=3)))
    assert findings(run) == [finding(VERDICT, "the verdict claims gate N = 3, but the run was sealed with gate N = 1")]


def test_a_verdict_that_claims_certification_a_simulation_cannot_have_is_caught(tmp_path: Path) -> None:
    root = tmp_path.resolve() / "store"
    scripted = {role: "scripted" for role in ROLES}
    build_run(root, verdict={"drivers": scripted},
              episodes=lambda k: [episode(role, "scripted", [], simulation=True) for role in ROLES])
    assert findings(root) == [finding(VERDICT, "the verdict's certification does not follow from the sealed episodes "
                                               "and runs (they say certified=False)")]


def test_a_certified_run_whose_verdict_was_made_to_look_uncertified_is_caught(run: Path) -> None:
    forge(run, "verdict", edit_json("verdict.json", lambda v: v.update(certified=False, reasons=[FIXED])))
    assert findings(run) == [finding(VERDICT, "the verdict's certification does not follow from the sealed episodes "
                                              "and runs (they say certified=True)")]


def test_a_verdict_with_other_reasons_is_caught(tmp_path: Path) -> None:
    root = tmp_path.resolve() / "store"
    build_run(root, fixed=True, verdict={"certified": False, "reasons": [LANDLOCK_ONLY]})
    assert findings(root) == [finding(VERDICT, "the verdict's certification does not follow from the sealed episodes "
                                               "and runs (they say certified=False)")]


def test_a_verdict_that_names_other_drivers_is_caught(run: Path) -> None:
    forge(run, "verdict", edit_json("verdict.json", lambda v: v["drivers"].update(builder="openai")))
    assert findings(run) == [finding(VERDICT, "the verdict's drivers do not follow from the sealed episodes (they say "
                                              "builder: anthropic; examiner: anthropic; judge: anthropic; tester: "
                                              "anthropic)")]


def test_a_verdict_filed_under_another_kind_is_still_checked(run: Path) -> None:
    # every reader finds the verdict by its name: a kind changed in the trail must not hide it from the check
    forge(run, "verdict", edit_json("verdict.json", lambda v: v.update(rounds=7)), kind="report")
    assert findings(run) == [finding(VERDICT, "the verdict claims acceptance after 7 rounds, but the sealed rounds "
                                              "decide accepted after 2 (acceptance needs 1 green rounds in a row, "
                                              "then a green final round)")]


def test_every_finding_is_kept_the_seeds_and_the_verdict_alike(run: Path) -> None:
    forge(run, "round-0001", edit_json("seeds.json", lambda s: s["revealed"].update({"round-1": "0" * 32})))
    forge(run, "verdict", edit_json("verdict.json", lambda v: v.update(rounds=1)))
    assert [f.where for f in findings(run)] == ["records/round-0001/seeds.json", VERDICT]


# --- gate N: as sealed at preflight ------------------------------------------------------------------------------

def test_gate_n_is_read_from_the_sealed_configuration(tmp_path: Path) -> None:
    root = tmp_path.resolve() / "store"
    build_run(root, [green(1), green(2), green(3)], gate_n=2)
    assert findings(root) == []
    forge(root, "verdict", edit_json("verdict.json", lambda v: v.update(rounds=2)))
    assert findings(root) == [finding(VERDICT, "the verdict claims acceptance after 2 rounds, but the sealed rounds "
                                               "decide accepted after 3 (acceptance needs 2 green rounds in a row, "
                                               "then a green final round)")]


def test_a_store_without_a_sealed_configuration_counts_gate_n_as_one(tmp_path: Path) -> None:
    root = tmp_path.resolve() / "store"
    # no preflight: nothing sealed the seeds either, so it cannot certify; the rounds are counted at gate N = 1
    build_run(root, [green(1)], preflight=False, pin=False,
              verdict={"rounds": 2, "certified": False, "reasons": [FIXED]})
    assert claims(EvidenceStore(root)) == [
        finding("records/round-0001/seeds.json", "the seed of round-1 does not match its commitment"),
        finding(VERDICT, "the verdict claims acceptance after 2 rounds, but the sealed rounds decide final_round "
                         "after 1 (acceptance needs 1 green rounds in a row, then a green final round)")]


def test_a_sealed_configuration_that_is_not_yaml_is_a_rewritten_record(run: Path) -> None:
    forge(run, "preflight", lambda folder: (folder / "acceptance.yaml").write_text("gate_n: [1\n"))
    [found] = findings(run)
    assert found.where == "records/preflight/acceptance.yaml"
    assert found.detail.startswith(f"not as tri-agent writes it (MalformedInput: {run / 'records' / 'preflight'}")
    assert found.detail.endswith("): the sealed record was rewritten")


@pytest.mark.parametrize(("record", "edit", "where", "error"), [
    ("round-0001", lambda folder: (folder / "gate.json").unlink(), "round-0001", "FileNotFoundError"),
    ("round-0001", lambda folder: (folder / "facts.json").write_text('{"round": "one"}'), "round-0001",
     "ValidationError"),
    ("round-0001", lambda folder: (folder / "seeds.json").write_text("[1, 2]"), "round-0001", "AttributeError"),
    ("verdict", lambda folder: (folder / "verdict.json").unlink(), "verdict", "FileNotFoundError"),
    # the verdict's check reads every round's episodes: that is where the rewrite shows
    ("round-0001", lambda folder: (folder / "episodes.json").write_text("not json"), "verdict", "JSONDecodeError"),
])
def test_a_resealed_record_tri_agent_could_not_have_written_is_tamper_not_a_crash(
        run: Path, record: str, edit: Callable[[Path], None], where: str, error: str,
        cli) -> None:  # type: ignore[no-untyped-def]
    forge(run, record, edit)
    found = findings(run)
    assert any(f.where == f"records/{where}" and f.detail.startswith(f"not as tri-agent writes it ({error}: ")
               for f in found), found
    code, _, _ = cli("verify-trail", run)
    assert code == ExitCode.TAMPER


def test_the_sealed_configuration_is_read_as_utf8_whatever_the_locale(tmp_path: Path) -> None:
    root = tmp_path.resolve() / "store"
    build_run(root, [green(1), green(2), green(3)], gate_n=2)
    forge(root, "preflight", lambda folder: (folder / "acceptance.yaml").write_text(
        CONFIG_YAML.format(gate_n=2).replace("the grades CLI", "die Notenübersicht"), encoding="utf-8"))
    saved = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")  # ASCII: a default-encoding read would fail on "ü"
    try:
        assert claims(EvidenceStore(root)) == []
    finally:
        locale.setlocale(locale.LC_CTYPE, saved)


def test_a_round_number_is_read_after_the_last_dash_of_its_record_name(tmp_path: Path) -> None:
    root = tmp_path.resolve() / "store"
    store = build_run(root, [green(1)], with_verdict=False, pin=False,
                      episodes=lambda k: [episode("builder", isolation=["write-audit"])])
    source = root / "records" / "round-0001"

    def fill(folder: Path) -> None:  # round 2, filed under a name with more dashes than accept writes
        for item in source.iterdir():
            if item.name not in ("MANIFEST.sha256", "SEAL-LOG.jsonl"):
                shutil.copy2(item, folder / item.name)
        _write(folder / "facts.json", green(2).model_dump(mode="json"))
        _write(folder / "gate.json", gate(green(2)).model_dump(mode="json"))
        _write(folder / "seeds.json", {"revealed": {"round-2": seed(KEY, "round-2")}})

    store.append("final-round-0002", "round", fill)
    assert claims(store) == []
    assert certification_of(store).reasons == ["the builder (anthropic) lacked physical-omission, tool-confinement "
                                               "in round(s) 1, 2"]


# --- certification, from the sealed records alone ----------------------------------------------------------------

@pytest.mark.parametrize("fixed,fixed_now,reasons", [
    (False, False, []),
    (True, False, [FIXED]),  # fixed when the run began: whatever a later invocation says
    (False, True, [FIXED]),  # fixed now, as the verdict is sealed
])
def test_fixed_seeds_never_certify(tmp_path: Path, fixed: bool, fixed_now: bool, reasons: list[str]) -> None:
    store = build_run(tmp_path / "store", fixed=fixed, with_verdict=False)
    assert certification_of(store, fixed_now=fixed_now).reasons == reasons


@pytest.mark.parametrize("seeds", [{"commitments": {}}, None], ids=["no fixed_by_caller", "no seeds.json"])
def test_seeds_of_unknown_provenance_count_as_fixed(run: Path, seeds: dict[str, Any] | None) -> None:
    forge(run, "preflight", lambda folder: _write(folder / "seeds.json", seeds) if seeds is not None
          else (folder / "seeds.json").unlink())
    assert certification_of(EvidenceStore(run)).reasons == [FIXED]


def test_an_exam_the_in_session_builder_could_read_does_not_certify(tmp_path: Path) -> None:
    store = build_run(tmp_path / "store", exposed=["exam/oracle/oracle.py", "exam/judge/notes.md"], with_verdict=False)
    assert certification_of(store).reasons == [
        "the in-session builder could read the exam's hidden parts in the project or its git history "
        "(exam/oracle/oracle.py, exam/judge/notes.md): keep the exam outside the project"]


def test_an_episode_without_attempts_has_an_unknown_driver(tmp_path: Path) -> None:
    store = build_run(tmp_path / "store", with_verdict=False,
                      episodes=lambda k: [episode("builder", drivers=[]), episode("tester", drivers=["anthropic",
                                                                                                      "scripted"])])
    assert certification_of(store) == Certification(
        certified=False, reasons=["the builder (unknown) lacked a known driver (not 'unknown') in round(s) 1, 2"],
        drivers={"builder": "unknown", "tester": "anthropic"})


def test_a_simulated_episode_and_a_missing_layer_are_named_by_role_and_round(tmp_path: Path) -> None:
    def played(k: int) -> list[dict[str, Any]]:
        builder = episode("builder", isolation=MODEL_LAYERS[:2] if k == 2 else MODEL_LAYERS)
        return [builder, episode("tester", "scripted", [], simulation=True), episode("judge", "command", SANDBOX)]

    store = build_run(tmp_path / "store", with_verdict=False, episodes=played)
    assert certification_of(store) == Certification(certified=False, reasons=[
        "a simulation: the tester replayed recorded actions (scripted)",
        "the builder (anthropic) lacked tool-confinement in round(s) 2",
        "the judge (command) lacked physical-omission, write-audit in round(s) 1, 2"],
        drivers={"builder": "anthropic", "judge": "command", "tester": "scripted"})


@pytest.mark.parametrize("record,file", [("baseline", "run.json"), ("baseline", "build.json"),
                                         ("round-0002", "run.json"), ("round-0001", "build.json"),
                                         ("round-0002", "mutation-summary.json")])
def test_every_run_of_role_written_code_needs_the_os_sandbox(run: Path, record: str, file: str) -> None:
    forge(run, record, edit_json(file, lambda d: d.update(isolation=["landlock"])))
    assert certification_of(EvidenceStore(run)).reasons == [LANDLOCK_ONLY]
    forge(run, record, edit_json(file, lambda d: d.pop("isolation")))
    assert certification_of(EvidenceStore(run)).reasons == [UNSANDBOXED]


def test_an_unreadable_records_reason_is_one_line_of_at_most_200_characters() -> None:
    from tri_agent.acceptance._verify import _unreadable

    found = _unreadable("records/x/gate.json", ValueError("bad\n   field  " + "y" * 300))
    said = ("bad field " + "y" * 300)[:200]
    assert found == finding("records/x/gate.json", f"not as tri-agent writes it (ValueError: {said}): the sealed "
                                                   "record was rewritten")


@pytest.fixture
def fresh_project(tmp_path: Path, own_home: Path) -> tuple[Path, RunState]:
    project = tmp_path / "toy"
    project.mkdir()
    (project / "acceptance.yaml").write_text(CONFIG_YAML.format(gate_n=1))
    return project, locate(project, load_config(project))


def test_reports_must_be_what_the_trail_says_byte_for_byte(fresh_project: tuple[Path, RunState]) -> None:
    from tri_agent.acceptance._scoreboard import TIMINGS, acceptance_json, report_html, scoreboard
    from tri_agent.acceptance._verify import report_findings

    project, state = fresh_project
    assert report_findings(project, state) == []  # no report: nothing claimed
    made = {"ACCEPTANCE.json": acceptance_json(state.store), "REPORT.html": report_html(state.store),
            "SCOREBOARD.md": scoreboard(state.store, state.root / TIMINGS)}
    for name, text in made.items():
        (project / name).write_text(text, encoding="utf-8")
    assert report_findings(project, state) == []
    for name in made:
        (project / name).write_text(made[name] + " ", encoding="utf-8")
        assert report_findings(project, state) == [finding(name, (
            "differs from what the trail says (0 records): edited by hand, or left from another state of the run; "
            "`tri-agent accept --resume` on a finished run writes it again from the trail"))]
        assert name in [f.where for f in verify_run(project)[1]]
        (project / name).write_text(made[name], encoding="utf-8")


def test_nothing_goes_on_after_a_policy_stop_and_no_stop_is_made_up(tmp_path: Path) -> None:
    root = tmp_path.resolve() / "store"
    gamed = green(2).model_copy(update={"canaries": 2, "canaries_gamed": ["c-0123456789ab"]})
    build_run(root, [red(1), gamed, green(3)], with_verdict=False)
    assert findings(root) == [finding("records/round-0003", "a round after the run was stopped for gaming the exam "
                                                            "(policy): no run goes on from there")]
    honest = tmp_path.resolve() / "honest"
    build_run(honest, [red(1), green(2)], with_verdict=False)
    EvidenceStore(honest).append("policy-0002", "policy", lambda folder: (folder / "POLICY.md").write_text("x\n"))
    repin(honest)
    assert findings(honest) == [finding("records/policy-0002", "a policy stop that no round's facts call for (no "
                                                               "canary was gamed)")]
