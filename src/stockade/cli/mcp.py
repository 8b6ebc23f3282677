"""``stockade mcp``: serve the agent path (bash, file tools, fetch) to an MCP client on stdio."""

from __future__ import annotations

import click

from stockade.cli.flags import REVIEW_FLAG
from stockade.cli.gate_options import autonomy_options
from stockade.cli.options import click_option, sandbox_options

AGENT_WALL_TIMEOUT_S = 600.0  # a model's foreground command, unless it or the settings say


@click.command()
@sandbox_options
@autonomy_options
@click_option(REVIEW_FLAG)
def mcp(**options: object) -> int:
    """Serve stockade's tools to an MCP client over stdin/stdout: bash (with bash_output and
    bash_kill for background commands), read_file, write_file, edit_file, list_dir, fetch.

    Every call is risk-rated, gated, run in the sandbox and recorded in the ledger. Questions
    go to the user through MCP elicitation (the level defaults to balanced); a client without
    elicitation, or --headless, gets them denied with the fix named. Nothing but MCP messages
    is written to stdout.

    \b
    Client configuration:
      {"mcpServers": {"stockade": {"command": "stockade",
                                   "args": ["mcp", "--project", "/path/to/project"]}}}

    With --review, every change the agent makes to the project lands in one changeset; when
    the server ends, stderr names it, and you apply it with `stockade changes apply ID`.
    """

    import anyio

    from stockade.cli.gate_options import permission_config, settings_with_autonomy
    from stockade.cli.options import ignored_notice
    from stockade.mcp import OUTPUT_BYTES_PER_STREAM, serve
    from stockade.net.mode import NetworkMode
    from stockade.runner import Sandbox
    from stockade.session import AsyncSession

    settings = settings_with_autonomy(options)
    notice = ignored_notice(settings)
    if notice:
        click.echo(notice, err=True)
    request = settings.policy_request(cwd=settings.project)  # the client's cwd does not matter
    limits = settings.limits(wall_timeout_default=AGENT_WALL_TIMEOUT_S)
    if "output_bytes_per_stream" not in settings.sandbox.limits:
        limits = limits._replace(output_bytes_per_stream=OUTPUT_BYTES_PER_STREAM)
    # the operator's lists reach the session too: fetch is checked like the jail's connections
    sandbox = Sandbox(
        request,
        backend=settings.backend,
        limits=limits,
        domain_policy=settings.domain_policy() if request.network is not NetworkMode.DENY else None,
        review=bool(options.get("review")),
        warm=settings.sandbox.warm,
    )
    sandbox.prewarm()  # the client's first tool call finds its jail ready
    if not sandbox.posture.confined:
        click.echo(
            "stockade: WARNING serving UNCONFINED - " + "; ".join(sandbox.posture.gaps), err=True
        )
    headless = bool(options.get("headless"))
    session = AsyncSession(
        sandbox=sandbox,
        autonomy="yolo" if options.get("yolo") else options.get("autonomy"),  # type: ignore[arg-type]
        permissions=permission_config(settings),
        interactive=not headless,
    )
    anyio.run(lambda: serve(session, elicit=not headless))
    if options.get("review"):
        from stockade.review.report import report_kept

        sandbox.close()
        click.echo(report_kept(sandbox.kept_changeset), err=True)
    return 0
