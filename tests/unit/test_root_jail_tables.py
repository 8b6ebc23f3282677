"""The tables and pure logic behind "never host root inside", the kernel table, setuid refusal,
authenticated caches, private spills and backend choice."""

from __future__ import annotations

import errno
import itertools
import json
import os
import stat
from pathlib import Path

import pytest

from stockade.errors import SandboxUnavailable, UsageError
from stockade.sandbox import bwrap, identity, idmap, probe, seccomp, select
from stockade.sandbox.backend import Unavailable
from stockade.sandbox.policy import (
    KERNEL_FILESYSTEMS,
    PolicyRequest,
    is_within,
    resolve_policy,
    root_only_secret_paths,
)
from stockade.sandbox.posture import Posture
from stockade.spills import SpillDir
from stockade.userdirs import (
    cache_key,
    cache_key_path,
    mac,
    read_json_cache,
    state_paths,
    verify,
    write_json_cache,
)
from stockade.vocabulary import ROOT_ONLY_SECRETS
from tests.unit.test_seccomp import AUDIT_ARCH, errno_action, nr, run_bpf

RET_ALLOW = 0x7FFF_0000
AT_FDCWD = (1 << 64) - 100  # -100 as the kernel hands it to the filter

# ------------------------------------------------------------------------ the kernel table

OCI_READONLY = {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}
OCI_MASKED = {
    "/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
    "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi",
    "/sys/firmware", "/sys/devices/virtual/powercap",
}  # fmt: skip


def test_the_kernel_table_covers_the_oci_defaults() -> None:
    assert set(bwrap.KERNEL_READ_ONLY) >= OCI_READONLY
    assert set(bwrap.KERNEL_MASKED) >= OCI_MASKED


def test_kernel_mounts_come_after_the_fresh_proc_and_skip_what_this_kernel_lacks(
    tmp_path: Path,
) -> None:
    policy = resolve_policy(PolicyRequest(project=tmp_path, cwd=tmp_path), session_tmp=tmp_path)
    arguments = bwrap.mount_arguments(policy)
    proc = arguments.index("--proc")
    assert arguments[proc + 1] == "/proc"
    for path in bwrap.KERNEL_READ_ONLY:
        if os.path.exists(path):
            at = arguments.index(path)
            assert arguments[at - 1] == "--ro-bind" and arguments[at + 1] == path
            assert at > proc
        else:
            assert path not in arguments
    pairs = list(itertools.pairwise(arguments))
    for path in bwrap.KERNEL_MASKED:
        if os.path.isdir(path):  # an empty tmpfs, turned read-only at the end
            assert ("--tmpfs", path) in pairs and ("--remount-ro", path) in pairs
        elif os.path.exists(path):
            at = arguments.index(path)
            assert arguments[at - 2 : at] == ["--ro-bind", "/dev/null"]
        else:
            assert path not in arguments


# ------------------------------------------------------------------------ the jail user


def test_the_default_jail_ids_are_outside_every_allocated_range() -> None:
    for value in (identity.DEFAULT_JAIL_UID, identity.DEFAULT_JAIL_GID):
        assert 1_879_048_192 <= value < 2_147_352_576  # systemd: unused
        assert value > 600_100_000  # useradd's default subordinate ids end there
        assert value < 2**31


def test_a_jail_user_that_is_an_account_is_refused() -> None:
    assert identity.conflict(identity.JailUser(0, 0)) is not None
    with pytest.raises(SandboxUnavailable, match="jail_uid"):
        identity.require_usable(identity.JailUser(0, 0))
    assert identity.conflict(identity.JailUser(4_294_967_295, 1)) is not None


def _parse(lines: str) -> list[tuple[int, int, int]]:
    return [tuple(int(v) for v in line.split()) for line in lines.splitlines()]  # type: ignore[misc]


@pytest.mark.parametrize(("owner", "target"), [(0, 2_000_000_000), (1000, 77), (5, 4)])
def test_id_maps_send_the_owner_to_the_jail_user_and_nothing_else(owner: int, target: int) -> None:
    extents = _parse(idmap.id_map_lines(owner, target))
    assert len(extents) <= 5  # the kernel takes up to 340

    def outside(inside: int) -> int | None:
        hits = [lo + inside - first for first, lo, n in extents if first <= inside < first + n]
        assert len(hits) <= 1
        return hits[0] if hits else None

    assert outside(owner) == target
    assert outside(target) is None  # its outside id is taken by the owner
    for probe_id in (0, 1, 999, 1000, 65534, 4_294_967_294):
        if probe_id not in (owner, target):
            assert outside(probe_id) == probe_id
    outsides = sorted((lo, lo + n) for _, lo, n in extents)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(outsides))


