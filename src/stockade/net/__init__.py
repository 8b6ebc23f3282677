"""Network confinement: the domain policy, the allow-list proxy, the jail bridge, fetch.

Modules, one job each:

``mode``       NetworkMode: deny / allow / allowlist.
``domains``    host normalisation, domain globs, DomainRule, DomainPolicy.decide -> Decision.
``addresses``  the table of refused address ranges and the per-address check.
``resolve``    name -> addresses (once), and vetting every address of an allowed name.
``proxy``      AllowListProxy: listeners, the loop thread, one client's protocol by its
               first byte; the protocols and the rest of the proxy are in:
``http_proxy`` HTTP CONNECT tunnels and plain forwarding (strict head parsing, body framing).
``socks``      SOCKS5 CONNECT (and the SOCKS4 refusal).
``upstream``   deciding a connection (policy, asking) and opening its upstream (vetted).
``questions``  the ask hook's worker thread and the answers the proxy remembers.
``connection`` the two endpoints of a proxied connection and the relay between them.
``events``     what the proxy reports (ProxyEvent) and the caps on it (summaries, a budget).
``handoff``    the proxy's end of the bridge: relays hand over accepted sockets (SCM_RIGHTS).
``bridge``     stdlib-only relay run inside the jail (127.0.0.1:PORT -> the proxy), which
               confines itself before the command starts.
``jail``       constants and argv/mount helpers for wiring the bridge into a bwrap jail.
``fetch``      stockade's own HTTP fetches, under the same policy.

Names are re-exported lazily so that ``python -m stockade.net.bridge`` imports nothing else.
The fetch function is ``stockade.net.fetch.fetch`` (``stockade.net.fetch`` is its module).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stockade._lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from stockade.net.domains import Decision, DecisionSource, DomainPolicy, DomainRule
    from stockade.net.events import EventKind, ProxyEvent
    from stockade.net.fetch import FetchError, FetchRefused, FetchResult
    from stockade.net.jail import bridge_command, bwrap_mount_args, proxy_environment
    from stockade.net.mode import NetworkMode
    from stockade.net.proxy import AllowListProxy

_LAZY: dict[str, str] = {
    "AllowListProxy": "stockade.net.proxy",
    "Decision": "stockade.net.domains",
    "DecisionSource": "stockade.net.domains",
    "DomainPolicy": "stockade.net.domains",
    "DomainRule": "stockade.net.domains",
    "EventKind": "stockade.net.events",
    "FetchError": "stockade.net.fetch",
    "FetchRefused": "stockade.net.fetch",
    "FetchResult": "stockade.net.fetch",
    "NetworkMode": "stockade.net.mode",
    "ProxyEvent": "stockade.net.events",
    "bridge_command": "stockade.net.jail",
    "bwrap_mount_args": "stockade.net.jail",
    "proxy_environment": "stockade.net.jail",
}

__all__ = [
    "AllowListProxy",
    "Decision",
    "DecisionSource",
    "DomainPolicy",
    "DomainRule",
    "EventKind",
    "FetchError",
    "FetchRefused",
    "FetchResult",
    "NetworkMode",
    "ProxyEvent",
    "bridge_command",
    "bwrap_mount_args",
    "proxy_environment",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals(), __all__)
