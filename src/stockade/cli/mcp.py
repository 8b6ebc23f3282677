"""``stockade mcp``: serve the agent path (bash, file tools, fetch) to an MCP client on stdio."""

from __future__ import annotations

import click

from stockade.cli.options import sandbox_options


@click.command()
@sandbox_options
@click.option(
    "--autonomy",
    metavar="LEVEL",
    default=None,
    help="What runs without asking: ask, conservative, balanced (default), auto-accept, "
    "yolo. Also STOCKADE_AUTONOMY.",
)
def mcp(autonomy: str | None, **options: object) -> int:
    """Serve stockade's tools to an MCP client over stdin/stdout: bash (with bash_output and
    bash_kill for background commands), read_file, write_file, edit_file, list_dir, fetch.

    Every call is risk-rated, gated, run in the sandbox and recorded in the ledger. Questions
    go to the user through MCP elicitation; a client without elicitation gets them denied,
    with the fix named. Nothing but MCP messages is written to stdout.

    \b
    Client configuration:
      {"mcpServers": {"stockade": {"command": "stockade",
                                   "args": ["mcp", "--project", "/path/to/project"]}}}
    """
    from dataclasses import replace

    import anyio

    from stockade.cli.options import backend_from_options, request_from_options
    from stockade.mcp import OUTPUT_BYTES_PER_STREAM, serve
    from stockade.net.mode import NetworkMode
    from stockade.runner import Sandbox
    from stockade.sandbox.limits import Limits
    from stockade.session import AsyncSession

    request = request_from_options(options)
    request = replace(request, cwd=request.project)  # the client's cwd does not matter
    domain_policy = None
    if request.network is NetworkMode.ALLOWLIST:
        from stockade.net.domains import DomainPolicy

        domain_policy = DomainPolicy.from_lists(options.get("allowed_domains") or ())  # type: ignore[arg-type]
    sandbox = Sandbox(
        request,
        backend=backend_from_options(options),
        limits=Limits(output_bytes_per_stream=OUTPUT_BYTES_PER_STREAM),
        domain_policy=domain_policy,
    )
    if not sandbox.posture.confined:
        click.echo(
            "stockade: WARNING serving UNCONFINED - " + "; ".join(sandbox.posture.gaps), err=True
        )
    session = AsyncSession(sandbox=sandbox, autonomy=autonomy, interactive=True)
    anyio.run(serve, session)
    return 0
