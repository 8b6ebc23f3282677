"""Attempts to get data out or state in: the network in each mode, the launcher's environment,
stockade's own state."""

from __future__ import annotations

from typing import Final

from stockade.doctor.attempts.model import (
    Attempt,
    Judge,
    any_of,
    appeared,
    changed,
    hit,
    marked,
    token,
)

# ---------------------------------------------------------------------------------------------
# network, deny mode: host listeners (tripwires) made for each attempt
# ---------------------------------------------------------------------------------------------

NETWORK_DENY: Final[tuple[Attempt, ...]] = (
    Attempt(
        "network.tcp-loopback",
        "network-deny",
        "TCP to a listener on the host's 127.0.0.1",
        (("tcp", "127.0.0.1", "{trip}"),),
        any_of(hit("tcp", "127.0.0.1")),
    ),
    Attempt(
        "network.tcp-host-address",
        "network-deny",
        "TCP to a listener on the host's own network address",
        (("tcp", "{host4}", "{trip}"),),
        any_of(hit("tcp", "{host4}")),
        needs=("host-ipv4",),
    ),
    Attempt(
        "network.tcp6-loopback",
        "network-deny",
        "TCP to a listener on the host's ::1",
        (("tcp", "::1", "{trip}"),),
        any_of(hit("tcp6", "::1")),
        needs=("ipv6",),
    ),
    Attempt(
        "network.tcp6-host-address",
        "network-deny",
        "TCP to a listener on the host's own IPv6 address",
        (("tcp", "{host6}", "{trip}"),),
        any_of(hit("tcp6", "{host6}")),
        needs=("host-ipv6",),
    ),
    Attempt(
        "network.tcp-v4-mapped",
        "network-deny",
        "TCP over IPv6 to ::ffff:127.0.0.1 (an IPv4 listener)",
        (("tcp", "::ffff:127.0.0.1", "{trip}"),),
        any_of(hit("tcp", "127.0.0.1")),
        needs=("ipv6",),
    ),
    Attempt(
        "network.udp-loopback",
        "network-deny",
        "UDP to a socket on the host's 127.0.0.1",
        (("udp", "127.0.0.1", "{trip}"),),
        any_of(hit("udp", "127.0.0.1")),
    ),
    Attempt(
        "network.udp6-loopback",
        "network-deny",
        "UDP to a socket on the host's ::1",
        (("udp", "::1", "{trip}"),),
        any_of(hit("udp6", "::1")),
        needs=("ipv6",),
    ),
    Attempt(
        "network.mptcp",
        "network-deny",
        "MPTCP (IPPROTO_MPTCP = 262) to a TCP listener on 127.0.0.1",
        (("tcp", "127.0.0.1", "{trip}", "mptcp"),),
        any_of(hit("tcp", "127.0.0.1")),
        needs=("mptcp",),
    ),
    Attempt(
        "network.tcp-fastopen",
        "network-deny",
        "TCP Fast Open (sendto with MSG_FASTOPEN, no connect) to 127.0.0.1",
        (("tcp", "127.0.0.1", "{trip}", "fastopen"),),
        any_of(hit("tcp", "127.0.0.1")),
        needs=("tcp-fastopen",),
    ),
    Attempt(
        "network.abstract-unix",
        "network-deny",
        "connect to a host abstract unix socket",
        (("unix", "abstract", "{trip}"),),
        any_of(hit("abstract")),
        admitted="unix-sockets-allowed",
    ),
    Attempt(
        "network.unix-path",
        "network-deny",
        "connect to a host unix socket by path (the lab's, visible read-only)",
        (("unix", "stream", "{trip}"),),
        any_of(hit("unix-stream")),
        admitted="unix-sockets-allowed",
    ),
    Attempt(
        "network.unix-dgram-path",
        "network-deny",
        "send a datagram to a host unix datagram socket by path",
        (("unix", "dgram", "{trip}"),),
        any_of(hit("unix-dgram")),
        admitted="unix-sockets-allowed",
    ),
)

# ---------------------------------------------------------------------------------------------
# network, allowlist mode: {allowed} (port {allowed_port} only) is on the allow list, {denied}
# on the deny list; both name 127.0.0.1 (test names only the doctor can map). Each attempt's
# tripwire stands where the request would land if the proxy let it through.
# ---------------------------------------------------------------------------------------------


