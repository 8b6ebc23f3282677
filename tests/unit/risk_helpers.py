"""Shared helpers for the risk classifier tests."""

from __future__ import annotations

from stockade.risk import Assessment, classify
from stockade.tiers import Tier

R = Tier.READ_ONLY
L = Tier.LOW
M = Tier.MEDIUM
H = Tier.HIGH
D = Tier.DESTRUCTIVE


def explain(assessment: Assessment) -> str:
    """A readable dump for assertion messages."""
    return "\n".join(
        f"  {r.tier.label:<11} {r.rule_id:<28} {r.segment!r}: {r.detail}"
        for r in assessment.reasons
    )


def assert_tier(command: str, expected: Tier) -> Assessment:
    assessment = classify(command)
    assert assessment.tier == expected, (
        f"{command!r}: expected {expected.label}, got {assessment.tier.label}\n"
        f"{explain(assessment)}"
    )
    return assessment


def assert_rule(command: str, rule_id: str, tier: Tier | None = None) -> Assessment:
    assessment = classify(command)
    assert rule_id in assessment.rule_ids, (
        f"{command!r}: expected rule {rule_id}\n{explain(assessment)}"
    )
    if tier is not None:
        assert assessment.tier == tier, (
            f"{command!r}: expected {tier.label}, got {assessment.tier.label}\n"
            f"{explain(assessment)}"
        )
    return assessment