def test_plan_skips_trees_the_outer_mount_covers_and_reachability_follows_the_mapping(
    visible_dir: Path,
) -> None:
    user = identity.JailUser(2_000_000_000, 2_000_000_000)
    tmp_path = visible_dir
    home = tmp_path / "home"
    (home / "proj" / "sub").mkdir(parents=True)
    private = tmp_path / "private"
    (private / "inside").mkdir(parents=True)
    home.chmod(0o700)
    private.chmod(0o700)
    trees = [
        identity.Tree(home, read_only=True),
        identity.Tree(home / "proj", read_only=False),
        identity.Tree(home / "proj" / "sub", read_only=False),  # covered by proj
        identity.Tree(private / "inside", read_only=False),
    ]
    mapped = identity.plan(trees, user)
    assert [(p, ro) for p, ro, _, _ in mapped] == sorted(
        [(home, True), (home / "proj", False), (private / "inside", False)],
        key=lambda entry: (len(entry[0].parts), str(entry[0])),
    )  # parents first
    uid = os.getuid()
    if uid != 0:  # the owner of tmp_path's parents is this user, which maps to the jail user
        return
    assert identity.unreachable(home / "proj", user, mapped) is None  # home is id-mapped
    assert identity.unreachable(private / "inside", user, mapped) == private


# ------------------------------------------------------------------------ setuid refusal


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_setuid_and_setgid_modes_are_refused_and_plain_modes_allowed(machine: str) -> None:
    program = seccomp.compile_program(allow_unix_sockets=False, machine=machine)
    arch = AUDIT_ARCH[machine]
    eperm = errno_action(errno.EPERM)
    cases = {
        "fchmodat": (2, (AT_FDCWD, 0, 0o4755), (AT_FDCWD, 0, 0o755)),
        "fchmodat2": (2, (AT_FDCWD, 0, 0o2755, 0), (AT_FDCWD, 0, 0o1777, 0)),
        "fchmod": (1, (3, 0o6755), (3, 0o644)),
        "mknodat": (2, (AT_FDCWD, 0, 0o104755, 0), (AT_FDCWD, 0, 0o100644, 0)),
    }
    if machine == "x86_64":
        cases["chmod"] = (1, (0, 0o4711), (0, 0o711))
        cases["creat"] = (1, (0, 0o4755), (0, 0o755))
    for name, (_index, denied, allowed) in cases.items():
        assert run_bpf(program, nr(machine, name), arch, denied) == eperm, name
        assert run_bpf(program, nr(machine, name), arch, allowed) == RET_ALLOW, name
    openat = nr(machine, "openat")
    assert run_bpf(program, openat, arch, (AT_FDCWD, 0, 0o100 | 0o1, 0o4755)) == eperm
    assert run_bpf(program, openat, arch, (AT_FDCWD, 0, 0o20200000 | 0o2, 0o2755)) == eperm
    # without O_CREAT/O_TMPFILE the mode is ignored by the kernel: garbage there is fine
    assert run_bpf(program, openat, arch, (AT_FDCWD, 0, 0o1, 0o4755)) == RET_ALLOW
    assert run_bpf(program, openat, arch, (AT_FDCWD, 0, 0o100 | 0o1, 0o644)) == RET_ALLOW
    assert run_bpf(program, nr(machine, "openat2"), arch) == errno_action(errno.ENOSYS)
    assert run_bpf(program, nr(machine, "mkdirat"), arch, (AT_FDCWD, 0, 0o2775)) == RET_ALLOW


def test_setid_rules_are_on_every_filter() -> None:
    for unix in (False, True):
        for by_landlock in (False, True):
            for supervise in (False, True):
                table = seccomp.rules(
                    allow_unix_sockets=unix, network_by_landlock=by_landlock, supervise=supervise
                )
                assert set(seccomp.SETID_RULES) <= set(table)


# ------------------------------------------------------------------------ state and caches


def test_state_paths_are_protected_and_the_cache_key_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    named = tmp_path / "settings.toml"
    named.write_text("")
    monkeypatch.setenv("STOCKADE_CONFIG", str(named))
    policy = resolve_policy(PolicyRequest(project=tmp_path, cwd=tmp_path), session_tmp=tmp_path)
    for path in state_paths():
        assert Path(os.path.realpath(path)) in policy.write_deny_within_allow
    assert named in policy.write_deny_within_allow
    assert cache_key_path() in [m.path for m in policy.masked]


