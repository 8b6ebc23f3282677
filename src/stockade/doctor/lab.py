"""The lab: a temporary tree the deep battery builds on the host, and the only thing any escape
attempt could change.

Layout (below a fresh directory in /var/tmp, visible inside every jail)::

    project/   the jail's project: a git repo (core.hooksPath = .husky) with a nested repo sub/
               and a worktree link; exchange/ is where the jail drops what it managed to read
    other/     a second writable root: .stockade/settings.toml, .mcp.json (a symlink), and a
               .git file (a worktree of project/)
    outside/   files the host user owns outside every root (sentinels for writes and metadata)
    home/      $HOME while the battery runs: every credential store of the vocabulary with a
               canary, stockade's own config/data/cache dirs (XDG), CARGO_HOME and GOMODCACHE
    run/       $XDG_RUNTIME_DIR (with stockade's runtime dir)
    sockets/   the unix-socket tripwires

While the battery runs, the doctor's own environment points at the lab (HOME, XDG dirs,
STOCKADE_CONFIG, CARGO_HOME, GOMODCACHE) and carries the secret-looking variables of
``ENVIRONMENT_VARIABLES``; it is restored afterwards. Nothing outside the lab is written,
except what an escape itself would create (removed afterwards).
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import fcntl
import os
import re
import secrets
import shutil
import socket
import struct
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from stockade.doctor.fixtures import (
    SENTINEL_SIGNALS,
    Sentinel,
    Terminal,
    Tripwires,
    environment,
    start_sentinel,
)
from stockade.doctor.quick import DOCTOR_ALLOWED_HOST as ALLOWED_HOST
from stockade.doctor.quick import DOCTOR_DENIED_HOST as DENIED_HOST
from stockade.net.bridge import JAIL_SOCKET_PATH
from stockade.vocabulary import HOME_SECRETS

LAB_PARENTS = (Path("/var/tmp"),)  # visible inside jails (unlike /tmp), writable by anyone
KEYRING_PREFIX = "stockade-doctor-"
CAP_NET_RAW = 13

#: Secret-looking variables the doctor sets in its own environment while the battery runs
#: (``%s`` is replaced by a fresh random token; the jail must never see the token).
ENVIRONMENT_VARIABLES: dict[str, str] = {
    "STOCKADE_DOCTOR_API_KEY": "%s",
    "STOCKADE_DOCTOR_AUTH_TOKEN": "%s",
    "stockade_doctor_client_secret": "%s",
    "STOCKADE_DOCTOR_DB_PASSWORD": "%s",
    "STOCKADE_DOCTOR_CREDENTIALS": "%s",
    "STOCKADE_DOCTOR_MYSQL_PWD": "%s",
    "STOCKADE_DOCTOR_GITHUB_PAT": "ghp_%s",
    "STOCKADE_DOCTOR_FINE_GRAINED": "github_pat_11AAAAAAA0%s",
    "STOCKADE_DOCTOR_AWS_ID": "AKIA%s",
    "STOCKADE_DOCTOR_SLACK": "xoxb-1234567890-%s",
    "STOCKADE_DOCTOR_OPENAI": "sk-proj-%s",
    "STOCKADE_DOCTOR_DATABASE_URL": "postgres://app:%s@db.example.invalid:5432/app",
    "STOCKADE_DOCTOR_SENTRY_DSN": "https://%s@o1.ingest.example.invalid/1",
    "STOCKADE_DOCTOR_CI_JOB_JWT": "eyJhbGciOiJIUzI1NiJ9.%s.c2lnbmF0dXJl",
    "SSH_AUTH_SOCK": "/var/tmp/stockade-doctor-agent-%s.sock",
}

_FILE_LIKE = re.compile(r"(history|credentials|token|rc|pass|cfg|boto|\.[A-Za-z]+)$")


class Lookup:
    """A placeholder with a key: ``{signal:kill}`` formats ``Lookup({...})`` with ``kill``."""

    def __init__(self, table: Mapping[str, str]) -> None:
        self.table = table

    def get(self, key: str) -> str | None:
        return self.table.get(key)


def _token() -> str:
    return secrets.token_hex(12)


def _write(path: Path, text: str, mode: int = 0o644) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)
    return path


def _git_dir(path: Path, config: str) -> None:
    """The skeleton ``git init`` makes (enough for git to treat it as a repository)."""
    for part in ("objects", "refs/heads", "hooks", "info"):
        (path / part).mkdir(parents=True, exist_ok=True)
    _write(path / "HEAD", "ref: refs/heads/main\n")
    _write(path / "config", config)
    _write(path / "hooks" / "pre-commit.sample", "#!/bin/sh\nexit 0\n")
    for sample in ("pre-rebase", "update", "post-update"):
        _write(path / "hooks" / f"{sample}.sample", "#!/bin/sh\nexit 0\n")
    _write(path / "info" / "exclude", "# lab\n")


GIT_CONFIG = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"


class Lab:
    """Build with ``Lab.create()`` (a context manager that removes everything afterwards)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.id = f"stockade-doctor-{root.name.rsplit('-', 1)[-1]}"
        self.project = root / "project"
        self.other = root / "other"
        self.spare = root / "spare"  # a root of its own for the attempt that renames .git
        self.outside = root / "outside"
        self.home = root / "home"
        self.run = root / "run"
        self.sockets = root / "sockets"
        self.exchange = self.project / "exchange"
        self.work = self.project / "work"  # scratch inside (the project root may be frozen)
        self.config_dir = self.home / ".config" / "stockade"
        self.data_dir = self.home / ".local" / "share" / "stockade"
        self.cache_dir = self.home / ".cache" / "stockade"
        self.runtime_dir = self.run / "stockade"
        self.stockade_config = self.home / ".config" / "stockade-settings.toml"
        self.tokens: dict[str, str] = {}
        self.environment_values: dict[str, str] = {}
        self.values: dict[str, Any] = {}
        self.cleanups: list[Path] = []  # paths outside the lab an escape may have created
        self.tripwires: Tripwires
        self.sentinel: Sentinel
        self.ssh_sentinel: Sentinel
        self.terminal: Terminal

    @classmethod
    @contextmanager
    def create(cls) -> Iterator[Lab]:
        parent = _parent()
        sweep_stale_labs(parent)
        root = Path(os.path.realpath(tempfile.mkdtemp(prefix=LAB_PREFIX, dir=parent)))
        lab = cls(root)
        with ExitStack() as stack:
            stack.callback(lab._remove)
            stack.enter_context(_owned(root))
            root.chmod(0o755)
            lab._build_tree()
            lab._make_environment()
            lab.terminal = Terminal()
            stack.callback(lab.terminal.close)
            lab.tripwires = Tripwires(lab.sockets, lab.id)
            stack.callback(lab.tripwires.close)
            lab._start_sentinels(stack)
            lab._fill_values()
            yield lab

    # -- the tree -----------------------------------------------------------------------------

    def _build_tree(self) -> None:
        for directory in (self.other, self.spare, self.outside, self.run, self.sockets):
            directory.mkdir(mode=0o755)
        self.project.mkdir(mode=0o700)  # no other user may reach what an escape might make there
        self.exchange.mkdir()
        self.work.mkdir()
        git = self.project / ".git"
        # hooks in the work tree (husky), and per-worktree config files in effect
        config = GIT_CONFIG.replace("= 0", "= 1") + "\thooksPath = .husky\n"
        _git_dir(git, config + "[extensions]\n\tworktreeConfig = true\n")
        worktree = git / "worktrees" / "other"
        worktree.mkdir(parents=True)
        _write(worktree / "HEAD", "ref: refs/heads/other\n")
        _write(worktree / "commondir", "../..\n")
        _write(worktree / "gitdir", f"{self.other}/.git\n")
        _git_dir(self.project / "sub" / ".git", GIT_CONFIG)
        _git_dir(self.spare / ".git", GIT_CONFIG)
        _write(self.other / ".stockade" / "settings.toml", "# the lab's project settings\n")
        _write(self.other / "mcp-real.json", '{"mcpServers": {}}\n')
        (self.other / ".mcp.json").symlink_to("mcp-real.json")
        _write(self.other / ".git", f"gitdir: {worktree}\n")
        for name in ("truncate-me", "delete-me", "steal-me"):
            _write(self.outside / name, "a host file the jail must not touch\n")
        for name in ("meta-chmod", "meta-fchmod", "meta-utime", "meta-xattr", "meta-chown"):
            _write(self.outside / name, "metadata sentinel\n", 0o600)
        self.tokens["root-only"] = _token()
        _write(self.outside / "root-only-key", self.tokens["root-only"] + "\n", 0o600)
        self._build_home()
        (self.runtime_dir).mkdir(mode=0o700)
        _write(self.runtime_dir / "state", "stockade runtime state\n", 0o600)

    def _build_home(self) -> None:
        token = self.tokens["home-secret"] = _token()
        for directory in (".config", ".local/share", ".local/state", ".cache"):
            (self.home / directory).mkdir(parents=True, exist_ok=True)
        canaries: dict[str, str] = {}
        for secret in HOME_SECRETS:
            path = self.home / secret.path
            if path.exists():  # inside another store (e.g. a file below ~/.config/gcloud)
                canaries[secret.path] = str(path if path.is_file() else path / "canary")
                continue
            if _FILE_LIKE.search(path.name.lstrip(".")):
                canaries[secret.path] = str(_write(path, f"secret {token}\n", 0o600))
            else:
                path.mkdir(parents=True, mode=0o700)
                canaries[secret.path] = str(_write(path / "canary", f"secret {token}\n", 0o600))
        _write(self.home / ".ssh" / "id_stockade", f"-----KEY {token}-----\n", 0o600)
        _write(
            self.home / ".ssh" / "id_metadata", "a key whose mode the jail must not change\n", 0o600
        )
        self.values["home_canary"] = Lookup(canaries)
        _write(self.config_dir / "settings.toml", "# the lab's user settings\n")
        (self.cache_dir / "seccomp").mkdir(parents=True)
        _write(self.data_dir / "trusted-workspaces.json", "{}\n", 0o600)
        _write(self.stockade_config, "# the lab's STOCKADE_CONFIG\n")
        registry = self.home / ".cargo" / "registry" / "src" / "index.crates.io-6f17d22bba15001f"
        self.values["cargo_build_rs"] = str(
            _write(registry / "stockade-doctor-demo-1.0.0" / "build.rs", "fn main() {}\n")
        )
        checkout = self.home / ".cargo" / "git" / "checkouts" / "demo-0123456789abcdef" / "abc1234"
        self.values["cargo_git_build_rs"] = str(_write(checkout / "build.rs", "fn main() {}\n"))
        module = self.home / "go" / "pkg" / "mod" / "example.com" / "demo@v1.0.0"
        self.values["go_module_source"] = str(_write(module / "demo.go", "package demo\n"))

    def _make_environment(self) -> None:
        for name, template in ENVIRONMENT_VARIABLES.items():
            token = _token()
            if name == "STOCKADE_DOCTOR_CI_JOB_JWT":  # the token travels base64-encoded
                token = base64.urlsafe_b64encode(f'{{"sub":"{token}"}}'.encode()).decode()
                token = token.rstrip("=")
            self.environment_values[name] = template % token
            self.tokens[f"env:{name}"] = token

    def _start_sentinels(self, stack: ExitStack) -> None:
        for name in ("sentinel-argv", "sentinel-environ", "sentinel-memory"):
            self.tokens[name] = _token()
        self.sentinel = start_sentinel(
            argv=[f"{self.id}-sentinel", self.tokens["sentinel-argv"]],
            environ_token=self.tokens["sentinel-environ"],
            environment=self.environment_values,  # like a launcher started with secrets
            memory_token=self.tokens["sentinel-memory"],
            cwd=self.outside,
            stdin=self.terminal.slave,
        )
        stack.callback(self.sentinel.stop)
        self.ssh_sentinel = start_sentinel(
            argv=[f"{self.id}-ssh-sentinel", _token()],
            environ_token=_token(),
            environment={},
            memory_token=_token(),
            cwd=self.home / ".ssh",
            stdin=None,
        )
        stack.callback(self.ssh_sentinel.stop)

    def _remove(self) -> None:
        for path in self.cleanups:
            with contextlib.suppress(OSError):
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink()
        # A process of the last jail that was killed as its run ended may still have been
        # finishing a write into the lab: remove again until nothing is left (bounded; what
        # would still be there is swept by the next doctor, its lock being free)
        for _ in range(3):
            _make_removable(self.root)
            shutil.rmtree(self.root, ignore_errors=True)
            if not os.path.lexists(self.root):
                break

    # -- the values attempts refer to ------------------------------------------------------------

    def _fill_values(self) -> None:
        markers = {name: f"{self.id}-pty-{name}-{_token()}" for name in ("host-pty", "via-proc")}
        self.tokens.update({f"pty:{name}": marker for name, marker in markers.items()})
        handle = _file_handle(self.home / ".ssh" / "id_stockade")
        cgroups = _cgroup_paths()
        self.values.update(
            {
                "lab": str(self.root),
                "lab_id": self.id,
                "project": str(self.project),
                "other": str(self.other),
                "spare": str(self.spare),
                "outside": str(self.outside),
                "home": str(self.home),
                "exchange": str(self.exchange),
                "work": str(self.work),
                "config_dir": str(self.config_dir),
                "data_dir": str(self.data_dir),
                "cache_dir": str(self.cache_dir),
                "runtime_dir": str(self.runtime_dir),
                "stockade_config": str(self.stockade_config),
                "shell": os.path.realpath("/bin/sh"),
                "sentinel_prefix": f"{self.id}-sentinel",
                "sentinel_pid": str(self.sentinel.pid),
                "sentinel_address": str(self.sentinel.address),
                "sentinel_length": str(self.sentinel.length),
                "ssh_sentinel_pid": str(self.ssh_sentinel.pid),
                "signal": Lookup({k: str(int(v)) for k, v in SENTINEL_SIGNALS.items()}),
                "pty": self.terminal.path,
                "pty_marker": Lookup(markers),
                "host4": _host_address(socket.AF_INET, "192.0.2.123"),
                "host6": _host_address(socket.AF_INET6, "2001:db8::1"),
                "key_handle_type": str(handle[0]) if handle else None,
                "key_handle": handle[1] if handle else None,
                "cap_xattr": "hex:"
                + struct.pack("<IIIII", 0x02000001, 1 << CAP_NET_RAW, 0, 0, 0).hex(),
                "allowed": ALLOWED_HOST,
                "denied": DENIED_HOST,
                "denied_upper": DENIED_HOST.upper(),
                "relay_socket": JAIL_SOCKET_PATH,  # where the in-jail bridge connects
                **cgroups,
            }
        )
        self.cleanups += [  # where the fs.dev-shm, fs.var-tmp and fs.host-tmp attempts write
            Path(f"/dev/shm/{self.id}-shm"),
            Path(f"/var/tmp/{self.id}-var-tmp"),
            Path(f"/tmp/{self.id}-tmp"),
        ]

    @contextmanager
    def environment(self) -> Iterator[None]:
        """Point the doctor's own environment at the lab while the battery builds jails."""
        wanted = {
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_RUNTIME_DIR": str(self.run),
            "STOCKADE_CONFIG": str(self.stockade_config),
            "CARGO_HOME": str(self.home / ".cargo"),
            "GOMODCACHE": str(self.home / "go" / "pkg" / "mod"),
            **self.environment_values,
        }
        with environment(wanted):
            yield

    @property
    def writable_roots(self) -> tuple[Path, ...]:
        """The confined scenario's writable roots besides the project (and CARGO_HOME /
        GOMODCACHE, which the policy adds by itself)."""
        return (
            self.other,
            self.home / ".config",
            self.home / ".local",
            self.home / ".cache",
            self.run,
        )

    def state_files(self) -> dict[str, list[str]]:
        """stockade's own state files as they are now (after the jails were built): every cache
        file, every compiled filter, every private key file."""
        groups: dict[str, list[str]] = {"cache": [], "filters": [], "keys": []}
        for directory in (self.config_dir, self.data_dir, self.cache_dir, self.runtime_dir):
            for path in sorted(directory.rglob("*")):
                if path.is_symlink() or not path.is_file():
                    continue
                if path.suffix == ".bpf":
                    groups["filters"].append(str(path))
                elif directory == self.cache_dir:
                    groups["cache"].append(str(path))
                if "key" in path.name.lower() and not path.stat().st_mode & 0o077:
                    groups["keys"].append(str(path))
        return groups


