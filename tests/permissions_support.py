"""Test helpers for the permission gate.

``StubClassifier`` is a TEST DOUBLE for ``stockade.risk.classify``: it knows nothing about
shell syntax, it splits on `` && `` and gives each segment the tier of the first table prefix
it starts with. Gate tests use it to state tiers and rule ids exactly; the tests in
``test_permissions_real_classifier.py`` run the gate with the real classifier.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from stockade.permissions.autonomy import Autonomy
from stockade.permissions.config import PermissionConfig
from stockade.permissions.gate import Gate
from stockade.permissions.ledger import Ledger
from stockade.permissions.rules import RuleStore
from stockade.sandbox.posture import Posture
from stockade.tiers import Tier


@dataclass(frozen=True)
class StubReason:
    rule_id: str
    segment: str
    tier: Tier
    detail: str = ""


@dataclass(frozen=True)
class StubSubstitution:
    kind: str
    segments: tuple[StubSegment, ...]


@dataclass(frozen=True)
class StubSegment:
    text: str
    words: tuple[str, ...]
    env_stripped: str
    substitutions: tuple[StubSubstitution, ...] = ()


@dataclass(frozen=True)
class StubAssessment:
    tier: Tier
    reasons: tuple[StubReason, ...]
    segments: tuple[StubSegment, ...]


_ASSIGNMENT = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)+")
_SUBSTITUTION = re.compile(r"\$\(([^()]*)\)")

# prefix -> (tier, rule id); first match wins, so list longer prefixes first.
DEFAULT_TABLE: dict[str, tuple[Tier, str]] = {
    "sudo": (Tier.DESTRUCTIVE, "privilege.sudo"),
    "rm -rf /": (Tier.DESTRUCTIVE, "rm.recursive-force-root"),
    "rm -rf": (Tier.DESTRUCTIVE, "rm.recursive-force"),
    "rm": (Tier.HIGH, "rm.files"),
    "git status": (Tier.READ_ONLY, "git.read"),
    "git push --force": (Tier.DESTRUCTIVE, "git.force-push"),
    "git push": (Tier.HIGH, "git.push"),
    "git commit": (Tier.MEDIUM, "git.commit"),
    "ls": (Tier.READ_ONLY, "program.read-only"),
    "cat": (Tier.READ_ONLY, "program.read-only"),
    "echo": (Tier.READ_ONLY, "program.read-only"),
    "pytest": (Tier.LOW, "program.low"),
    "touch": (Tier.LOW, "program.low"),
    "make": (Tier.MEDIUM, "program.medium"),
    "sed -i": (Tier.MEDIUM, "program.medium"),
    "npm install": (Tier.HIGH, "package.install"),
    "curl": (Tier.HIGH, "network.download"),
    "python -c": (Tier.DESTRUCTIVE, "interpreter.inline"),
}


@dataclass
class StubClassifier:
    """TEST DOUBLE for ``stockade.risk.classify`` (see the module docstring)."""

    table: Mapping[str, tuple[Tier, str]] = field(default_factory=lambda: dict(DEFAULT_TABLE))
    extra_reasons: tuple[StubReason, ...] = ()  # reasons naming no segment
    overall: Tier | None = None  # force the overall tier (above the segments')
    calls: list[str] = field(default_factory=list)

    def __call__(self, command: str) -> StubAssessment:
        self.calls.append(command)
        segments: list[StubSegment] = []
        reasons: list[StubReason] = []
        for text in (t.strip() for t in command.split(" && ")):
            if text:
                segments.append(self._segment(text, reasons))
        reasons.extend(self.extra_reasons)
        tier = max((r.tier for r in reasons), default=Tier.READ_ONLY)
        if self.overall is not None:
            tier = max(tier, self.overall)
        return StubAssessment(tier, tuple(reasons), tuple(segments))

    def _segment(self, text: str, reasons: list[StubReason]) -> StubSegment:
        stripped = _ASSIGNMENT.sub("", text)
        unquoted = stripped.replace("'", "").replace('"', "")
        words = tuple(unquoted.split())
        name = words[0].rsplit("/", 1)[-1] if words else ""
        normal = " ".join((name, *words[1:]))
        tier, rule_id = Tier.DESTRUCTIVE, "unknown.program"
        for prefix, found in self.table.items():
            if normal == prefix or normal.startswith(prefix + " "):
                tier, rule_id = found
                break
        reasons.append(StubReason(rule_id, text, tier, f"stub: {rule_id}"))
        substitutions = []
        for inner in _SUBSTITUTION.findall(text):
            substitutions.append(StubSubstitution("$(", (self._segment(inner, reasons),)))
        return StubSegment(text, words, stripped, tuple(substitutions))


def posture(*, confined: bool = True, proven: bool = True) -> Posture:
    return Posture(
        backend="bwrap" if confined else "none",
        confined=confined,
        proven=proven,
        filesystem="writes confined to 1 root" if confined else "unconfined",
        network="denied" if confined else "unconfined",
        pid_namespace=confined,
        env_scrubbed=True,
        masked_paths=3 if confined else 0,
    )


def make_gate(
    tmp_path: Path,
    *,
    autonomy: Autonomy | str = Autonomy.BALANCED,
    classifier: StubClassifier | None = None,
    config: PermissionConfig | None = None,
    project: Path | None = None,
    sandbox: Posture | None = None,
    session_id: str | None = None,
) -> Gate:
    """A gate with a stub classifier and private databases under ``tmp_path``."""
    project_dir = project if project is not None else tmp_path / "project"
    project_dir.mkdir(parents=True, exist_ok=True)
    return Gate(
        project=project_dir,
        autonomy=autonomy,
        posture=sandbox if sandbox is not None else posture(),
        config=config,
        store=RuleStore(tmp_path / "permissions.db"),
        ledger=Ledger(tmp_path / "ledger.db"),
        session_id=session_id,
        classifier=classifier if classifier is not None else StubClassifier(),
    )