def test_cache_key_is_private_and_replaced_when_others_could_read_it() -> None:
    key = cache_key()
    path = cache_key_path()
    assert path.read_bytes() == key and stat.S_IMODE(path.stat().st_mode) == 0o600
    path.chmod(0o644)
    from stockade import userdirs

    userdirs._key_memo.clear()
    assert cache_key() != key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_json_caches_verify_and_forgeries_read_as_empty(isolated_user_dirs: Path) -> None:
    write_json_cache("probe.json", {"k": {"ok": True}})
    assert read_json_cache("probe.json") == {"k": {"ok": True}}
    cache = isolated_user_dirs / "XDG_CACHE_HOME" / "stockade" / "probe.json"
    envelope = json.loads(cache.read_text())
    envelope["data"]["k"]["ok"] = False  # what a jail would write (it cannot read the key)
    cache.write_text(json.dumps(envelope))
    assert read_json_cache("probe.json") == {}
    cache.write_text(json.dumps({"k": {"ok": True}}))  # 0.1's unauthenticated format
    assert read_json_cache("probe.json") == {}


def test_a_mac_is_bound_to_its_purpose() -> None:
    tag = mac("seccomp-filter", b"name", b"program")
    assert verify("seccomp-filter", tag, b"name", b"program")
    assert not verify("json-document", tag, b"name", b"program")
    assert not verify("seccomp-filter", tag, b"nameprogram")  # parts are length-framed


def test_a_forged_seccomp_cache_file_is_rebuilt(tmp_path: Path) -> None:
    seccomp._memo.clear()
    program = seccomp.build_filter_program(allow_unix_sockets=False, cache=tmp_path)
    [cached] = list(tmp_path.iterdir())
    allow_all = bytes.fromhex("0600000000007fff")
    from hashlib import blake2b

    head = cached.read_bytes()[:23]
    cached.write_bytes(head + blake2b(allow_all, digest_size=32).digest() + allow_all)
    seccomp._memo.clear()
    assert seccomp.build_filter_program(allow_unix_sockets=False, cache=tmp_path) == program


# ------------------------------------------------------------------------ spills


def test_spill_files_are_new_private_files_in_a_fresh_directory(tmp_path: Path) -> None:
    base = tmp_path / "output"
    spills = SpillDir(base)
    first = spills.open("1.stdout", cap=10)
    first.write(b"0123456789abcdef")
    first.close()
    assert first.path.read_bytes() == b"0123456789" and first.capped and first.dropped == 6
    assert stat.S_IMODE(first.path.parent.stat().st_mode) == 0o700
    with pytest.raises(FileExistsError):
        spills.open("1.stdout", cap=None)
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (first.path.parent / "2.stdout").symlink_to(victim)
    with pytest.raises(FileExistsError):
        spills.open("2.stdout", cap=None)
    assert victim.read_text() == "precious"
    assert SpillDir(base).directory() != first.path.parent  # another Sandbox, another dir
    spills.close()


def test_a_symlinked_spill_base_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "output").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OSError):
        SpillDir(tmp_path / "output").open("x", cap=None)


# ------------------------------------------------------------------------ policy and probe


@pytest.mark.parametrize("kernel", KERNEL_FILESYSTEMS)
def test_settings_cannot_mask_kernel_filesystems(tmp_path: Path, kernel: Path) -> None:
    for path in (kernel, kernel / "self"):
        request = PolicyRequest(project=tmp_path, cwd=tmp_path, read_deny=(path,))
        with pytest.raises(UsageError, match=f"read_deny entry .* is in {kernel}"):
            resolve_policy(request, session_tmp=tmp_path)


def test_the_root_only_table_is_absolute_and_described() -> None:
    for secret in ROOT_ONLY_SECRETS:
        assert secret.path.startswith("/") and secret.what
        assert not any(is_within(Path(secret.path), k) for k in KERNEL_FILESYSTEMS)
    for path in root_only_secret_paths():
        assert os.path.lexists(path)


def _claims(pid_namespace: bool = True) -> Posture:
    return Posture("bwrap", True, False, "", "", pid_namespace, True, 0)


