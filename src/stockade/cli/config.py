"""``stockade config validate | show``: check every settings layer, print the merged result."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click

from stockade.cli.options import config_option, project_option


@click.group()
def config() -> None:
    """Check and show the layered settings (user, project, local, environment)."""


@config.command()
@project_option
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def validate(project: Path | None, config_file: Path | None, as_json: bool) -> int:
    """Check every layer and list EVERY problem (file, line, key, fix); exit 2 if any."""
    from stockade.settings import FlagOverrides, validate_settings

    flags = FlagOverrides(config=config_file)
    layers, problems = validate_settings(project, flags=flags)
    if not problems:
        problems = _policy_problems(project, flags)
    if as_json:
        data = {
            "valid": not problems,
            "layers": [layer.to_dict() for layer in layers],
            "problems": [problem.to_dict() for problem in problems],
        }
        click.echo(json.dumps(data, indent=2))
        return 2 if problems else 0
    for layer in layers:
        if layer.source is None and not layer.loaded:
            continue
        state = "loaded" if layer.loaded else "not present"
        click.echo(f"{layer.name:<8} {layer.source or 'STOCKADE_* variables'} ({state})")
    for problem in problems:
        click.echo(f"✗ {problem}")
        if problem.fix:
            click.echo(f"    fix: {problem.fix}")
    if problems:
        count = len(problems)
        click.echo(f"\n{count} problem{'s' if count != 1 else ''}; stockade will not run")
        return 2
    click.echo("\nsettings are valid")
    return 0


def _policy_problems(project: Path | None, flags: Any) -> list[Any]:
    """Problems only the merged policy shows (a writable root inside a mask, say)."""
    import tempfile

    from stockade.errors import StockadeError
    from stockade.sandbox.policy import resolve_policy
    from stockade.settings import Problem, Settings

    try:
        settings = Settings.load(project, flags=flags)
        request = settings.policy_request(cwd=settings.project)
        resolve_policy(request, session_tmp=Path(tempfile.gettempdir()))
    except StockadeError as error:
        return [Problem("merged settings", None, "", error.message, error.fix)]
    return []


@config.command()
@project_option
@config_option
@click.option("--origin", is_flag=True, help="Say which layer (file and line) set each value.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def show(project: Path | None, config_file: Path | None, origin: bool, as_json: bool) -> int:
    """Print the merged settings (as TOML, or JSON), and what an untrusted project could not
    change."""
    from stockade.settings import FlagOverrides, Settings

    settings = Settings.load(project, flags=FlagOverrides(config=config_file))
    if as_json:
        data = {
            "project": str(settings.project),
            "settings": settings.to_dict(origins=origin),
            "layers": [layer.to_dict() for layer in settings.layers],
            "trust": settings.trust.to_dict(),
            "ignored": [entry.to_dict() for entry in settings.ignored],
        }
        click.echo(json.dumps(data, indent=2))
        return 0
    click.echo(render_toml(settings, origins=origin), nl=False)
    return 0


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def render_toml(settings: Any, *, origins: bool) -> str:
    """The merged settings as a valid TOML document; with ``origins`` each value carries a
    ``# layer (file:line)`` comment, and ignored entries are listed as comments at the end."""
    lines = [f"# merged settings for {settings.project}"]
    lines.append("# layers loaded: " + (", ".join(settings.loaded_layers()) or "none"))
    data = settings.to_dict(origins=True)
    for section in ("sandbox", "network", "permissions", "risk"):
        _render_table(lines, section, data.get(section, {}), origins)
    if settings.ignored:
        lines.append("")
        lines.append("# ignored (untrusted workspace; `stockade trust` enables them):")
        lines += [f"#   {entry}" for entry in settings.ignored]
    return "\n".join(lines) + "\n"


def _render_table(lines: list[str], name: str, table: dict[str, Any], origins: bool) -> None:
    lines += ["", f"[{name}]"]
    nested = []
    for key, item in table.items():
        if isinstance(item, dict) and "origin" not in item:
            nested.append((key, item))
            continue
        _render_item(lines, key, item, origins)
    for key, sub in nested:
        _render_table(lines, f"{name}.{key}", sub, origins)


def _render_item(lines: list[str], key: str, item: Any, origins: bool) -> None:
    key_text = key if _BARE_KEY.match(key) else json.dumps(key)
    if isinstance(item, list):
        if not item:
            lines.append(f"{key_text} = []")
            return
        if not origins:
            lines.append(f"{key_text} = [{', '.join(_toml(e['value']) for e in item)}]")
            return
        lines.append(f"{key_text} = [")
        lines += [f"  {_toml(e['value'])},  # {_origin_text(e['origin'])}" for e in item]
        lines.append("]")
        return
    value = item["value"]
    if value is None and item["origin"]["layer"] == "default":
        text = f"# {key_text} is not set"
    else:  # a limit set to "none" (unlimited)
        text = f"{key_text} = {_toml('none' if value is None else value)}"
    lines.append(f"{text}  # {_origin_text(item['origin'])}" if origins else text)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def _origin_text(origin: dict[str, Any]) -> str:
    if origin["layer"] == "default":
        return "default"
    where = origin["source"] or ""
    if origin["line"]:
        where += f":{origin['line']}"
    return f"{origin['layer']} ({where})" if where else origin["layer"]
