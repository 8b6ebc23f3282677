"""``stockade permissions list | add | remove``: the rules that decide, and the recent ledger.

Text output is for people: every command and pattern is one printable line of bounded length
(control and bidi characters escaped, long text clipped); ``--json`` carries everything whole.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from stockade.errors import UsageError
from stockade.permissions.rules import (
    RETIRED_NAMESPACES,
    Namespace,
    Rule,
    RuleDecision,
    RuleStore,
    canonical_project,
    refuse_retired,
)
from stockade.printable import clipped

RECENT = 10

_project_option = click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The project the rules belong to. Default: the current directory.",
)
_json_option = click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")


def _project(project: Path | None) -> str:
    return canonical_project(project or os.getcwd())


@click.group()
def permissions() -> None:
    """List, add and remove permission rules (persisted per project in your data dir)."""


@permissions.command(name="list")
@_project_option
@_json_option
def list_rules(project: Path | None, as_json: bool) -> int:
    """Built-in rules (counts), custom rules in priority order with ids, domain rules, the
    answers kept for STOCKADE_SESSION_ID sessions, workspace trust, and the recent ledger."""
    from stockade.cli.gate_options import permission_config
    from stockade.permissions.gate import BUILTIN_ASK_RULES, HARD_DENY_RULES
    from stockade.permissions.ledger import Ledger
    from stockade.permissions.rules import priority
    from stockade.settings import Settings

    key = _project(project)
    settings = Settings.load(project)
    store = RuleStore()
    rules = priority([*permission_config(settings).rules(), *store.rules(key)])
    sessions = store.all_session_rules(key)
    retired = store.retired_rows(key)
    trust = _trust_state(settings)
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
            "session_rules": [{**_rule_dict(r), "session": s} for s, r in sessions],
            "retired": [{"id": i, "namespace": n, "pattern": p} for i, n, p in retired],
            "workspace_trust": trust,
            "recent": [e.to_dict() for e in recent],
        }
        click.echo(json.dumps(data, indent=2))
        return 0
    click.echo(f"project: {clipped(key)}")
    click.echo(
        f"built-in: {len(HARD_DENY_RULES)} hard denies (never allowed), "
        f"{len(BUILTIN_ASK_RULES)} ask defaults ({builtin_ask_patterns} patterns)"
    )
    shell_rules = [r for r in rules if r.namespace is not Namespace.DOMAIN]
    domain_rules = [r for r in rules if r.namespace is Namespace.DOMAIN]
    click.echo("rules, in priority order (first match wins):")
    for rule in shell_rules:
        click.echo(f"  {_rule_line(rule)}")
    if not shell_rules:
        click.echo("  (none) - add one with: stockade permissions add allow 'npm test *'")
    click.echo("domain rules:")
    for rule in domain_rules:
        click.echo(f"  {_rule_line(rule)}")
    if not domain_rules:
        click.echo("  (none)")
    if sessions:
        click.echo("kept for sessions (STOCKADE_SESSION_ID; forgotten after a day):")
        for session, rule in sessions:
            click.echo(f"  {_rule_line(rule)}  session {clipped(session, 40)}")
    for rule_id, namespace, pattern in retired:
        click.echo(
            f"  ignored: {rule_id}  {namespace}:{clipped(pattern)} (retired namespace; "
            f"remove it: stockade permissions remove {rule_id})"
        )
    click.echo(f"workspace trust: {trust['summary']}")
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
    type=click.Choice([n.value for n in Namespace] + sorted(RETIRED_NAMESPACES)),
    default=Namespace.BASH.value,
    show_default=True,
    help="What the pattern matches: shell commands, hosts, or MCP tools (mcp.<server>.<tool>).",
)
@_project_option
@_json_option
def add(decision: str, pattern: str, namespace: str, project: Path | None, as_json: bool) -> int:
    """Persist a rule for this project: DECISION (allow/ask/deny) and a glob PATTERN.

    An allow rule that would allow every command, or that can never apply because what it
    matches is a built-in hard deny (`sudo *`), is refused.

    \b
    stockade permissions add allow 'npm test *'
    stockade permissions add deny 'git push *'
    stockade permissions add allow --namespace domain '*.pypi.org'
    stockade permissions add allow --namespace mcp 'mcp.github.get_*'
    """
    from stockade.permissions.gate import Gate
    from stockade.permissions.generalise import check_new_rule
    from stockade.permissions.rules import validate_pattern

    refuse_retired(namespace)
    kind = Namespace(namespace)
    choice = RuleDecision(decision)
    canonical = validate_pattern(kind, pattern)
    gate = Gate(project=_project(project), autonomy="yolo")
    refusal, warnings = check_new_rule(kind, canonical, choice, gate.hard_denied)
    if refusal is not None:
        raise UsageError(refusal, fix="write a narrower pattern, e.g. 'npm test *'")
    rule = RuleStore().add(
        _project(project), kind, canonical, choice, source="stockade permissions add"
    )
    if as_json:
        click.echo(json.dumps({"added": _rule_dict(rule), "warnings": warnings}, indent=2))
        return 0
    for warning in warnings:
        click.echo(f"stockade: warning: {warning}", err=True)
    click.echo(f"{rule.id}  {rule.decision} {rule.namespace}:{clipped(rule.pattern)}")
    return 0


@permissions.command()
@click.argument("rule_id", metavar="ID")
@_json_option
def remove(rule_id: str, as_json: bool) -> int:
    """Remove a persisted rule (or a kept session answer) by its id (see `permissions list`)."""
    store = RuleStore()
    removed = store.remove(rule_id)
    retired = store.remove_retired(rule_id) if removed is None else None
    if retired is not None:
        namespace, pattern = retired
        if as_json:
            data = {"id": rule_id, "namespace": namespace, "pattern": pattern, "retired": True}
            click.echo(json.dumps({"removed": data}, indent=2))
        else:
            click.echo(f"removed {rule_id}  {namespace}:{clipped(pattern)} (retired namespace)")
        return 0
    if removed is None:
        hint = (
            "rules from settings (c-...) are removed by editing the settings file"
            if rule_id.startswith("c-")
            else "see the ids with: stockade permissions list"
        )
        raise UsageError(f"no persisted rule with id {clipped(rule_id, 40)!r}", fix=hint)
    if as_json:
        click.echo(json.dumps({"removed": _rule_dict(removed)}, indent=2))
        return 0
    click.echo(
        f"removed {removed.id}  {removed.decision} {removed.namespace}:{clipped(removed.pattern)}"
    )
    return 0


def _trust_state(settings: Any) -> dict[str, Any]:
    """Workspace trust as `stockade trust` records it (the one place trust is decided)."""
    from stockade.trust import find_record

    status = settings.trust
    record = find_record(settings.project) if status.trusted else None
    if not status.needed:
        summary = "nothing to trust (the project's settings only tighten)"
    elif status.trusted and record is not None:
        summary = f"trusted since {record.trusted_at} (stockade trust --revoke to undo)"
    elif status.stale:
        summary = "not trusted: its settings changed since you trusted them (stockade trust)"
    else:
        summary = "not trusted: its loosening settings are ignored (stockade trust)"
    return {**status.to_dict(), "since": record.trusted_at if record else None, "summary": summary}


def _rule_line(rule: Rule) -> str:
    return f"{rule.id}  {rule.decision:5} {rule.namespace}:{clipped(rule.pattern)}  ({rule.scope})"


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
        f"{stamp}  {entry.decision}{answer}  {entry.tier or '-'}  {clipped(entry.action)}  "
        f"[{entry.source}]"
    )