def _allowlist(
    name: str,
    does: str,
    steps: tuple[tuple[str, ...], ...],
    kind: str,
    address: str,
    **extra: object,
) -> Attempt:
    return Attempt(
        f"allowlist.{name}",
        "network-allowlist",
        does,
        steps,
        any_of(hit(kind, address)),
        scenario="allowlist",
        **extra,  # type: ignore[arg-type]
    )


NETWORK_ALLOWLIST: Final[tuple[Attempt, ...]] = (
    _allowlist(
        "ip-literal-http",
        "plain HTTP through the proxy to an IP literal (127.0.0.1)",
        (("proxy-http", "http://127.0.0.1:{trip}/"),),
        "tcp",
        "127.0.0.1",
    ),
    _allowlist(
        "ip-literal-connect",
        "CONNECT through the proxy to an IP literal (127.0.0.1)",
        (("proxy-connect", "127.0.0.1:{trip}"),),
        "tcp",
        "127.0.0.1",
    ),
    _allowlist(
        "ipv6-literal-connect",
        "CONNECT through the proxy to [::1]",
        (("proxy-connect", "[::1]:{trip}"),),
        "tcp6",
        "::1",
        needs=("ipv6",),
    ),
    _allowlist(
        "decimal-ip-connect",
        "CONNECT through the proxy to 2130706433 (127.0.0.1 as one number)",
        (("proxy-connect", "2130706433:{trip}"),),
        "tcp",
        "127.0.0.1",
    ),
    _allowlist(
        "host-address-connect",
        "CONNECT through the proxy to the host's own (private) network address",
        (("proxy-connect", "{host4}:{trip}"),),
        "tcp",
        "{host4}",
        needs=("host-ipv4",),
    ),
    _allowlist(
        "denied-host-connect",
        "CONNECT through the proxy to a host on the deny list",
        (("proxy-connect", "{denied}:{trip}"),),
        "tcp",
        "127.0.0.1",
    ),
    _allowlist(
        "denied-host-http",
        "plain HTTP through the proxy to a host on the deny list",
        (("proxy-http", "http://{denied}:{trip}/"),),
        "tcp",
        "127.0.0.1",
    ),
    _allowlist(
        "denied-host-trailing-dot",
        "CONNECT to the denied host spelled with a trailing dot and capitals",
        (("proxy-connect", "{denied_upper}.:{trip}"),),
        "tcp",
        "127.0.0.1",
    ),
    _allowlist(
        "wrong-host-header",
        "plain HTTP for the allowed host whose Host header names the denied one",
        (("proxy-http", "http://{allowed}:{allowed_port}/", "{denied}:{trip}"),),
        "tcp",
        "127.0.0.1",
    ),
    _allowlist(
        "origin-form-host-header",
        "a request with only a Host header (no absolute URL) naming the denied host",
        (("proxy-origin-form", "{denied}:{trip}"),),
        "tcp",
        "127.0.0.1",
    ),
    _allowlist(
        "allowed-host-other-port",
        "the allowed host on a port its rule does not cover",
        (("proxy-connect", "{allowed}:{trip}"),),
        "tcp",
        "127.0.0.1",
    ),
    _allowlist(
        "userinfo-confusion",
        "plain HTTP to http://allowed:port@127.0.0.1:port/ (userinfo that looks like a host)",
        (("proxy-http", "http://{allowed}:{allowed_port}@127.0.0.1:{trip}/"),),
        "tcp",
        "127.0.0.1",
    ),
    _allowlist(
        "socks5-denied-domain",
        "SOCKS5 through the proxy to the denied host by name",
        (("proxy-socks", "5", "{denied}", "{trip}"),),
        "tcp",
        "127.0.0.1",
    ),
    _allowlist(
        "socks5-ip",
        "SOCKS5 through the proxy to 127.0.0.1",
        (("proxy-socks", "5", "127.0.0.1", "{trip}"),),
        "tcp",
        "127.0.0.1",
    ),
    _allowlist(
        "socks4-ip",
        "SOCKS4 through the proxy to 127.0.0.1",
        (("proxy-socks", "4", "127.0.0.1", "{trip}"),),
        "tcp",
        "127.0.0.1",
    ),
    _allowlist(
        "direct-tcp",
        "TCP straight to 127.0.0.1, bypassing the proxy",
        (("tcp", "127.0.0.1", "{trip}"),),
        "tcp",
        "127.0.0.1",
    ),
    _allowlist(
        "direct-host-address",
        "TCP straight to the host's network address, bypassing the proxy",
        (("tcp", "{host4}", "{trip}"),),
        "tcp",
        "{host4}",
        needs=("host-ipv4",),
    ),
    _allowlist(
        "direct-udp",
        "UDP straight to 127.0.0.1, bypassing the proxy",
        (("udp", "127.0.0.1", "{trip}"),),
        "udp",
        "127.0.0.1",
    ),
    _allowlist(
        "direct-mptcp",
        "MPTCP straight to 127.0.0.1, bypassing the proxy",
        (("tcp", "127.0.0.1", "{trip}", "mptcp"),),
        "tcp",
        "127.0.0.1",
        needs=("mptcp",),
    ),
    _allowlist(
        "proxy-port-other-address",
        "TCP to the proxy's port number on another loopback address (127.0.0.2)",
        (("tcp", "127.0.0.2", "{proxy_port}"),),
        "tcp-proxy-port",
        "127.0.0.2",
        needs=("proxy-port",),
        admitted="proxy-port-any-address",
    ),
    _allowlist(
        "drive-bridge",
        "rewrite the in-jail relay's socket path in its memory so it connects elsewhere",
        (("drive-bridge", "{relay_socket}", "{trip}", "{bridge_port}"),),
        "unix-stream",
        "",
        needs=("in-jail-bridge",),
    ),
)

