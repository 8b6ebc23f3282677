"""``stockade profile seatbelt``: print the profile stockade would use, on any system, so it
can be reviewed and diffed before it confines anything on a Mac."""

from __future__ import annotations

import click

from stockade.cli.flags import SANDBOX_FLAGS
from stockade.cli.options import settings_from_options, with_flags

# The flags that shape a profile (the environment, the backend choice and --unsafe do not).
PROFILE_FLAGS = tuple(
    flag
    for flag in SANDBOX_FLAGS
    if flag.name in {"--project", "--writable", "--network", "--allow-domain", "--config"}
)
# Per-session values, shown as stable examples so two printouts of one setup diff cleanly.
EXAMPLE_SESSION = "stockade-session-EXAMPLE"
EXAMPLE_PROXY_PORT = 3128


@click.command()
@click.argument("backend", type=click.Choice(["seatbelt"]))
@with_flags(PROFILE_FLAGS)
def profile(backend: str, **options: object) -> int:
    """Print the sandbox profile BACKEND would get for this project and settings.

    The session's temp dir appears as .../stockade-session-EXAMPLE/tmp and, in allowlist
    mode, the proxy's port as 3128: both differ per session.
    """
    from stockade.net.mode import NetworkMode
    from stockade.sandbox.policy import resolve_policy
    from stockade.sandbox.seatbelt import seatbelt_profile
    from stockade.sandbox.session_dir import system_temp_dir

    settings = settings_from_options(dict(options))
    request = settings.policy_request()
    request = request._replace(cwd=request.project)
    policy = resolve_policy(request, session_tmp=system_temp_dir() / EXAMPLE_SESSION / "tmp")
    notes = [
        f"; {backend} profile for this project and its settings, printed by `stockade profile`",
        f"; per session: the temp dir (here .../{EXAMPLE_SESSION}/tmp)",
    ]
    if policy.network is NetworkMode.ALLOWLIST:
        policy = policy._replace(proxy_port=EXAMPLE_PROXY_PORT)
        notes[1] += f" and the proxy's port (here {EXAMPLE_PROXY_PORT})"
        allowed = [rule.pattern for rule in settings.domain_policy().allowed]
        notes.append(
            "; domains (enforced by the proxy, not by this profile): "
            + (", ".join(allowed) or "none allowed")
        )
    first, _, rest = seatbelt_profile(policy).partition("\n")
    click.echo("\n".join([first, *notes, rest]), nl=False)
    return 0
