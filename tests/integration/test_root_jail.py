"""The host kernel and host root stay out of reach: kernel tunables, the OCI masked paths,
root-only files, setuid bits and the host uid a command really runs as.

Every attempt is judged from the host side: the jail writes a marker into the project only when
the forbidden open succeeded (a kernel file is opened for writing and closed, never written),
and the host looks at the markers, the modes on disk and the uid in /proc. Run as root and as
an unprivileged user (tests that only mean something for one of them say so).
"""

from __future__ import annotations

import os
import stat
import subprocess
import time
from pathlib import Path

import pytest

from stockade.runner import Sandbox, run
from stockade.sandbox.policy import PolicyRequest
from tests.process_support import status_ids

pytestmark = pytest.mark.integration

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="only root is host root")

KERNEL_TUNABLES = (
    "/proc/sys/kernel/core_pattern",
    "/proc/sys/kernel/poweroff_cmd",
    "/proc/sys/kernel/randomize_va_space",
    "/proc/sys/vm/drop_caches",
    "/proc/sys/kernel/modprobe",
    "/proc/sysrq-trigger",
    "/sys/kernel/mm/transparent_hugepage/enabled",
    "/sys/kernel/uevent_helper",
)


def _writable_opens(paths: list[str], markers: Path, backend: str) -> list[str]:
    """Open each path for writing inside a jail (never writing a byte) and return the ones
    whose open succeeded, judged by the marker the jail leaves only on success."""
    lines = [
        f'( exec 3>>"{path}" ) 2>/dev/null && : > "{markers}/{index}"'
        for index, path in enumerate(paths)
    ]
    result = run(["/bin/sh", "-c", "\n".join([*lines, "exit 0"])], backend=backend)
    assert result.exit_code == 0, result.stderr
    assert result.posture.backend == backend
    return [path for index, path in enumerate(paths) if (markers / str(index)).exists()]


def test_kernel_tunables_cannot_be_opened_for_writing(project: Path, backend: str) -> None:
    existing = [p for p in KERNEL_TUNABLES if os.path.exists(p)]
    assert "/proc/sys/kernel/core_pattern" in existing
    markers = project / "markers"
    markers.mkdir()
    assert _writable_opens(existing, markers, backend) == []


def test_the_marker_mechanism_sees_a_successful_open(project: Path, backend: str) -> None:
    """Control: the same script does leave a marker for a file it may write."""
    markers = project / "markers"
    markers.mkdir()
    writable = str(project / "markers" / "target")
    assert _writable_opens([writable], markers, backend) == [writable]


def test_cgroup_files_are_read_only(project: Path, backend: str) -> None:
    own = Path("/proc/self/cgroup").read_text().splitlines()
    candidates = ["/sys/fs/cgroup/cgroup.procs", "/sys/fs/cgroup/unified/cgroup.procs"]
    for line in own:
        _, controllers, path = line.split(":", 2)
        name = controllers.split(",")[0] if controllers else "unified"
        candidates.append(f"/sys/fs/cgroup/{name}{path}/cgroup.procs")
    existing = [p for p in dict.fromkeys(candidates) if os.path.exists(p)]
    markers = project / "markers"
    markers.mkdir()
    assert _writable_opens(existing, markers, backend) == []


OCI_MASKED_FILES = ("/proc/timer_list", "/proc/interrupts", "/proc/keys")