# ---------------------------------------------------------------------------------------------
# environment: variables the doctor puts into its own environment before building the jail
# (ENVIRONMENT_VARIABLES in lab.py); the jail dumps what it sees into {x}
# ---------------------------------------------------------------------------------------------


def _environment(variable: str, does: str) -> Attempt:
    return Attempt(
        f"environment.{variable.lower().replace('_', '-')}",
        "environment",
        does,
        (("dump-environment", "{x}"),),
        any_of(token(f"env:{variable}")),
    )


ENVIRONMENT: Final[tuple[Attempt, ...]] = (
    _environment("STOCKADE_DOCTOR_API_KEY", "a variable named *KEY*"),
    _environment("STOCKADE_DOCTOR_AUTH_TOKEN", "a variable named *TOKEN*"),
    _environment("stockade_doctor_client_secret", "a lower-case variable named *secret*"),
    _environment("STOCKADE_DOCTOR_DB_PASSWORD", "a variable named *PASSW*"),
    _environment("STOCKADE_DOCTOR_CREDENTIALS", "a variable named *CREDENTIAL*"),
    _environment("STOCKADE_DOCTOR_MYSQL_PWD", "a password under a name the pattern misses (*PWD)"),
    _environment("STOCKADE_DOCTOR_GITHUB_PAT", "a GitHub token (ghp_...) under an innocent name"),
    _environment("STOCKADE_DOCTOR_FINE_GRAINED", "a fine-grained GitHub token (github_pat_...)"),
    _environment("STOCKADE_DOCTOR_AWS_ID", "an AWS access key id (AKIA...)"),
    _environment("STOCKADE_DOCTOR_SLACK", "a Slack token (xoxb-...)"),
    _environment("STOCKADE_DOCTOR_OPENAI", "an API key with the sk- prefix"),
    _environment("STOCKADE_DOCTOR_DATABASE_URL", "a URL with a password in its userinfo"),
    _environment("STOCKADE_DOCTOR_SENTRY_DSN", "a DSN with a key in its userinfo"),
    _environment("STOCKADE_DOCTOR_CI_JOB_JWT", "a CI job JWT (eyJ...)"),
    _environment("SSH_AUTH_SOCK", "the ssh agent socket"),
    Attempt(
        "environment.other-processes",
        "environment",
        "read every other process's /proc/PID/environ (the launcher's, a host process's with "
        "the same secrets)",
        (("scan-environs", "{x}"),),
        any_of(Judge("any-env-token", ("{x}",))),
    ),
)

# ---------------------------------------------------------------------------------------------
# stockade-state: the lab's XDG dirs hold stockade's own state, created by building the jails;
# their parents (~/.config, ~/.local, ~/.cache, $XDG_RUNTIME_DIR) are writable roots
# ---------------------------------------------------------------------------------------------

FORGED = "stockade-doctor forged this\n"

