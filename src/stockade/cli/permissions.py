"""``stockade permissions list | add | remove``: the rules that decide, and the recent ledger."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from stockade.errors import UsageError
from stockade.permissions.rules import Namespace, Rule, RuleDecision, RuleStore, canonical_project

RECENT = 10

_project_option = click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The project the rules belong to. Default: the current directory.",
)


def _project(project: Path | None) -> str:
    return canonical_project(project or os.getcwd())


@click.group()
def permissions() -> None:
    """List, add and remove permission rules (persisted per project in your data dir)."""


@permissions.command(name="list")
@_project_option
@click.option("--json", "as_json", is_flag=True, help="Print everything as JSON.")
def list_rules(project: Path | None, as_json: bool) -> int:
    """Built-in rules (counts), custom rules in priority order with ids, domain rules, and the
    recent ledger for this project."""
    from stockade.cli.gate_options import permission_config
    from stockade.permissions.gate import BUILTIN_ASK_RULES, HARD_DENY_RULES
    from stockade.permissions.ledger import Ledger
    from stockade.permissions.rules import priority
    from stockade.settings import Settings

    key = _project(project)
    settings = Settings.load(project)
    rules = priority([*permission_config(settings).rules(), *RuleStore().rules(key)])
    recent = Ledger().entries(project=key, limit=RECENT)
    builtin_ask_patterns = sum(len(p) for p in BUILTIN_ASK_RULES.values())
    if as_json:
        data = {
            "project": key,
            "builtin": {
                "hard_deny": sorted(HARD_DENY_RULES),
                "ask_defaults": {k: list(v) for k, v in BUILTIN_ASK_RULES.items()},
            },
            "rules": [_rule_dict(r) for r in rules],
            "recent": [e.to_dict() for e in recent],
        }
        click.echo(json.dumps(data, indent=2))
        return 0
    click.echo(f"project: {key}")
    click.echo(
        f"built-in: {len(HARD_DENY_RULES)} hard denies (never allowed), "
        f"{len(BUILTIN_ASK_RULES)} ask defaults ({builtin_ask_patterns} patterns)"
    )
    shell_rules = [r for r in rules if r.namespace is not Namespace.DOMAIN]
    domain_rules = [r for r in rules if r.namespace is Namespace.DOMAIN]
    click.echo("rules, in priority order (first match wins):")
    for rule in shell_rules or []:
        click.echo(f"  {_rule_line(rule)}")
    if not shell_rules:
        click.echo("  (none) - add one with: stockade permissions add allow 'npm test *'")
    click.echo("domain rules:")
    for rule in domain_rules:
        click.echo(f"  {_rule_line(rule)}")
    if not domain_rules:
        click.echo("  (none)")
    click.echo(f"recent decisions (last {RECENT}):")
    for entry in recent:
        click.echo(f"  {_ledger_line(entry)}")
    if not recent:
        click.echo("  (none)")
    return 0


@permissions.command()
@click.argument("decision", type=click.Choice([d.value for d in RuleDecision]))
@click.argument("pattern")
@click.option(
    "--namespace",
    type=click.Choice([n.value for n in Namespace]),
    default=Namespace.BASH.value,
    show_default=True,
    help="What the pattern matches.",
)
@_project_option
def add(decision: str, pattern: str, namespace: str, project: Path | None) -> int:
    """Persist a rule for this project: DECISION (allow/ask/deny) and a glob PATTERN.

    \b
    stockade permissions add allow 'npm test *'
    stockade permissions add deny 'git push *'
    stockade permissions add allow --namespace domain '*.pypi.org'
    """
    rule = RuleStore().add(
        _project(project),
        Namespace(namespace),
        pattern,
        RuleDecision(decision),
        source="stockade permissions add",
    )
    click.echo(f"{rule.id}  {rule.decision} {rule.namespace}:{rule.pattern}")
    return 0


@permissions.command()
@click.argument("rule_id", metavar="ID")
def remove(rule_id: str) -> int:
    """Remove a persisted rule by its id (see `stockade permissions list`)."""
    removed = RuleStore().remove(rule_id)
    if removed is None:
        hint = (
            "rules from settings (c-...) are removed by editing the settings file"
            if rule_id.startswith("c-")
            else "see the ids with: stockade permissions list"
        )
        raise UsageError(f"no persisted rule with id {rule_id!r}", fix=hint)
    click.echo(f"removed {removed.id}  {removed.decision} {removed.namespace}:{removed.pattern}")
    return 0


def _rule_line(rule: Rule) -> str:
    return f"{rule.id}  {rule.decision:5} {rule.namespace}:{rule.pattern}  ({rule.scope})"


def _rule_dict(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.id,
        "decision": rule.decision.value,
        "namespace": rule.namespace.value,
        "pattern": rule.pattern,
        "scope": rule.scope.value,
        "project": rule.project,
        "created": rule.created,
        "source": rule.source,
    }


def _ledger_line(entry: Any) -> str:
    import time

    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(entry.time))
    answer = f" ({entry.answer})" if entry.answer else ""
    return (
        f"{stamp}  {entry.decision}{answer}  {entry.tier or '-'}  {entry.action}  [{entry.source}]"
    )
