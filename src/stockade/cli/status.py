"""``stockade status``: what a command would be confined by here, and why if it cannot be."""

from __future__ import annotations

import json
import os
from typing import Any

import click

from stockade.cli.options import (
    problems_from_options,
    sandbox_for,
    sandbox_options,
    settings_from_options,
)
from stockade.errors import ConfigError, SandboxUnavailable
from stockade.sandbox.environment import SET_BY_STOCKADE, judge_environment


@click.command()
@sandbox_options
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def status(as_json: bool, **options: object) -> int:
    """Show the backend, posture, writable roots, masked paths, network mode and settings."""
    try:
        settings = settings_from_options(options)
    except ConfigError as error:
        return _invalid_settings(error, options, as_json)
    data: dict[str, Any]
    try:
        with sandbox_for(settings) as sandbox:
            policy = sandbox.policy
            data = {
                "available": True,
                "backend": sandbox.backend.name,
                "posture": sandbox.posture.to_dict(),
                "project": str(policy.project),
                "writable_roots": [str(p) for p in policy.writable],
                "masked_paths": [str(m.path) for m in policy.masked],
                "protected_paths": [str(p.path) for p in policy.protected],
                "guarded_paths": [str(g.path) for g in policy.guarded],
                "read_only_stores": [str(s) for s in policy.stores],
                "toolchain_stores": [str(s) for s in policy.toolchain_stores],
                "network": policy.network.value,
                "env_dropped": list(policy.dropped_env),
            }
            if sandbox.proxy is not None:
                domains = sandbox.proxy.policy
                data["proxy"] = {
                    "unix_socket": sandbox.proxy.handoff_path or sandbox.proxy.unix_path,
                    "tcp": "{}:{}".format(*sandbox.proxy.tcp_address)
                    if sandbox.proxy.tcp_address
                    else None,
                    "allowed_domains": [str(rule) for rule in domains.allowed],
                    "denied_domains": [str(rule) for rule in domains.denied],
                }
    except SandboxUnavailable as error:
        data = {"available": False, "reason": error.message, "fix": error.fix}
    data["environment"] = environment_listing(settings.sandbox.env_passthrough)
    data["settings"] = settings.summary()
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return 0
    from stockade.cli.render import console as make_console
    from stockade.cli.render import safe

    console = make_console()
    if not data["available"]:
        console.print(f"[red]no sandbox available[/red]: {safe(data['reason'])}")
        console.print(f"  [yellow]fix:[/yellow] {safe(data['fix'])}")
    else:
        console.print(f"[bold]posture[/bold]   {data['posture']['summary']}")
        for gap in data["posture"]["gaps"]:
            console.print(f"  [yellow]not enforced:[/yellow] {safe(gap)}")
        console.print(f"[bold]network[/bold]   {data['network']}")
        if "proxy" in data:
            proxy = data["proxy"]
            console.print(
                f"  proxy     {safe(proxy['unix_socket'])} (jail: 127.0.0.1:3128), "
                f"{safe(proxy['tcp'])} (host loopback)"
            )
            allowed = ", ".join(map(safe, proxy["allowed_domains"])) or "nothing"
            console.print(f"  allowed   {allowed}")
            console.print("  denied    " + (", ".join(map(safe, proxy["denied_domains"])) or "-"))
        writable = "\n          ".join(map(safe, data["writable_roots"]))
        console.print(f"[bold]writable[/bold]  {writable}")
        masked = "\n          ".join(map(safe, data["masked_paths"])) or "-"
        console.print(f"[bold]masked[/bold]    {masked}")
        console.print(
            f"[bold]protected[/bold] {len(data['protected_paths'])} paths read-only "
            f"inside writable roots; {len(data['guarded_paths'])} more judged when a "
            "command creates them"
        )
        if data["read_only_stores"]:
            console.print(
                "[bold]stores[/bold]    read-only: "
                + ", ".join(map(safe, data["read_only_stores"]))
            )
    print_environment(console, data["environment"])
    print_settings_summary(console, data["settings"])
    return 0


def environment_listing(passthrough: tuple[str, ...]) -> dict[str, Any]:
    """Which of this shell's variables a confined command gets and which stay on the host,
    with the reason - names only, never values."""
    passed, dropped = judge_environment(os.environ, passthrough)
    return {
        "passed": sorted({*passed, *SET_BY_STOCKADE}),
        "passed_explicitly": sorted(set(passthrough) & set(os.environ)),
        "dropped": [{"name": d.name, "reason": d.reason} for d in dropped],
    }


def print_environment(console: Any, listing: dict[str, Any]) -> None:
    """The environment listing; variable names come from the host's environment, so they are
    printed through ``safe`` like any other outside text."""
    from stockade.cli.render import safe

    passed = ", ".join(map(safe, listing["passed"]))
    console.print(f"[bold]env[/bold]       {len(listing['passed'])} pass: {passed}")
    if listing["passed_explicitly"]:
        explicit = ", ".join(map(safe, listing["passed_explicitly"]))
        console.print(f"          passed by name: {explicit}")
    by_reason: dict[str, list[str]] = {}
    for entry in listing["dropped"]:
        by_reason.setdefault(entry["reason"], []).append(entry["name"])
    if by_reason:
        console.print(f"          {len(listing['dropped'])} stay on the host (values never shown):")
        for reason, names in sorted(by_reason.items()):
            console.print(f"            {safe(reason)}: " + ", ".join(map(safe, names)))
        console.print("          [yellow]fix:[/yellow] pass one by name: --env NAME")


def print_settings_summary(console: Any, summary: dict[str, Any]) -> None:
    """Layers, list counts, trust and every ignored loosening entry (shared with doctor)."""
    from stockade.cli.render import safe

    console.print(
        "[bold]settings[/bold]  valid; layers: " + (", ".join(summary["loaded"]) or "none")
    )
    console.print(f"          {summary['counts_line']}")
    trust = summary["trust"]
    if summary["ignored"]:
        changed = " (changed since you trusted it)" if trust["stale"] else ""
        console.print(
            f"[bold]trust[/bold]     [yellow]untrusted workspace{changed}[/yellow]: "
            f"{len(summary['ignored'])} loosening entries ignored"
        )
        for entry in summary["ignored"]:
            origin = entry["origin"]
            where = f"{origin['source']}:{origin['line']}" if origin["line"] else origin["source"]
            console.print(
                f"          ignored {safe(entry['key'])} = {safe(entry['value'])} "
                f"({safe(where)}): {safe(entry['reason'])}"
            )
        console.print("          [yellow]fix:[/yellow] review them, then `stockade trust`")
    elif trust["needed"]:
        console.print("[bold]trust[/bold]     trusted workspace: its loosening settings apply")


def _invalid_settings(error: ConfigError, options: dict[str, Any], as_json: bool) -> int:
    """Status cannot describe a sandbox from invalid settings: list every problem, exit 2."""
    problems = problems_from_options(options)
    listed = [p.to_dict() for p in problems] or [{"message": error.message, "fix": error.fix}]
    if as_json:
        data = {
            "available": False,
            "reason": error.message,
            "fix": error.fix,
            "settings": {"valid": False, "problems": listed},
        }
        click.echo(json.dumps(data, indent=2))
        return error.exit_code
    click.echo(f"stockade: {error.message}", err=True)
    for problem in problems[1:]:
        click.echo(f"  also: {problem}", err=True)
    if error.fix:
        click.echo(f"  fix: {error.fix}", err=True)
    return error.exit_code