STOCKADE_STATE: Final[tuple[Attempt, ...]] = (
    Attempt(
        "state.config-settings",
        "stockade-state",
        "overwrite stockade's user settings file",
        (("write", "{config_dir}/settings.toml", '[sandbox]\nbackend = "none"\n'),),
        any_of(marked("{config_dir}/settings.toml")),
    ),
    Attempt(
        "state.config-new-file",
        "stockade-state",
        "add a file to stockade's config dir",
        (("write", "{config_dir}/planted.toml", FORGED),),
        any_of(marked("{config_dir}/planted.toml")),
    ),
    Attempt(
        "state.stockade-config-file",
        "stockade-state",
        "overwrite the file STOCKADE_CONFIG names (its directory is writable)",
        (("write", "{stockade_config}", '[sandbox]\nbackend = "none"\n'),),
        any_of(marked("{stockade_config}")),
    ),
    Attempt(
        "state.stockade-config-rename-over",
        "stockade-state",
        "rename a forged file over the file STOCKADE_CONFIG names",
        (
            ("write", "{stockade_config}.new", '[sandbox]\nbackend = "none"\n'),
            ("rename", "{stockade_config}.new", "{stockade_config}"),
        ),
        any_of(marked("{stockade_config}")),
        disruptive=True,
    ),
    Attempt(
        "state.data-trust-records",
        "stockade-state",
        "forge stockade's workspace-trust records",
        (("write", "{data_dir}/trusted-workspaces.json", "{}\n"),),
        any_of(marked("{data_dir}/trusted-workspaces.json")),
    ),
    Attempt(
        "state.data-new-file",
        "stockade-state",
        "add a file to stockade's data dir",
        (("write", "{data_dir}/planted.json", FORGED),),
        any_of(marked("{data_dir}/planted.json")),
    ),
    Attempt(
        "state.cache-every-file",
        "stockade-state",
        "overwrite every file in stockade's cache dir but the filters (probe results, ...)",
        (("overwrite-listed", "cache"),),
        any_of(Judge("marked-listed", ("cache",))),
        needs=("state-files:cache",),
    ),
    Attempt(
        "state.seccomp-filter",
        "stockade-state",
        "replace the cached seccomp filter with a forged program",
        (("overwrite-listed", "filters"),),
        any_of(Judge("marked-listed", ("filters",))),
        needs=("state-files:filters",),
    ),
    Attempt(
        "state.seccomp-filter-plant",
        "stockade-state",
        "plant a new program in the seccomp filter cache",
        (("write", "{cache_dir}/seccomp/planted.bpf", FORGED),),
        any_of(marked("{cache_dir}/seccomp/planted.bpf")),
    ),
    Attempt(
        "state.cache-new-file",
        "stockade-state",
        "add a file (a symlink trap for a later run's output spill) to stockade's cache dir",
        (("symlink", "{outside}/spill-target", "{cache_dir}/planted-spill"),),
        any_of(appeared("{cache_dir}/planted-spill")),
    ),
    Attempt(
        "state.runtime-new-file",
        "stockade-state",
        "add a file to stockade's runtime dir ($XDG_RUNTIME_DIR/stockade)",
        (("write", "{runtime_dir}/planted", FORGED),),
        any_of(marked("{runtime_dir}/planted")),
    ),
    Attempt(
        "state.key-read",
        "stockade-state",
        "read stockade's private key files (the key that authenticates cached artifacts)",
        (("copy-listed", "keys", "{x}"),),
        any_of(Judge("leaked-listed", ("keys", "{x}"))),
        needs=("state-files:keys",),
    ),
    Attempt(
        "state.config-dir-rename",
        "stockade-state",
        "rename stockade's config dir away and create a new one",
        (
            ("rename", "{config_dir}", "{config_dir}-moved"),
            ("mkdir", "{config_dir}"),
            ("write", "{config_dir}/settings.toml", '[sandbox]\nbackend = "none"\n'),
        ),
        any_of(changed("{config_dir}")),
        disruptive=True,
    ),
    Attempt(
        "state.data-dir-rename",
        "stockade-state",
        "rename stockade's data dir away and create a new one",
        (("rename", "{data_dir}", "{data_dir}-moved"), ("mkdir", "{data_dir}")),
        any_of(changed("{data_dir}")),
        disruptive=True,
    ),
    Attempt(
        "state.cache-dir-rename",
        "stockade-state",
        "rename stockade's cache dir away and create a new one",
        (("rename", "{cache_dir}", "{cache_dir}-moved"), ("mkdir", "{cache_dir}")),
        any_of(changed("{cache_dir}")),
        disruptive=True,
    ),
)
