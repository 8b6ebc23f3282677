"""The click-free fast path of ``stockade run`` must parse exactly like the click command, or
step aside (None) so click reports the problem."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stockade.cli.flags import RUN_FLAGS, SANDBOX_FLAGS, parse_run_arguments
from stockade.cli.run import run as run_command


def click_parse(args: list[str]) -> tuple[dict[str, Any], list[str]] | None:
    try:
        context = run_command.make_context("run", list(args), resilient_parsing=False)
    except (click.exceptions.UsageError, click.exceptions.Exit, click.exceptions.Abort):
        return None
    params = dict(context.params)
    command = list(params.pop("command"))
    return params, command


VALUES = {
    "--project": st.sampled_from(["/tmp", "proj", "~/code/app"]),
    "--writable": st.sampled_from(["/var/tmp", "build", "a=b"]),
    "--network": st.sampled_from(["deny", "allow", "allowlist", "sideways"]),
    "--allow-domain": st.sampled_from(["example.com", "*.pypi.org", "x.org:443"]),
    "--env": st.sampled_from(["TOKEN", "HOME"]),
    "--backend": st.sampled_from(["auto", "bwrap", "landlock", "none", "docker"]),
    "--config": st.sampled_from(["/etc/stockade.toml", "c.toml"]),
    "--timeout": st.sampled_from(["5", "0.5", "0", "-1", "nan", "soon", "1e3"]),
    "--server-name": st.sampled_from(["github", "git.hub"]),
    "--autonomy": st.sampled_from(["balanced", "yolo", "sideways"]),
}


@st.composite
def invocations(draw: st.DrawFn) -> list[str]:
    words: list[str] = []
    for _ in range(draw(st.integers(0, 5))):
        flag = draw(st.sampled_from([*SANDBOX_FLAGS, *RUN_FLAGS]))
        if flag.kind == "switch":
            words.append(flag.name)
        elif draw(st.booleans()):
            words.append(f"{flag.name}={draw(VALUES[flag.name])}")
        else:
            words += [flag.name, draw(VALUES[flag.name])]
    if draw(st.booleans()):
        words.append(draw(st.sampled_from(["--", "--help", "-x", "--bogus"])))
    words += draw(st.lists(st.sampled_from(["ls", "-la", "--", "--unsafe", "a b"]), max_size=3))
    return words


@settings(max_examples=400, deadline=None)
@given(invocations())
def test_fast_path_agrees_with_click_or_steps_aside(args: list[str]) -> None:
    fast = parse_run_arguments(args)
    slow = click_parse(args)
    if fast is None:
        return  # click decides (and reports any problem)
    assert slow is not None, f"fast path accepted what click rejects: {args}"
    fast_options, fast_command = fast
    slow_options, slow_command = slow
    assert fast_command == slow_command
    for key, value in slow_options.items():
        expected = value
        if isinstance(value, tuple):
            expected = tuple(Path(v) if isinstance(v, Path) else v for v in value)
        assert fast_options[key] == expected, (key, args)


@pytest.mark.parametrize(
    "args",
    [
        ["--", "true"],
        ["ls", "-la"],
        ["--network", "allow", "--env", "TOKEN", "--", "make", "test"],
        ["--writable=/var/tmp", "--writable", "/srv", "--timeout", "2.5", "--", "true"],
        ["--unsafe", "--backend=none", "--", "sh", "-c", "exit 3"],
        ["--stdio", "--", "npx", "server"],
    ],
)
def test_common_invocations_take_the_fast_path(args: list[str]) -> None:
    assert parse_run_arguments(args) is not None


@pytest.mark.parametrize(
    "args",
    [[], ["--help"], ["--bogus", "--", "true"], ["--timeout", "-1", "--", "true"],
     ["--network", "sideways", "--", "true"], ["--stdio", "--timeout", "5", "--", "x"],
     ["--unsafe=yes", "--", "true"], ["--writable"]],
)  # fmt: skip
def test_anything_doubtful_is_left_to_click(args: list[str]) -> None:
    assert parse_run_arguments(args) is None
