"""``compare --fail-on worse|different``: a gate for CI pipelines (issue 45, item 26).

The rule is stated before the data and printed before the result: exit status 1 when the
comparison's own decision rule declares B worse than A (``worse``), or declares either policy
better (``different``); 0 otherwise. Exit status 2 stays for errors.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FAIL_ON", "EXIT_GATE_FIRED", "Gate", "add_gate_option"]

#: Exit status of a gate that fired (errors keep 2).
EXIT_GATE_FIRED = 1

#: ``--fail-on`` choices -> the decisions ("A" = A beats B, "B" = B beats A) that fire them.
FAIL_ON = {"worse": ("A",), "different": ("A", "B")}

_RULE_WORDS = {
    "worse": "exit status 1 when the decision rule declares B worse than A (A beats B)",
    "different": "exit status 1 when the decision rule declares the policies different "
    "(either one beats the other)",
}


def add_gate_option(p) -> None:
    """Add ``--fail-on`` to ``compare``."""
    p.add_argument(
        "--fail-on",
        choices=tuple(FAIL_ON),
        help="CI gate: exit 1 when the decision rule finds B worse than A ('worse') or the "
        "two different ('different'); the rule is printed before the result; errors exit 2",
    )


@dataclass(frozen=True)
class Gate:
    """The pre-stated gate and whether the comparison fired it.

    Attributes
    ----------
    fail_on : str
        A key of :data:`FAIL_ON`.
    decision : str or None
        The comparison's decision: "A" (A beats B), "B" or None.
    """

    fail_on: str
    decision: str | None

    @property
    def fired(self) -> bool:
        """Whether the gate's rule holds (the command then exits with status 1)."""
        return self.decision in FAIL_ON[self.fail_on]

    @property
    def rule(self) -> str:
        """The rule, as printed before the result."""
        words = _RULE_WORDS[self.fail_on]
        return f"gate (stated before the data): --fail-on {self.fail_on}: {words}"

    @property
    def outcome(self) -> str:
        """The last line: what the gate found."""
        if not self.fired:
            return f"gate: pass (--fail-on {self.fail_on} did not fire): exit status 0"
        what = "B is worse than A" if self.decision == "A" else "B is better than A"
        return f"gate: FAIL ({what}; --fail-on {self.fail_on}): exit status {EXIT_GATE_FIRED}"

    @property
    def exit_status(self) -> int:
        return EXIT_GATE_FIRED if self.fired else 0

    def to_dict(self) -> dict:
        return {"fail_on": self.fail_on, "fired": self.fired}
