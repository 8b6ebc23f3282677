"""The autonomy ladder: every row of the table, aliases, precedence, the proven-sandbox rule."""

from __future__ import annotations

import pytest

from stockade.errors import ConfigError, UsageError
from stockade.permissions.autonomy import (
    ALIASES,
    LADDER,
    Autonomy,
    choose_autonomy,
    effective_autonomy,
    parse_autonomy,
)
from stockade.tiers import Tier
from tests.permissions_support import posture

R, L, M, H, D = Tier.READ_ONLY, Tier.LOW, Tier.MEDIUM, Tier.HIGH, Tier.DESTRUCTIVE

# The table: level -> the tiers that run without asking.
AUTO_RUNS = {
    Autonomy.ASK: set(),
    Autonomy.CONSERVATIVE: {R},
    Autonomy.BALANCED: {R, L, M},
    Autonomy.AUTO_ACCEPT: {R, L, M, H},
    Autonomy.YOLO: {R, L, M, H, D},
}


@pytest.mark.parametrize("level", list(Autonomy))
@pytest.mark.parametrize("tier", list(Tier))
def test_every_cell_of_the_ladder(level: Autonomy, tier: Tier) -> None:
    assert level.auto_runs(tier) is (tier in AUTO_RUNS[level])


def test_the_ladder_table_has_exactly_the_five_levels_in_order() -> None:
    assert [level.value for level in LADDER] == [
        "ask",
        "conservative",
        "balanced",
        "auto-accept",
        "yolo",
    ]
    ceilings = [rung.auto_runs_up_to for rung in LADDER.values()]
    assert ceilings == [None, R, M, H, D]


@pytest.mark.parametrize(
    ("text", "level"),
    [
        ("ask", Autonomy.ASK),
        ("default", Autonomy.ASK),
        ("conservative", Autonomy.CONSERVATIVE),
        ("Balanced", Autonomy.BALANCED),
        ("auto-accept", Autonomy.AUTO_ACCEPT),
        ("auto", Autonomy.AUTO_ACCEPT),
        ("accept", Autonomy.AUTO_ACCEPT),
        (" YOLO ", Autonomy.YOLO),
    ],
)
def test_levels_and_aliases_parse(text: str, level: Autonomy) -> None:
    assert parse_autonomy(text) is level


def test_no_alias_reaches_yolo() -> None:
    assert Autonomy.YOLO not in ALIASES.values()


def test_unknown_level_names_the_choices() -> None:
    with pytest.raises(UsageError) as caught:
        parse_autonomy("reckless")
    assert "reckless" in caught.value.message
    assert caught.value.fix is not None and "balanced" in caught.value.fix


def test_headless_defaults_to_ask_and_interactive_to_balanced() -> None:
    assert choose_autonomy(interactive=False).level is Autonomy.ASK
    assert choose_autonomy(interactive=True).level is Autonomy.BALANCED


def test_precedence_flag_then_env_then_settings_then_default() -> None:
    both = {"env": "conservative", "configured": "balanced", "interactive": False}
    assert choose_autonomy(flag="auto", **both).level is Autonomy.AUTO_ACCEPT  # type: ignore[arg-type]
    assert choose_autonomy(**both).level is Autonomy.CONSERVATIVE  # type: ignore[arg-type]
    chosen = choose_autonomy(configured="balanced", interactive=False)
    assert (chosen.level, chosen.origin) == (Autonomy.BALANCED, "[permissions] autonomy")
    assert choose_autonomy(env="", interactive=False).level is Autonomy.ASK


def test_yolo_is_reached_only_explicitly() -> None:
    assert choose_autonomy(yolo=True, interactive=False).level is Autonomy.YOLO
    assert choose_autonomy(env="yolo", interactive=False).level is Autonomy.YOLO
    assert choose_autonomy(flag="yolo", interactive=False).level is Autonomy.YOLO
    with pytest.raises(ConfigError) as caught:
        choose_autonomy(configured="yolo", interactive=True)
    assert "--yolo" in (caught.value.fix or "")


def test_yolo_flag_contradicting_autonomy_flag_is_an_error() -> None:
    with pytest.raises(UsageError):
        choose_autonomy(flag="ask", yolo=True, interactive=True)


def test_bad_env_value_names_the_variable() -> None:
    with pytest.raises(UsageError) as caught:
        choose_autonomy(env="wild", interactive=False)
    assert "STOCKADE_AUTONOMY" in caught.value.message


def test_auto_accept_keeps_its_ceiling_only_under_a_proven_confining_sandbox() -> None:
    proven = effective_autonomy(Autonomy.AUTO_ACCEPT, posture())
    assert proven.level is Autonomy.AUTO_ACCEPT and proven.warning is None
    for unproven in (
        None,
        posture(proven=False),
        posture(confined=False, proven=False),
        posture(confined=False, proven=True),
    ):
        lowered = effective_autonomy(Autonomy.AUTO_ACCEPT, unproven)
        assert lowered.level is Autonomy.BALANCED
        assert lowered.requested is Autonomy.AUTO_ACCEPT
        assert lowered.warning is not None and "balanced" in lowered.warning


@pytest.mark.parametrize("level", [a for a in Autonomy if a is not Autonomy.AUTO_ACCEPT])
def test_other_levels_do_not_depend_on_the_sandbox(level: Autonomy) -> None:
    assert effective_autonomy(level, None).level is level
    assert effective_autonomy(level, None).warning is None
