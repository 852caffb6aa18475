"""Exit codes and the one exception tree.

Every command exits with one of these codes, and every error the library raises carries its code::

    TriAgentError                 (base; never raised directly)
    ├── BuilderTurn               1  an acceptance waits for the in-session builder to fix its tickets
    ├── UsageError                2  a flag, argument or option is wrong or missing
    │   └── NotReady            2|3|7 a project is not ready to run: every problem, found before any evidence
    ├── MalformedInput            3  an input file cannot be read as what it claims to be
    ├── TamperDetected            4  sealed evidence changed, or a seal rule was broken
    ├── PolicyViolation           5  a role or contract broke the rules of the protocol
    │   └── GateRefusal        10-15 a patch broke a rule of its repository's gate (each rule its own code)
    ├── LeakDetected              6  sealed answer values found where they must not be
    ├── InfrastructureFailure     7  the harness itself could not run (non-determinism, IO, timeouts)
    │   └── NotDeterministic      7  two runs of the same cases differed (it names them)
    └── Escalation                8  a ticket exhausted its fix attempts; a human must decide

    (exit 9 is a result, not an error: the protocol passed but the run cannot certify acceptance; so are
    16 to 18, the test signals of ``tri-agent evidence``: no run of this very tree, tests removed since the base
    without a reason on record, tests a judge flagged as weakened)

The patch gate's rules each have a code of their own, so a dashboard never lumps "the agent cheated the suite"
with "the agent broke an invariant": 10 a forbidden path touched, 11 the scoring surface changed, 12 a test
taken off the run (or code reaching into the runner), 13 a rule of the flake ledger broken, 14 the fixture lock
broken, 15 a held-out test that leans on the patch.

Honest failure (something scored red) is exit 1 and is a *result*, not an exception: a score report
with verdict ``fail``. Policy, tamper and leak codes are kept apart from honest failures so that a
script can never mistake a broken exam for a broken target.

Messages name the thing, the place (file:line, field, value) and what to do next, on one line.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """The documented exit codes of every ``tri-agent`` command."""

    PASS = 0
    FAIL = 1
    USAGE = 2
    MALFORMED = 3
    TAMPER = 4
    POLICY = 5
    LEAK = 6
    INFRASTRUCTURE = 7
    ESCALATION = 8
    NOT_CERTIFIED = 9
    GATE_FORBIDDEN = 10
    GATE_SURFACE = 11
    GATE_MARKS = 12
    GATE_LEDGER = 13
    GATE_FIXTURES = 14
    GATE_ORACLE = 15
    EVIDENCE_MISSING = 16
    TESTS_REDUCED = 17
    TESTS_WEAKENED = 18


MEANING: dict[ExitCode, str] = {  # what each code says, in the words of every help text and document
    ExitCode.PASS: "pass", ExitCode.FAIL: "failed", ExitCode.USAGE: "usage", ExitCode.MALFORMED: "malformed input",
    ExitCode.TAMPER: "tamper", ExitCode.POLICY: "policy", ExitCode.LEAK: "leak",
    ExitCode.INFRASTRUCTURE: "infrastructure", ExitCode.ESCALATION: "escalation",
    ExitCode.NOT_CERTIFIED: "passed, not certified",
    ExitCode.GATE_FORBIDDEN: "gate: forbidden path", ExitCode.GATE_SURFACE: "gate: scoring surface changed",
    ExitCode.GATE_MARKS: "gate: a test taken off the run", ExitCode.GATE_LEDGER: "gate: flake ledger",
    ExitCode.GATE_FIXTURES: "gate: fixture lock", ExitCode.GATE_ORACLE: "gate: oracle independence",
    ExitCode.EVIDENCE_MISSING: "evidence: no test run of this tree", ExitCode.TESTS_REDUCED: "evidence: tests removed",
    ExitCode.TESTS_WEAKENED: "evidence: tests weakened",
}


class TriAgentError(Exception):
    """Root of every error tri_agent raises on purpose."""

    exit_code: ExitCode = ExitCode.INFRASTRUCTURE

    def __init__(self, message: str, *, hint: str = "") -> None:
        self.message = message
        self.hint = hint
        super().__init__(self.line())

    def line(self) -> str:
        """The single line a user sees: what was wrong, where, and what to do next."""
        return f"{self.message}; {self.hint}" if self.hint else self.message


class BuilderTurn(TriAgentError):
    exit_code = ExitCode.FAIL


class UsageError(TriAgentError):
    exit_code = ExitCode.USAGE


class NotReady(UsageError):
    """Every problem that keeps a project from running, found at once; exits with the first one's code."""

    def __init__(self, problems: list[TriAgentError]) -> None:
        self.problems = problems
        self.exit_code = problems[0].exit_code
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(f"not ready to run: {problems[0].line()}{more}",
                         hint="run tri-agent check PROJECT to see every problem")

    def lines(self) -> list[str]:
        return [p.line() for p in self.problems]


class MalformedInput(TriAgentError):
    exit_code = ExitCode.MALFORMED

    def __init__(self, message: str, *, where: str = "", hint: str = "") -> None:
        self.where = where
        super().__init__(f"{where}: {message}" if where else message, hint=hint)


class TamperDetected(TriAgentError):
    exit_code = ExitCode.TAMPER


class PolicyViolation(TriAgentError):
    exit_code = ExitCode.POLICY


class GateRefusal(PolicyViolation):
    """A patch refused by a rule of its repository's gate: the rule's own code (10 to 15), every finding named."""

    def __init__(self, code: ExitCode, message: str, *, hint: str = "") -> None:
        self.exit_code = code
        super().__init__(message, hint=hint)


class LeakDetected(TriAgentError):
    exit_code = ExitCode.LEAK


class InfrastructureFailure(TriAgentError):
    exit_code = ExitCode.INFRASTRUCTURE


class NotDeterministic(InfrastructureFailure):
    def __init__(self, message: str, *, cases: list[str], hint: str = "") -> None:
        self.cases = cases
        super().__init__(message, hint=hint)


class Escalation(TriAgentError):
    exit_code = ExitCode.ESCALATION
