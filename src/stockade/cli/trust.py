"""``stockade trust [--revoke]``: let this workspace's own settings loosen confinement.

Shows exactly what trusting would enable before recording anything; the record covers these
exact file contents, so any later change to them asks again.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from stockade.cli.options import project_option
from stockade.errors import UsageError

if TYPE_CHECKING:  # pragma: no cover
    from stockade.settings import Settings


@click.command()
@project_option
@click.option("--revoke", is_flag=True, help="Forget the trust decision for this workspace.")
@click.option("--yes", "-y", is_flag=True, help="Record trust without asking (scripts).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def trust(project: Path | None, revoke: bool, yes: bool, as_json: bool) -> int:
    """Trust the project's .stockade/settings.toml and settings.local.toml to loosen the
    sandbox (network, writable paths outside the project, allow rules, ...)."""
    from stockade.sandbox.policy import canonical
    from stockade.trust import find_record, record_trust, revoke_trust

    root = canonical(project or Path.cwd())
    if not root.is_dir():
        raise UsageError(f"project directory {root} does not exist", fix="check --project")
    if revoke:
        removed = revoke_trust(root)
        _say(
            as_json,
            {"project": str(root), "trusted": False, "revoked": removed},
            f"revoked trust for {root}" if removed else f"{root} was not trusted",
        )
        return 0

    settings = _untrusted_view(root)
    enabled = [str(entry) for entry in settings.ignored]
    record = find_record(root)
    if not settings.trust.needed:
        _say(
            as_json,
            {"project": str(root), "trusted": False, "needed": False, "enables": []},
            f"nothing to trust: the settings of {root} only tighten confinement",
        )
        return 0
    digest = settings.trust.digest
    assert digest is not None  # trust is only needed when project layers exist
    if record is not None and record.digest == digest:
        _say(
            as_json,
            {"project": str(root), "trusted": True, "since": record.trusted_at, "enables": enabled},
            f"{root} is already trusted (since {record.trusted_at}); it enables:\n"
            + "\n".join(f"  {line}" for line in enabled),
        )
        return 0
    if not as_json:
        changed = " (its settings changed since you trusted it)" if record else ""
        click.echo(f"Trusting {root}{changed} would enable:")
        for line in enabled:
            click.echo(f"  {line}")
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError(
                "trusting a workspace needs a confirmation and there is no terminal",
                fix="review the list above, then run `stockade trust --yes`",
            )
        if not click.confirm("Trust this workspace?", default=False):
            click.echo("not trusted")
            return 1
    saved = record_trust(root, digest, enabled)
    _say(
        as_json,
        {"project": str(root), "trusted": True, "since": saved.trusted_at, "enables": enabled},
        f"trusted {root}; any change to its .stockade settings will ask again",
    )
    return 0


def _untrusted_view(root: Path) -> Settings:
    """The workspace's settings as if untrusted, so ``ignored`` lists what trust enables.
    The operator's STOCKADE_* variables are left out: trust is about the files."""
    from stockade.settings import Settings

    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("STOCKADE_") or name == "STOCKADE_CONFIG"
    }
    return Settings.load(root, env=env, trusted=False)


def _say(as_json: bool, data: dict[str, object], text: str) -> None:
    click.echo(json.dumps(data, indent=2) if as_json else text)
