"""``stockade classify 'CMD' [--json] [--explain]``: show a command's tier and why.

The exit status is 0 whatever the tier (this command reports, it does not gate); a missing or
empty command is a usage error (exit 2). rich is imported only when rendering for a terminal.
"""

from __future__ import annotations

import json
import shlex
import sys
from typing import Any

import click

from stockade.errors import UsageError
from stockade.risk import Assessment
from stockade.risk import classify as classify_command
from stockade.shell import Segment
from stockade.tiers import Tier

_TIER_STYLES: dict[Tier, str] = {
    Tier.READ_ONLY: "green",
    Tier.LOW: "cyan",
    Tier.MEDIUM: "yellow",
    Tier.HIGH: "bold magenta",
    Tier.DESTRUCTIVE: "bold red",
}


@click.command("classify")
@click.argument("command", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="Print the assessment as JSON.")
@click.option("--explain", is_flag=True, help="Also show the parsed segments.")
def classify(command: tuple[str, ...], as_json: bool, explain: bool) -> None:
    """Classify COMMAND into a risk tier and show the rule that decided each segment.

    Pass the command as one quoted argument (``stockade classify 'git push -f'``), as words
    after ``--`` (``stockade classify -- git push -f``), or ``-`` to read it from stdin.
    """
    text = _command_text(command)
    assessment = classify_command(text)
    if as_json:
        click.echo(json.dumps(_json(text, assessment, explain), indent=2, ensure_ascii=False))
    else:
        _render(text, assessment, explain)


def _command_text(words: tuple[str, ...]) -> str:
    if words == ("-",):
        text = sys.stdin.read()
    elif len(words) == 1:
        text = words[0]
    else:
        text = shlex.join(words)
    if not text.strip():
        raise UsageError(
            "the command to classify is empty",
            fix="pass it as one quoted argument, e.g. stockade classify 'git status'",
        )
    return text


def _json(text: str, assessment: Assessment, explain: bool) -> dict[str, Any]:
    data: dict[str, Any] = {"command": text, **assessment.to_dict()}
    if explain:
        data["segments"] = [_segment_dict(segment) for segment in assessment.segments]
    return data


def _segment_dict(segment: Segment) -> dict[str, Any]:
    return {
        "text": segment.text,
        "kind": segment.kind,
        "words": list(segment.words),
        "static": list(segment.static),
        "assignments": [
            {"name": a.name, "value": a.value, "static": a.static} for a in segment.assignments
        ],
        "redirects": [
            {"op": r.op, "target": r.target, "fd": r.fd, "static": r.static}
            for r in segment.redirects
        ],
        "substitutions": [
            {"kind": s.kind, "segments": [_segment_dict(inner) for inner in s.segments]}
            for s in segment.substitutions
        ],
        "pipeline": segment.pipeline,
        "stage": segment.stage,
        "function": segment.in_function,
    }


def _render(text: str, assessment: Assessment, explain: bool) -> None:
    from rich.table import Table
    from rich.text import Text

    from stockade.cli.render import console as make_console

    console = make_console()
    headline = Text("tier: ")
    headline.append(assessment.tier.label, style=_TIER_STYLES[assessment.tier])
    console.print(headline)
    if assessment.reasons:
        table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        table.add_column("tier")
        table.add_column("rule")
        table.add_column("segment", overflow="fold")
        table.add_column("why", overflow="fold")
        for reason in assessment.reasons:
            table.add_row(
                Text(reason.tier.label, style=_TIER_STYLES[reason.tier]),
                reason.rule_id,
                Text(reason.segment),
                Text(reason.detail),
            )
        console.print(table)
    if explain:
        _render_segments(console, assessment.segments)


def _render_segments(console: Any, segments: tuple[Segment, ...]) -> None:
    from rich.tree import Tree

    tree = Tree("segments")
    for segment in segments:
        _add_segment(tree, segment)
    console.print(tree)


def _add_segment(tree: Any, segment: Segment) -> None:
    from rich.text import Text

    label = Text(f"{segment.kind}: ")
    label.append(repr(segment.text))
    node = tree.add(label)
    if segment.words:
        words = ", ".join(
            repr(word) if static else f"{word!r} (dynamic)"
            for word, static in zip(segment.words, segment.static, strict=False)
        )
        node.add(Text(f"words: {words}"))
    for assignment in segment.assignments:
        node.add(Text(f"assignment: {assignment.name}={assignment.value!r}"))
    for redirect in segment.redirects:
        fd = "" if redirect.fd is None else str(redirect.fd)
        node.add(Text(f"redirect: {fd}{redirect.op} {redirect.target!r}"))
    if segment.pipeline:
        node.add(Text(f"pipeline {segment.pipeline}, stage {segment.stage}"))
    if segment.in_function:
        node.add(Text(f"in function {segment.in_function!r}"))
    for substitution in segment.substitutions:
        branch = node.add(Text(f"substitution {substitution.kind}…"))
        for inner in substitution.segments:
            _add_segment(branch, inner)
