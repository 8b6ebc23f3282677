"""What the generated Seatbelt profiles decide, judged by a small SBPL evaluator
(``tests/sbpl_evaluator.py``: the rules in order, the last match wins).

The matrix is the one the Linux integration tests prove live against bwrap and Landlock: writes
in the project allowed, in protected paths (existing or not) and outside denied, masked paths
unreadable, re-exposed paths readable, the deepest path deciding when they nest, the network
as the mode says. And the order matters: moving one rule makes the matrix fail.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stockade.sandbox.seatbelt import DENIED_SERVICES, DNS_RESOLVER_SOCKET, seatbelt_profile
from tests.sbpl_evaluator import Request, decide, move, rules
from tests.seatbelt_support import (
    CARGO_HOME,
    GOLDEN_POLICIES,
    HOME,
    ODD_PROJECT,
    PROJECT,
    PROXY_PORT,
    SECRETS,
    SESSION_TMP,
    TOOL,
)

TMP = "/private" + str(SESSION_TMP)


def write(path: Path | str) -> Request:
    return Request("file-write-create", path=str(path))


def modify(path: Path | str) -> Request:
    return Request("file-write-data", path=str(path))


def rename(path: Path | str) -> Request:
    return Request("file-write-unlink", path=str(path))


def read(path: Path | str) -> Request:
    return Request("file-read-data", path=str(path))


def stat(path: Path | str) -> Request:
    return Request("file-read-metadata", path=str(path))


# (what, request, expected) for the default policy; the same intent as the live Linux tests.
FILESYSTEM_MATRIX: list[tuple[str, Request, str]] = [
    ("write in the project", write(PROJECT / "src" / "main.py"), "allow"),
    ("modify a project file", modify(PROJECT / "README.md"), "allow"),
    ("rename a project file", rename(PROJECT / "old.txt"), "allow"),
    ("hard-link inside the project", Request("file-link", path=str(PROJECT / "b")), "allow"),
    ("write in the session temp dir", write(TMP + "/build.o"), "allow"),
    ("write in CARGO_HOME's registry", write(CARGO_HOME / "registry" / "x.crate"), "allow"),
    ("write in the home directory", write(HOME / "planted"), "deny"),
    ("write next to the project", write(PROJECT.parent / "sibling"), "deny"),
    ("write in /tmp", write("/private/tmp/x"), "deny"),
    ("write in the user's temp dir", write("/private/var/folders/zz/abc123/T/other"), "deny"),
    ("write in /etc", write("/private/etc/hosts"), "deny"),
    ("write /dev/null", modify("/dev/null"), "allow"),
    ("write a pseudo-terminal", modify("/dev/ttys003"), "allow"),
    ("write an own descriptor", modify("/dev/fd/63"), "allow"),
    ("write a disk device", modify("/dev/disk0"), "deny"),
    ("write a .git/hooks file", write(PROJECT / ".git" / "hooks" / "pre-commit"), "deny"),
    ("remove .git/hooks", rename(PROJECT / ".git" / "hooks"), "deny"),
    ("modify .git/config", modify(PROJECT / ".git" / "config"), "deny"),
    ("rename .git away", rename(PROJECT / ".git"), "deny"),
    ("rename the project root", rename(PROJECT), "deny"),
    ("write elsewhere in .git", write(PROJECT / ".git" / "objects" / "ab"), "allow"),
    ("modify the existing .mcp.json", modify(PROJECT / ".mcp.json"), "deny"),
    ("write into the existing .vscode", write(PROJECT / ".vscode" / "tasks.json"), "deny"),
    ("create a missing .stockade (the guard judges it)", write(PROJECT / ".stockade"), "allow"),
    ("git init: create a missing .git", write(PROJECT / "sub" / ".git" / "config"), "allow"),
    ("hard-link into .git/hooks", Request("file-link", path=str(PROJECT / ".git/hooks/x")), "deny"),
    ("write CARGO_HOME/bin", write(CARGO_HOME / "bin" / "cargo-evil"), "deny"),
    ("write CARGO_HOME/config.toml", modify(CARGO_HOME / "config.toml"), "deny"),
    ("read a project file", read(PROJECT / "README.md"), "allow"),
    ("read ~/.ssh/id_ed25519", read(HOME / ".ssh" / "id_ed25519"), "deny"),
    (
        "list ~/.ssh",
        Request("file-read-data", path=str(HOME / ".ssh"), vnode_type="DIRECTORY"),
        "deny",
    ),
    ("read ~/.netrc", read(HOME / ".netrc"), "deny"),
    ("read ~/.aws/credentials", read(HOME / ".aws" / "credentials"), "deny"),
    ("read the docker socket", read("/private/var/run/docker.sock"), "deny"),
    ("read elsewhere in home", read(HOME / ".zshrc"), "allow"),
    ("read a system file", read("/usr/lib/libSystem.B.dylib"), "allow"),
    (
        "clone a directory",
        Request("file-clone", path=str(PROJECT / "x"), vnode_type="DIRECTORY"),
        "deny",
    ),
    (
        "clone a file",
        Request("file-clone", path=str(PROJECT / "x"), vnode_type="REGULAR-FILE"),
        "allow",
    ),
]

SERVICES_MATRIX: list[tuple[str, Request, str]] = [
    ("submit a launchd job", Request("job-creation"), "deny"),
    ("open an app through LaunchServices", Request("lsopen"), "deny"),
    ("send an Apple Event", Request("appleevent-send"), "deny"),
    ("write another app's preferences", Request("user-preference-write"), "deny"),
    ("read preferences", Request("user-preference-read"), "allow"),
    ("look up the logger", Request("mach-lookup", global_name="com.apple.logd"), "allow"),
    (
        "look up directory services",
        Request("mach-lookup", global_name="com.apple.system.opendirectoryd.libinfo"),
        "allow",
    ),
    ("read a sysctl", Request("sysctl-read"), "allow"),
    ("signal an own child", Request("signal", target="same-sandbox"), "allow"),
    ("signal a host process", Request("signal", target="others"), "deny"),
    ("inspect a host process", Request("process-info-pidinfo", target="others"), "deny"),
    ("inspect an own child", Request("process-info-pidinfo", target="same-sandbox"), "allow"),
    ("fork", Request("process-fork"), "allow"),
    ("exec", Request("process-exec", path="/usr/bin/git"), "allow"),
] + [
    (f"look up {name}", Request("mach-lookup", global_name=name), "deny")
    for name, _why in DENIED_SERVICES
]


def wrong(profile: str, matrix: list[tuple[str, Request, str]]) -> list[str]:
    """The entries of ``matrix`` the profile decides otherwise."""
    return [
        f"{what}: {got} (expected {expected})"
        for what, request, expected in matrix
        if (got := decide(profile, request)) != expected
    ]


@pytest.mark.parametrize("name", ["defaults", "network-allow", "network-allowlist"])
def test_the_filesystem_and_services_matrix_holds(name: str) -> None:
    profile = seatbelt_profile(GOLDEN_POLICIES[name])
    assert wrong(profile, FILESYSTEM_MATRIX + SERVICES_MATRIX) == []


def test_an_unconfined_profile_fails_the_matrix() -> None:
    """The matrix can fail: ``(allow default)`` alone gets most of it wrong."""
    assert len(wrong("(version 1)\n(allow default)\n", FILESYSTEM_MATRIX)) > 20


def test_moving_the_protected_deny_before_the_writable_allow_breaks_the_matrix() -> None:
    profile = seatbelt_profile(GOLDEN_POLICIES["defaults"])
    ordered = rules(profile)
    allow_roots = next(
        i for i, r in enumerate(ordered) if r.action == "allow" and "file-link" in r.operations
    )
    deny_protected = next(
        i for i, r in enumerate(ordered) if r.action == "deny" and "file-link" in r.operations
        and i > allow_roots
    )  # fmt: skip
    reordered = move(profile, deny_protected, allow_roots)
    failures = wrong(reordered, FILESYSTEM_MATRIX)
    assert "write a .git/hooks file: allow (expected deny)" in failures
    assert "write into the existing .vscode: allow (expected deny)" in failures
    assert wrong(move(profile, 0, 0), FILESYSTEM_MATRIX) == []  # the re-rendering is faithful


def test_moving_the_mask_after_the_reexposure_breaks_it() -> None:
    profile = seatbelt_profile(GOLDEN_POLICIES["read-allow-within-deny"])
    public = read(TOOL / "public" / "key.pub")
    assert decide(profile, public) == "allow"
    ordered = rules(profile)
    mask = next(
        i for i, r in enumerate(ordered) if r.action == "deny" and r.operations == ("file-read*",)
    )
    reexpose = next(
        i for i, r in enumerate(ordered) if r.action == "allow" and r.operations == ("file-read*",)
    )
    assert decide(move(profile, mask, reexpose), public) == "deny"


def test_the_writable_allow_before_the_global_write_deny_breaks_everything() -> None:
    profile = seatbelt_profile(GOLDEN_POLICIES["defaults"])
    ordered = rules(profile)
    global_deny = next(i for i, r in enumerate(ordered) if r.action == "deny" and not r.filters
                       and "file-write*" in r.operations)  # fmt: skip
    reordered = move(profile, global_deny, len(ordered) - 1)
    assert "write in the project: deny (expected allow)" in wrong(reordered, FILESYSTEM_MATRIX)


REEXPOSED_MATRIX: list[tuple[str, Request, str]] = [
    ("read a re-exposed file", read(TOOL / "public" / "key.pub"), "allow"),
    ("read the rest of the mask", read(TOOL / "token"), "deny"),
    ("stat the mask on the way down (realpath)", stat(TOOL), "allow"),
    ("list the mask", Request("file-read-data", path=str(TOOL), vnode_type="DIRECTORY"), "deny"),
    ("write the re-exposed path (outside every root)", write(TOOL / "public" / "x"), "deny"),
]


def test_a_reexposed_path_inside_a_mask_is_readable_and_only_that() -> None:
    assert (
        wrong(seatbelt_profile(GOLDEN_POLICIES["read-allow-within-deny"]), REEXPOSED_MATRIX) == []
    )


NESTED_MATRIX: list[tuple[str, Request, str]] = [
    # a writable root inside a re-exposed path inside a mask (outside the project)
    ("write the nested root", write(TOOL / "public" / "cache" / "blob"), "allow"),
    ("read the nested root", read(TOOL / "public" / "cache" / "blob"), "allow"),
    (
        "write the nested root's protected name",
        write(TOOL / "public" / "cache" / ".vscode" / "tasks.json"),
        "deny",
    ),
    ("write beside the nested root", write(TOOL / "public" / "other"), "deny"),
    # a mask inside the project, a re-exposure inside it, a root and a mask inside that
    ("read the project's mask", read(SECRETS / "api.key"), "deny"),
    ("write the project's mask (no throwaway layer)", write(SECRETS / "planted"), "deny"),
    ("rename the project's mask away", rename(SECRETS), "deny"),
    ("read the re-exposed part", read(SECRETS / "pub" / "cert.pem"), "allow"),
    ("write the re-exposed part (read-only)", write(SECRETS / "pub" / "x"), "deny"),
    ("write the root inside it", write(SECRETS / "pub" / "out" / "report"), "allow"),
    (
        "its protected names stay protected",
        write(SECRETS / "pub" / "out" / ".vscode" / "x"),
        "deny",
    ),
    ("and its hooks", write(SECRETS / "pub" / "out" / ".git" / "hooks" / "x"), "deny"),
    ("read the mask inside the re-exposure", read(SECRETS / "pub" / "private" / "k"), "deny"),
    ("write the mask inside the re-exposure", write(SECRETS / "pub" / "private" / "k"), "deny"),
    ("still: write elsewhere in the project", write(PROJECT / "src" / "x"), "allow"),
]


def test_when_paths_nest_the_deepest_decides() -> None:
    assert wrong(seatbelt_profile(GOLDEN_POLICIES["nested"]), NESTED_MATRIX) == []


def test_the_list_entries_of_the_matrix() -> None:
    def profile(name: str) -> str:
        return seatbelt_profile(GOLDEN_POLICIES[name])

    assert decide(profile("read-deny"), read(HOME / "Documents/taxes/2024.pdf")) == "deny"
    assert decide(profile("read-deny"), read(HOME / "notes.txt")) == "deny"
    assert decide(profile("read-deny"), read(HOME / "notes.txt.bak")) == "allow"  # a literal
    assert decide(profile("write-deny-within-allow"), write(PROJECT / "vendor/lib.c")) == "deny"
    assert decide(profile("write-deny-within-allow"), write(PROJECT / "vendored")) == "allow"
    assert decide(profile("extra-writable"), write(HOME / "shared-build/o")) == "allow"
    assert decide(profile("extra-writable"), write("/private/tmp/scratch/o")) == "allow"
    assert decide(profile("extra-writable"), write("/private/tmp/other")) == "deny"
    assert decide(profile("extra-writable"), write(HOME / "shared-build/.git/config")) == "allow"


def test_protected_names_that_do_not_exist_yet_are_left_to_the_guard() -> None:
    """No placeholder and no deny for a missing name: `git init`, a new .vscode, a new
    .gitmodules work as outside; the post-run guard judges what the command created."""
    profile = seatbelt_profile(GOLDEN_POLICIES["protected-not-yet-existing"])
    assert decide(profile, Request("file-write-create", path=str(PROJECT / ".git"))) == "allow"
    assert decide(profile, write(PROJECT / ".git" / "hooks" / "post-checkout")) == "allow"
    assert decide(profile, write(PROJECT / ".gitmodules")) == "allow"
    assert decide(profile, write(PROJECT / "main.c")) == "allow"


def test_odd_characters_in_paths_keep_their_meaning() -> None:
    profile = seatbelt_profile(GOLDEN_POLICIES["odd-paths"])
    assert decide(profile, write(ODD_PROJECT / "x")) == "allow"
    assert decide(profile, write(ODD_PROJECT / ".git" / "hooks" / "x")) == "deny"
    assert decide(profile, write(str(ODD_PROJECT).replace("\\", "") + "/x")) == "deny"
    secret = HOME / "Library/Application Support/Secret (Tool)/token"
    assert decide(profile, read(secret)) == "deny"


def test_a_project_below_tmp_is_named_with_its_private_prefix() -> None:
    profile = seatbelt_profile(GOLDEN_POLICIES["project-below-tmp"])
    assert decide(profile, write("/private/tmp/build/x")) == "allow"
    assert decide(profile, write("/private/tmp/build/.git/hooks/x")) == "deny"


def outbound(ip: str) -> Request:
    return Request("network-outbound", remote_ip=ip)


def unix_connect(path: str) -> Request:
    return Request("network-outbound", unix_socket=path)


def unix_bind(path: str) -> Request:
    return Request("network-bind", unix_socket=path)


NETWORK_MATRIX: dict[str, list[tuple[str, Request, str]]] = {
    "defaults": [
        ("reach the internet", outbound("93.184.216.34:443"), "deny"),
        ("reach a host loopback service", outbound("localhost:5432"), "deny"),
        ("connect to a unix socket", unix_connect("/private/var/run/docker.sock"), "deny"),
        ("bind a unix socket", unix_bind(str(PROJECT / "s.sock")), "deny"),
        ("resolve a name (mDNSResponder)", unix_connect(DNS_RESOLVER_SOCKET), "deny"),
    ],
    "network-allowlist": [
        ("reach the proxy", outbound(f"localhost:{PROXY_PORT}"), "allow"),
        ("reach the internet directly", outbound("93.184.216.34:443"), "deny"),
        ("reach another loopback port", outbound(f"localhost:{PROXY_PORT + 1}"), "deny"),
        ("connect to a unix socket", unix_connect("/private/var/run/docker.sock"), "deny"),
    ],
    "network-allow": [
        ("reach the internet", outbound("93.184.216.34:443"), "allow"),
        ("resolve a name (mDNSResponder)", unix_connect(DNS_RESOLVER_SOCKET), "allow"),
        ("connect to the docker socket", unix_connect("/private/var/run/docker.sock"), "deny"),
        ("bind a unix socket", unix_bind(str(PROJECT / "s.sock")), "deny"),
    ],
    "network-deny-unix-sockets": [
        ("reach the internet", outbound("93.184.216.34:443"), "deny"),
        ("connect to a unix socket", unix_connect("/private/tmp/tmux-501/default"), "allow"),
        ("bind a unix socket", unix_bind(str(PROJECT / "s.sock")), "allow"),
    ],
    "network-allow-unix-sockets": [
        ("reach the internet", outbound("93.184.216.34:443"), "allow"),
        ("connect to a unix socket", unix_connect("/private/tmp/tmux-501/default"), "allow"),
    ],
}


@pytest.mark.parametrize("name", sorted(NETWORK_MATRIX))
def test_each_network_mode_decides_as_on_linux(name: str) -> None:
    assert wrong(seatbelt_profile(GOLDEN_POLICIES[name]), NETWORK_MATRIX[name]) == []