LAB_PREFIX = "stockade-doctor-"
OWNER_LOCK = ".owner.lock"  # held (flock) by the doctor while its lab exists


@contextmanager
def _owned(root: Path) -> Iterator[None]:
    """Hold the lab's owner lock; it appears under its name only once it is locked, so a
    sweeper never takes a lab being set up for a dead one."""
    staging = root / f"{OWNER_LOCK}.{os.getpid()}"
    fd = os.open(staging, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.rename(staging, root / OWNER_LOCK)
    try:
        yield
    finally:
        os.close(fd)


def sweep_stale_labs(parent: Path) -> None:
    """Remove labs whose doctor died (killed with SIGKILL, say): their lock is free."""
    for root in parent.glob(f"{LAB_PREFIX}*"):
        try:
            if root.stat().st_uid != os.geteuid():
                continue
            fd = os.open(root / OWNER_LOCK, os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # its doctor is still running
        finally:
            os.close(fd)
        _make_removable(root)
        shutil.rmtree(root, ignore_errors=True)


def _parent() -> Path:
    for candidate in LAB_PARENTS:
        if os.access(candidate, os.W_OK | os.X_OK):
            return candidate
    from stockade.userdirs import cache_dir

    fallback = cache_dir()
    fallback.mkdir(parents=True, exist_ok=True)
    return fallback


def _make_removable(root: Path) -> None:
    """Escapes may have left read-only modes behind; make the tree deletable."""
    for directory, _, _ in os.walk(root):
        with contextlib.suppress(OSError):
            os.chmod(directory, 0o755)


def _host_address(family: int, probe: str) -> str | None:
    """The host's own address on the default route (no packet is sent), or None."""
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as sock:
            sock.connect((probe, 9))
            address = str(sock.getsockname()[0])
    except OSError:
        return None
    if address.startswith(("127.", "fe80", "::")):
        return None
    return address


def _cgroup_paths() -> dict[str, str | None]:
    """The cgroup files a jail must not open for writing: the root's and this process's
    cgroup.procs, and a cgroup v1 release_agent."""
    base = Path("/sys/fs/cgroup")
    unified = base / "unified" if (base / "unified" / "cgroup.procs").exists() else base
    own = None
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            if line.startswith("0::"):
                own = unified / line[3:].lstrip("/")
    release = next((str(p) for p in sorted(base.glob("*/release_agent"))), None)
    return {
        "cgroup_root": str(unified) if (unified / "cgroup.procs").exists() else None,
        "cgroup_own": str(own) if own is not None and (own / "cgroup.procs").exists() else None,
        "cgroup_release_agent": release,
    }


def _file_handle(path: Path) -> tuple[int, str] | None:
    """name_to_handle_at on the host (no privilege needed): (handle type, handle hex)."""
    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(struct.pack("Ii", 128, 0) + bytes(128))
    mount_id = ctypes.c_int()
    at_fdcwd = -100
    if libc.name_to_handle_at(at_fdcwd, str(path).encode(), buffer, ctypes.byref(mount_id), 0):
        return None
    size, kind = struct.unpack("Ii", buffer.raw[:8])
    return kind, buffer.raw[8 : 8 + size].hex()