def test_the_pid_namespace_proof_compares_namespace_inodes() -> None:
    host = os.readlink("/proc/self/ns/pid")
    good = "inside-write-ok\npidns:pid:[1]\ndone\n"
    assert probe._judge(good, 0, _claims()) == ()
    same = f"inside-write-ok\npidns:{host}\ndone\n"
    assert any("PID namespace" in f for f in probe._judge(same, 0, _claims()))
    missing = "inside-write-ok\ndone\n"
    assert any("PID namespace" in f for f in probe._judge(missing, 0, _claims()))


def test_an_openable_kernel_tunable_fails_the_proof() -> None:
    found = "inside-write-ok\nkernel-tunable-writable\npidns:pid:[1]\ndone\n"
    assert any("core_pattern" in f for f in probe._judge(found, 0, _claims()))


def test_namespace_creation_failures_make_a_backend_unavailable_not_failed() -> None:
    unavailable = probe._start_failure(
        "bwrap: No permissions to create a new namespace, likely because the kernel does not "
        "allow non-privileged user namespaces."
    )
    assert unavailable.unavailable and not unavailable.ok
    failed = probe._start_failure("bwrap: Can't mount proc on /newroot/proc: Invalid argument")
    assert not failed.unavailable


class _FakeBackend:
    def __init__(self, name: str, missing: Unavailable | None = None) -> None:
        self.name = name
        self.missing = missing

    def unavailable(self) -> Unavailable | None:
        return self.missing


def test_auto_moves_on_only_past_an_unavailable_backend(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    policy = resolve_policy(PolicyRequest(project=tmp_path, cwd=tmp_path), session_tmp=tmp_path)
    outcomes = {
        "bwrap": probe.ProbeResult(ok=False, failures=("no userns",), unavailable=True),
        "landlock": probe.ProbeResult(ok=True),
    }
    backends = {name: _FakeBackend(name) for name in outcomes}
    monkeypatch.setattr(select, "make_backend", lambda name: backends[name])
    monkeypatch.setattr(select, "prove", lambda backend, policy, identity: outcomes[backend.name])
    monkeypatch.setattr(_FakeBackend, "posture", lambda self, policy, proven: _claims(), False)
    assert select.select_backend("auto", policy).backend.name == "landlock"
    outcomes["bwrap"] = probe.ProbeResult(ok=False, failures=("a write outside succeeded",))
    with pytest.raises(SandboxUnavailable, match="never falls back"):
        select.select_backend("auto", policy)
    backends["bwrap"].missing = Unavailable("bubblewrap is not installed", "install it")
    assert select.select_backend("auto", policy).backend.name == "landlock"


# ------------------------------------------------------------------------ settings


def test_the_user_layer_sets_the_jail_user_and_root_jail(tmp_path: Path) -> None:
    from stockade.settings import load_settings
    from tests.settings_support import write_user

    write_user("[sandbox]\nroot_jail = true\njail_uid = 2100000000\njail_gid = 2100000001\n")
    request = load_settings(tmp_path, cwd=tmp_path).policy_request()
    assert request.root_jail is True
    assert request.jail_user == identity.JailUser(2_100_000_000, 2_100_000_001)


@pytest.mark.parametrize(
    "text",
    [
        "[sandbox]\njail_uid = 0\n",
        "[sandbox]\njail_uid = 4294967295\n",
        '[sandbox]\njail_gid = "2000000000"\n',
        '[sandbox]\nread_deny = ["/proc/1/environ"]\n',
        '[sandbox]\nread_deny = ["/sys"]\n',
    ],
)
def test_bad_jail_ids_and_kernel_masks_are_settings_errors(tmp_path: Path, text: str) -> None:
    from stockade.settings import validate_settings
    from tests.settings_support import write_project

    write_project(tmp_path, text)
    _, problems = validate_settings(tmp_path, cwd=tmp_path)
    assert len(problems) == 1 and problems[0].fix


@pytest.mark.skipif(os.geteuid() != 0, reason="needs chown")
def test_reachability_follows_the_innermost_mapping(visible_dir: Path) -> None:
    """A root-owned 0700 directory inside a root owned by someone else stays closed, even
    though the home around it maps root to the jail user."""
    user = identity.JailUser(2_000_000_000, 2_000_000_000)
    home = visible_dir / "home"
    closed = home / "theirs" / "closed"
    (closed / "inner").mkdir(parents=True)
    os.chown(home / "theirs", 4321, 4321)
    closed.chmod(0o700)
    trees = [identity.Tree(home, True), identity.Tree(home / "theirs", False)]
    mapped = identity.plan(trees, user)
    assert identity.unreachable(closed / "inner", user, mapped) == closed
    assert identity.unreachable(home / "theirs", user, mapped) is None
