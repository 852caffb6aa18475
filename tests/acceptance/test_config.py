"""The survey (flags or questions, consent recorded with its cost note) and the preflight checks."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tri_agent import UsageError
from tri_agent.acceptance._config import (
    AcceptanceConfig,
    ModelSpec,
    MutationSettings,
    WeakeningSettings,
    check_git,
    check_spec,
    cost_note,
    load_config,
    survey,
    write_config,
)
from tri_agent.drivers._episode import Limits

ANSWERS = {"scope": "grades CLI", "spec": "spec/README.md", "depth": "quick", "gate_n": "3",
           "target_kind": "warehouse"}
SCRIPTED = dict.fromkeys(("examiner", "builder", "tester", "judge"), "scripted")


def _cost(_kind: str) -> float:
    return 1.0


def test_flags_fill_the_survey_and_consent_is_recorded(tmp_path: Path) -> None:
    config = survey(ANSWERS, None, _cost, SCRIPTED, now=lambda: datetime(2026, 11, 29, 12, 0, tzinfo=UTC))  # type: ignore[arg-type]
    assert config.gate_n == 3 and config.spec == ["spec/README.md"]
    assert config.consent.given_at == "2026-11-29T12:00:00Z" and "no model spend" in config.consent.cost_note
    write_config(tmp_path, config)
    assert load_config(tmp_path) == config
    with pytest.raises(UsageError, match="exists"):
        write_config(tmp_path, config)


def test_questions_are_asked_with_the_cost_note_inline() -> None:
    asked: list[str] = []

    def ask(question: str) -> str:
        asked.append(question)
        return "deep" if "Depth" in question else "2" if "gate" in question else "x"

    config = survey({**ANSWERS, "depth": None, "gate_n": None}, ask, _cost, SCRIPTED)  # type: ignore[arg-type]
    assert config.depth == "deep" and config.gate_n == 2 and len(asked) == 2
    assert all("Cost per round" in q and "Answering is consent" in q for q in asked)
    assert "depth deep" in config.consent.cost_note  # the note recorded is of the settings as answered


def test_non_interactive_survey_names_the_missing_flags() -> None:
    with pytest.raises(UsageError, match="--scope, --gate-n"):
        survey({**ANSWERS, "scope": None, "gate_n": None}, None, _cost, SCRIPTED)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="rejected"):
        survey({**ANSWERS, "gate_n": "zero"}, None, _cost, SCRIPTED)  # type: ignore[arg-type]


def test_cost_note_for_live_drivers() -> None:
    note = cost_note("standard", 2.0, {"examiner": "anthropic", "builder": "in-session", "tester": "openai",
                                       "judge": "anthropic"})
    assert "about 75 model calls" in note and "600,000 input" in note and "2x" in note


def _config(**change: object) -> AcceptanceConfig:
    return survey(ANSWERS, None, _cost, SCRIPTED).model_copy(update=change)  # type: ignore[arg-type]


def test_spec_check(tmp_path: Path) -> None:
    assert not check_spec(tmp_path, _config()).ok
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "README.md").write_text("   \n")
    assert "empty" in check_spec(tmp_path, _config()).detail
    (tmp_path / "spec" / "README.md").write_text("the spec\n")
    assert check_spec(tmp_path, _config()).ok
    assert not check_spec(tmp_path, _config(spec=["../outside.md"])).ok


def test_git_check(tmp_path: Path) -> None:
    assert "not a git work tree" in check_git(tmp_path).detail
    def git(*a: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *a], cwd=tmp_path, check=True,
                       capture_output=True)
    git("init", "-q")
    (tmp_path / "a.txt").write_text("1\n")
    git("add", "-A")
    git("commit", "-qm", "baseline")
    assert check_git(tmp_path).ok
    (tmp_path / "a.txt").write_text("2\n")
    assert "uncommitted changes" in check_git(tmp_path).detail


def test_init_command(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "README.md").write_text("the spec\n")
    code, out, _ = cli("init", tmp_path, "--scope", "grades", "--spec", "spec/README.md", "--depth", "quick",
                       "--gate-n", "3", "--target-kind", "warehouse", "--non-interactive")
    assert code == 0 and "consent recorded" in out and (tmp_path / "acceptance.yaml").exists()
    code, _, err = cli("init", tmp_path / "other", "--non-interactive")
    assert code == 2 and "--scope" in err


EVERY_FLAG = ("--scope", "grades", "--spec", "spec/README.md", "--depth", "deep", "--gate-n", "2",
              "--target-kind", "document", "--target", "run/target.yaml", "--exam", "the-exam", "--evidence",
              "/tmp/evidence-x", "--script", "scripted/roles.yaml", "--budget-usd", "7.5",
              "--driver", "examiner=anthropic", "--driver", "builder=command", "--driver", "tester=in-session",
              "--driver", "judge=openai", "--model", "judge=gpt-x", "--model-option", "judge.base_url=http://127.0.0.1:9",
              "--model-option", "judge.api=chat", "--model-option", "judge.api_key_env=MY_KEY",
              "--model-option", "judge.temperature=none", "--command", "builder=agent --flag 'two words'",
              "--limit", "tester.turns=5", "--limit", "tester.seconds=60", "--limit", "tester.budget_usd=0.5",
              "--limit", "tester.output_bytes=2048", "--limit", "tester.write_bytes=131072",
              "--mutmut", "4", "--hunt-seeds", "3", "--jobs", "1", "--samples", "3", "--floor", "0.6",
              "--non-interactive")


def test_init_sets_every_field_by_flag_and_prints_the_cost_note_it_records(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "README.md").write_text("the spec\n")
    code, out, err = cli("init", tmp_path, *EVERY_FLAG)
    assert code == 0, err
    config = load_config(tmp_path)
    assert out.splitlines()[0] == config.consent.cost_note and "depth deep" in config.consent.cost_note
    assert config.model_dump(exclude={"consent"}) == {
        "schema_version": 1, "scope": "grades", "spec": ["spec/README.md"], "depth": "deep", "gate_n": 2,
        "target_kind": "document", "target": "run/target.yaml", "exam": "the-exam", "evidence": "/tmp/evidence-x",
        "drivers": {"examiner": "anthropic", "builder": "command", "tester": "in-session", "judge": "openai"},
        "script": "scripted/roles.yaml", "budget_usd": 7.5,
        "models": {"judge": {"model": "gpt-x", "base_url": "http://127.0.0.1:9", "api": "chat",
                             "api_key_env": "MY_KEY", "temperature": None}},
        "commands": {"builder": ["agent", "--flag", "two words"]},
        "limits": {"tester": {"turns": 5, "seconds": 60.0, "budget_usd": 0.5, "output_bytes": 2048,
                              "write_bytes": 131072}},
        "mutation": {"mutmut": 4, "hunt_seeds": 3, "jobs": 1}, "weakening": {"samples": 3, "floor": 0.6}}
    # a field added later without a flag fails here
    for model, name in ((AcceptanceConfig, ""), (ModelSpec, "models.judge"), (Limits, "limits.tester"),
                        (MutationSettings, "mutation"), (WeakeningSettings, "weakening")):
        value = config if not name else _at(config, name)
        for field, info in model.model_fields.items():
            if field not in ("schema_version", "consent") and not info.is_required():
                assert getattr(value, field) != info.get_default(call_default_factory=True), f"{name}.{field}"


def _at(config: AcceptanceConfig, dotted: str) -> object:
    first, _, role = dotted.partition(".")
    value = getattr(config, first)
    return value[role] if role else value


@pytest.mark.parametrize(("flags", "message"), [
    (("--limit", "tester=5"), "--limit 'tester=5' is not ROLE.KEY=VALUE"),
    (("--model", "bob=x"), "--model 'bob=x' names no role"),
    (("--command", "builder"), "--command 'builder' is not ROLE=VALUE"),
    (("--limit", "tester.secs=1"), "survey answer rejected: limits.tester.secs: unknown key 'secs'"),
    (("--jobs", "0"), "survey answer rejected: mutation.jobs: Input should be greater than or equal to 1"),
    (("--command", "builder=agent 'open"), "--command builder=\"agent 'open\": No closing quotation"),
])
def test_init_flags_that_are_wrong_get_one_line(tmp_path: Path, cli, flags: tuple[str, ...], message: str) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "README.md").write_text("the spec\n")
    code, _, err = cli("init", tmp_path, *ANSWER_FLAGS, *flags)
    assert code == 2 and err.startswith(f"tri-agent: error: {message}") and err.count("\n") == 1
    assert not (tmp_path / "acceptance.yaml").exists()


ANSWER_FLAGS = ("--scope", "s", "--spec", "spec/README.md", "--depth", "quick", "--gate-n", "3", "--target-kind",
                "warehouse", "--non-interactive")