def _host_content(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError:  # absent, or (unprivileged) not readable here either
        return b""


def test_oci_masked_paths_show_nothing_inside_bwrap(project: Path) -> None:
    readable = [p for p in OCI_MASKED_FILES if _host_content(p)]
    listed = [p for p in ("/sys/firmware", "/proc/acpi") if os.path.isdir(p) and os.listdir(p)]
    assert readable or listed, "nothing on this host to compare with"
    script = [f'cat "{p}" > "out{i}" 2>/dev/null' for i, p in enumerate(readable)]
    script += [f'ls -A "{p}" > "dir{i}" 2>/dev/null' for i, p in enumerate(listed)]
    result = run(["/bin/sh", "-c", "\n".join([*script, "exit 0"])], backend="bwrap")
    assert result.exit_code == 0, result.stderr
    for i, path in enumerate(readable):
        copy = project / f"out{i}"
        assert not copy.exists() or copy.read_bytes() == b"", f"{path} is readable inside"
    for i, path in enumerate(listed):
        assert (project / f"dir{i}").read_text() == "", f"{path} lists entries inside"


@pytest.fixture
def root_only_file(visible_dir: Path) -> Path:
    """A 0600 file owned by the test's user, outside home and every mask."""
    secret = visible_dir / "root-only.key"
    secret.write_text("host private key\n")
    secret.chmod(0o600)
    return secret


@as_root
def test_root_only_files_outside_home_are_unreadable_in_bwrap(
    project: Path, root_only_file: Path
) -> None:
    result = run(
        ["/bin/sh", "-c", f'cat "{root_only_file}" > leak 2>/dev/null; exit 0'], backend="bwrap"
    )
    assert result.exit_code == 0, result.stderr
    leak = project / "leak"
    assert not leak.exists() or leak.read_bytes() == b""


# Root-only files of the researched table that exist on this machine (landlock as root cannot
# change uid, so the table's masks are what keeps them out of reach there).
def _root_only_on_this_host() -> list[str]:
    from stockade.sandbox.policy import root_only_secret_paths

    return [str(p) for p in root_only_secret_paths() if p.is_file()]


@as_root
def test_root_only_secrets_of_the_table_cannot_be_opened(project: Path, backend: str) -> None:
    secrets = _root_only_on_this_host()
    assert secrets, "no root-only secret of the table exists here"
    lines = [
        f'( exec 3<"{path}" ) 2>/dev/null && : > "{project}/{index}"'
        for index, path in enumerate(secrets)
    ]
    result = run(["/bin/sh", "-c", "\n".join([*lines, "exit 0"])], backend=backend)
    assert result.exit_code == 0, result.stderr
    opened = [path for index, path in enumerate(secrets) if (project / str(index)).exists()]
    assert opened == []


SETID_ATTEMPTS = r"""
cp /bin/true chmodded && chmod 4755 chmodded
cp /bin/true setgid && chmod g+s setgid
cp /bin/true numeric && chmod 6755 numeric
install -m 4755 /bin/true installed
python3 - <<'EOF'
import os
for name, mode in (("created", 0o4755), ("created-g", 0o2755)):
    try:
        os.close(os.open(name, os.O_CREAT | os.O_WRONLY, mode))
    except OSError:
        pass
try:
    os.mknod("mknodded", 0o104755)
except OSError:
    pass
try:
    fd = os.open("fchmodded", os.O_CREAT | os.O_WRONLY, 0o755)
    os.fchmod(fd, 0o4755)
except OSError:
    pass
EOF
exit 0
"""


def test_setuid_and_setgid_bits_are_refused(project: Path, backend: str) -> None:
    work = project / "src"  # the Landlock backend freezes the project root itself
    work.mkdir()
    result = run(["/bin/sh", "-c", f"cd src\n{SETID_ATTEMPTS}"], backend=backend)
    assert result.exit_code == 0, result.stderr
    made = sorted(work.iterdir())
    assert made, "the attempts created nothing at all"
    with_bits = [p.name for p in made if p.lstat().st_mode & (stat.S_ISUID | stat.S_ISGID)]
    assert with_bits == []


def test_plain_chmod_and_inherited_setgid_directories_still_work(
    project: Path, backend: str
) -> None:
    work = project / "src"
    (work / "shared").mkdir(parents=True)
    (work / "shared").chmod(0o2775)
    script = "cd src && cp /bin/true tool && chmod 755 tool && ./tool && mkdir shared/sub"
    result = run(["/bin/sh", "-c", script], backend=backend)
    assert result.exit_code == 0, result.stderr
    assert (work / "tool").stat().st_mode & 0o777 == 0o755
    assert (work / "shared" / "sub").stat().st_mode & stat.S_ISGID


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline and b"sleep" in cmdline:
            found.append(int(entry))
    return found


@as_root
def test_the_command_is_never_host_root_under_bwrap(project: Path) -> None:
    from stockade.sandbox.identity import DEFAULT_JAIL_GID, DEFAULT_JAIL_UID

    marker = f"{time.time_ns() % 10**9}.5"
    with Sandbox(PolicyRequest(project=project), backend="bwrap") as sandbox:
        command = sandbox.start(["sleep", marker])
        try:
            deadline = time.monotonic() + 30
            while not (pids := _processes_with(marker)) and time.monotonic() < deadline:
                time.sleep(0.02)
            assert pids, "the confined sleep never showed up"
            for pid in pids:
                ids = status_ids(pid)
                assert ids["Uid"] == [DEFAULT_JAIL_UID] * 4
                assert ids["Gid"] == [DEFAULT_JAIL_GID] * 4
        finally:
            command.kill()
    assert "host uid" in sandbox.posture.identity and "never host root" in sandbox.posture.identity


@as_root
def test_files_written_as_root_land_owned_by_the_roots_owner(
    project: Path, visible_dir: Path
) -> None:
    owned = visible_dir / "someone-elses"
    owned.mkdir()
    os.chown(owned, 4321, 4322)
    script = f'echo a > mine && echo b > "{owned}/theirs" && id -u > whoami'
    with Sandbox(PolicyRequest(project=project, writable=(owned,)), backend="bwrap") as sandbox:
        result = sandbox.run(["/bin/sh", "-c", script])
    assert result.exit_code == 0, result.stderr
    assert (project / "mine").stat().st_uid == 0
    assert (owned / "theirs").stat().st_uid == 4321
    assert (owned / "theirs").stat().st_gid == 4322
    # the command sees itself as root, as before the uid drop
    assert (project / "whoami").read_text().strip() == "0"


@as_root
def test_git_and_tools_work_as_the_jail_user(project: Path) -> None:
    """git's ownership check (safe.directory) passes: the project looks like the command's."""
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    script = (
        "echo one > f && git add f && git -c user.name=a -c user.email=a@b commit -q -m first"
        " && git status --short && mkdir -p build && python3 -c 'print(1)' > build/out"
    )
    result = run(["/bin/sh", "-c", script], backend="bwrap")
    assert result.exit_code == 0, result.stderr
    assert (project / "build" / "out").read_text() == "1\n"
    log = subprocess.run(
        ["git", "-C", str(project), "log", "--oneline"], check=True, capture_output=True, text=True
    )
    assert "first" in log.stdout
    assert (project / "f").stat().st_uid == 0


@as_root
def test_an_explicit_root_jail_says_so_and_still_holds_the_kernel_and_setuid_lines(
    project: Path,
) -> None:
    existing = [p for p in KERNEL_TUNABLES if os.path.exists(p)]
    markers = project / "markers"
    markers.mkdir()
    lines = [
        f'( exec 3>>"{path}" ) 2>/dev/null && : > "{markers}/{index}"'
        for index, path in enumerate(existing)
    ]
    script = "\n".join([*lines, "cp /bin/true tool; chmod 4755 tool", "id -u > who", "exit 0"])
    request = PolicyRequest(project=project, root_jail=True)
    with Sandbox(request, backend="bwrap") as sandbox:
        assert "HOST ROOT" in sandbox.posture.identity
        assert any("runs as host root" in gap for gap in sandbox.posture.gaps)
        result = sandbox.run(["/bin/sh", "-c", script])
    assert result.exit_code == 0, result.stderr
    assert list(markers.iterdir()) == []
    assert not (project / "tool").stat().st_mode & stat.S_ISUID
    assert (project / "who").read_text().strip() == "0"
