"""Attempts on what the host keeps apart: masked secrets, kernel interfaces, host processes,
processes that outlive the run, seccomp-denied syscalls, terminals."""

from __future__ import annotations

from typing import Final

from stockade.doctor.attempts.model import (
    Attempt,
    Judge,
    any_of,
    appeared,
    held,
    marked,
    token,
)
from stockade.vocabulary import HOME_SECRETS

# ---------------------------------------------------------------------------------------------
# secrets: every credential store of the vocabulary exists in the lab's home with a canary
# ---------------------------------------------------------------------------------------------


def _home_secret_attempts() -> tuple[Attempt, ...]:
    """One attempt per credential store of ``vocabulary.HOME_SECRETS``: read its canary."""
    return tuple(
        Attempt(
            f"secrets.home.{secret.path.lstrip('.')}",
            "secrets",
            f"read {secret.tool} (~/{secret.path})",
            (("copy", "{home_canary:" + secret.path + "}", "{x}"),),
            any_of(token("home-secret")),
        )
        for secret in HOME_SECRETS
    )


SECRETS: Final[tuple[Attempt, ...]] = (
    *_home_secret_attempts(),
    Attempt(
        "secrets.via-proc-self-root",
        "secrets",
        "read a masked key through /proc/self/root",
        (("copy", "/proc/self/root{home}/.ssh/id_stockade", "{x}"),),
        any_of(token("home-secret")),
    ),
    Attempt(
        "secrets.via-dotdot",
        "secrets",
        "read a masked key through a path with ..",
        (("copy", "{project}/../home/.ssh/id_stockade", "{x}"),),
        any_of(token("home-secret")),
    ),
    Attempt(
        "secrets.via-symlink",
        "secrets",
        "plant a symlink to a masked key, read through it",
        (
            ("symlink", "{home}/.ssh/id_stockade", "{work}/key-link"),
            ("copy", "{work}/key-link", "{x}"),
        ),
        any_of(token("home-secret")),
    ),
    Attempt(
        "secrets.hardlink",
        "secrets",
        "hard-link a masked key into the project, read the link",
        (
            ("link", "{home}/.ssh/id_stockade", "{work}/key-hardlink"),
            ("copy", "{work}/key-hardlink", "{x}"),
        ),
        any_of(token("home-secret"), appeared("{work}/key-hardlink")),
    ),
    Attempt(
        "secrets.via-host-process-root",
        "secrets",
        "read a masked key through a host process's /proc/PID/root",
        (("copy", "/proc/{sentinel_pid}/root{home}/.ssh/id_stockade", "{x}"),),
        any_of(token("home-secret")),
    ),
    Attempt(
        "secrets.via-host-process-cwd",
        "secrets",
        "read a masked key through a host process whose cwd is ~/.ssh (/proc/PID/cwd)",
        (("copy", "/proc/{ssh_sentinel_pid}/cwd/id_stockade", "{x}"),),
        any_of(token("home-secret")),
    ),
    Attempt(
        "secrets.open-by-handle",
        "secrets",
        "open a masked key by file handle (open_by_handle_at, the 'shocker' escape)",
        (("open-by-handle", "{lab}", "{key_handle_type}", "{key_handle}", "{x}"),),
        any_of(token("home-secret")),
        needs=("root", "file-handle"),
    ),
    Attempt(
        "secrets.root-only-file",
        "secrets",
        "read a root-owned 0600 file outside home (a key under /etc, say)",
        (("copy", "{outside}/root-only-key", "{x}"),),
        any_of(token("root-only")),
        needs=("root",),
        admitted="host-root",
    ),
    Attempt(
        "secrets.etc-shadow",
        "secrets",
        "read /etc/shadow",
        (("copy", "/etc/shadow", "{x}"),),
        any_of(Judge("same-content", ("/etc/shadow", "{x}"))),
        needs=("root", "exists:/etc/shadow"),
    ),
    Attempt(
        "secrets.ssh-host-key",
        "secrets",
        "read the host's ssh private key",
        (("copy", "/etc/ssh/ssh_host_ed25519_key", "{x}"),),
        any_of(Judge("same-content", ("/etc/ssh/ssh_host_ed25519_key", "{x}"))),
        needs=("root", "exists:/etc/ssh/ssh_host_ed25519_key"),
    ),
)

# ---------------------------------------------------------------------------------------------
# kernel: files are opened and closed, NEVER written; the host sees the open fd (its mode and
# that it is the real file, not the /dev/null a mask puts there)
# ---------------------------------------------------------------------------------------------


def _kernel_write(name: str, path: str, why: str) -> Attempt:
    return Attempt(
        f"kernel.{name}",
        "kernel",
        f"open {path} for writing ({why}); nothing is written",
        (("hold-open", path, "write"),),
        any_of(held("write")),
        phase="hold",
        needs=(f"host-writable:{path}",),
    )


def _kernel_read(name: str, path: str, why: str) -> Attempt:
    return Attempt(
        f"kernel.{name}",
        "kernel",
        f"open {path} for reading ({why})",
        (("hold-open", path, "read"),),
        any_of(held("read")),
        phase="hold",
        needs=(f"host-readable:{path}",),
        admitted="kernel-files-readable",
    )


def _kernel_listing(name: str, path: str) -> Attempt:
    return Attempt(
        f"kernel.{name}",
        "kernel",
        f"list {path} (masked by the OCI runtimes)",
        (("listing", path, "{x}"),),
        any_of(Judge("same-listing", (path, "{x}"))),
        needs=(f"host-listing:{path}",),
        admitted="kernel-files-readable",
    )


KERNEL: Final[tuple[Attempt, ...]] = (
    _kernel_write("core-pattern", "/proc/sys/kernel/core_pattern", "a pipe here runs as root"),
    _kernel_write(
        "core-pattern-via-proc-self-root",
        "/proc/self/root/proc/sys/kernel/core_pattern",
        "the same file by another path",
    ),
    _kernel_write("poweroff-cmd", "/proc/sys/kernel/poweroff_cmd", "run as root at poweroff"),
    _kernel_write("modprobe", "/proc/sys/kernel/modprobe", "run as root for unknown binaries"),
    _kernel_write("randomize-va-space", "/proc/sys/kernel/randomize_va_space", "ASLR off"),
    _kernel_write("sysrq", "/proc/sys/kernel/sysrq", "enables every magic SysRq key"),
    _kernel_write("drop-caches", "/proc/sys/vm/drop_caches", "host-wide cache drop"),
    _kernel_write("bpf-jit", "/proc/sys/net/core/bpf_jit_enable", "host-wide, not per netns"),
    _kernel_write("sysrq-trigger", "/proc/sysrq-trigger", "reboot, crash, kill all"),
    _kernel_write("irq-affinity", "/proc/irq/default_smp_affinity", "host IRQ routing"),
    _kernel_write("binfmt-register", "/proc/sys/fs/binfmt_misc/register", "a host interpreter"),
    _kernel_write("uevent-helper", "/sys/kernel/uevent_helper", "run as root on hotplug"),
    _kernel_write("thp", "/sys/kernel/mm/transparent_hugepage/enabled", "host memory policy"),
    _kernel_write("power-state", "/sys/power/state", "suspends the host"),
    _kernel_write("kmsg", "/dev/kmsg", "forge kernel log lines"),
    _kernel_write("cgroup-root-procs", "{cgroup_root}/cgroup.procs", "leave every cgroup"),
    _kernel_write("cgroup-own-procs", "{cgroup_own}/cgroup.procs", "leave the run's cgroup"),
    _kernel_write("cgroup-release-agent", "{cgroup_release_agent}", "run as root (v1 escape)"),
    _kernel_read("kcore", "/proc/kcore", "host kernel memory"),
    _kernel_read("keys", "/proc/keys", "the kernel's key list"),
    _kernel_read("timer-list", "/proc/timer_list", "host timer and task details"),
    _kernel_read("sched-debug", "/proc/sched_debug", "host task details"),
    _kernel_read("latency-stats", "/proc/latency_stats", "host task details"),
    _kernel_listing("acpi", "/proc/acpi"),
    _kernel_listing("scsi", "/proc/scsi"),
    _kernel_listing("sys-firmware", "/sys/firmware"),
)

# ---------------------------------------------------------------------------------------------
# processes: a host sentinel process (same user) with a token in its argv, another in its
# environment and a third only in its memory; it blocks the signals below so the host sees any
# that arrive as pending
# ---------------------------------------------------------------------------------------------

NO_PID_NAMESPACE = "no-pid-namespace"

PROCESSES: Final[tuple[Attempt, ...]] = (
    Attempt(
        "processes.see-host-process",
        "processes",
        "find a host process by its command line in /proc",
        (("scan-cmdlines", "{sentinel_prefix}", "{x}"),),
        any_of(token("sentinel-argv")),
        admitted=NO_PID_NAMESPACE,
    ),
    Attempt(
        "processes.host-environ",
        "processes",
        "read a host process's environment (/proc/PID/environ)",
        (("copy", "/proc/{sentinel_pid}/environ", "{x}"),),
        any_of(token("sentinel-environ")),
    ),
    Attempt(
        "processes.vm-read",
        "processes",
        "read a host process's memory (process_vm_readv)",
        (("vm-read", "{sentinel_pid}", "{sentinel_address}", "{sentinel_length}", "{x}"),),
        any_of(token("sentinel-memory")),
    ),
    Attempt(
        "processes.mem-read",
        "processes",
        "read a host process's memory (/proc/PID/mem)",
        (("mem-read", "{sentinel_pid}", "{sentinel_address}", "{sentinel_length}", "{x}"),),
        any_of(token("sentinel-memory")),
    ),
    Attempt(
        "processes.signal-kill",
        "processes",
        "kill(2) a host process the test owns",
        (("signal", "kill", "{sentinel_pid}", "{signal:kill}"),),
        any_of(Judge("pending", ("kill",))),
    ),
    Attempt(
        "processes.signal-killpg",
        "processes",
        "signal a host process group (killpg)",
        (("signal", "killpg", "{sentinel_pid}", "{signal:killpg}"),),
        any_of(Judge("pending", ("killpg",))),
    ),
    Attempt(
        "processes.signal-pidfd",
        "processes",
        "signal a host process through a pidfd (pidfd_send_signal)",
        (("signal", "pidfd", "{sentinel_pid}", "{signal:pidfd}"),),
        any_of(Judge("pending", ("pidfd",))),
    ),
    Attempt(
        "processes.signal-sigqueue",
        "processes",
        "queue a signal to a host process (rt_sigqueueinfo)",
        (("signal", "sigqueue", "{sentinel_pid}", "{signal:sigqueue}"),),
        any_of(Judge("pending", ("sigqueue",))),
    ),
    Attempt(
        "processes.ptrace-seize",
        "processes",
        "attach to a host process with ptrace (PTRACE_SEIZE, never stops it)",
        (("hold-ptrace-seize", "{sentinel_pid}"),),
        any_of(Judge("traced-sentinel")),
        phase="hold",
    ),
    Attempt(
        "processes.oom-score-adj",
        "processes",
        "open a host process's oom_score_adj for writing (nothing is written)",
        (("hold-open", "/proc/{sentinel_pid}/oom_score_adj", "write"),),
        any_of(held("write")),
        phase="hold",
    ),
    Attempt(
        "processes.write-via-host-cwd",
        "processes",
        "write outside through a host process's /proc/PID/cwd",
        (("write", "/proc/{sentinel_pid}/cwd/via-host-cwd"),),
        any_of(marked("{outside}/via-host-cwd")),
    ),
)

# ---------------------------------------------------------------------------------------------
# persistence: each survivor writes {x}.started, then sleeps with {marker} in its argv; the host
# looks for a live process with that marker after the run returned
# ---------------------------------------------------------------------------------------------


def _survivor(mode: str, does: str) -> Attempt:
    return Attempt(
        f"persistence.{mode}",
        "persistence",
        does,
        (("survive", mode, "{marker}", "{x}.started"),),
        any_of(Judge("alive", ("{marker}", "{x}.started"))),
        phase="last",
    )


PERSISTENCE: Final[tuple[Attempt, ...]] = (
    _survivor("background", "start a background process (same process group)"),
    _survivor("setsid", "start a process in a new session (setsid)"),
    _survivor("new-group", "start a process in a new process group"),
    _survivor("nohup", "start a process that ignores SIGHUP, SIGTERM and SIGINT"),
    _survivor("double-fork", "double-fork so the process is reparented"),
    _survivor("daemon", "daemonise: fork, setsid, fork, close stdio"),
)

# ---------------------------------------------------------------------------------------------
# seccomp: each denied call is made with valid arguments; had it worked, the host would see the
# object it made (an fd in the jailed process, a child's namespace, a tracer, a key)
# ---------------------------------------------------------------------------------------------

SECCOMP: Final[tuple[Attempt, ...]] = (
    Attempt(
        "seccomp.io-uring",
        "seccomp",
        "io_uring_setup (io_uring bypasses seccomp for the operations it runs)",
        (("hold-io-uring",),),
        any_of(held("anon", "[io_uring]")),
        phase="hold",
        needs=("host-can:io_uring",),
    ),
    Attempt(
        "seccomp.userfaultfd",
        "seccomp",
        "userfaultfd (the classic kernel race primitive)",
        (("hold-userfaultfd",),),
        any_of(held("anon", "[userfaultfd]")),
        phase="hold",
        needs=("host-can:userfaultfd",),
    ),
    Attempt(
        "seccomp.perf-event",
        "seccomp",
        "perf_event_open (a software counter of this process)",
        (("hold-perf-event",),),
        any_of(held("anon", "[perf_event]")),
        phase="hold",
        needs=("host-can:perf_event",),
    ),
    Attempt(
        "seccomp.bpf",
        "seccomp",
        "bpf(BPF_MAP_CREATE)",
        (("hold-bpf-map",),),
        any_of(held("anon", "bpf-map")),
        phase="hold",
        needs=("host-can:bpf",),
    ),
    Attempt(
        "seccomp.unix-socket",
        "seccomp",
        "socket(AF_UNIX) (docker.sock, the session bus and tmux sockets are escapes)",
        (("hold-unix-socket",),),
        any_of(held("unix")),
        phase="hold",
        admitted="unix-sockets-allowed",
    ),
    Attempt(
        "seccomp.unshare-user",
        "seccomp",
        "unshare(CLONE_NEWUSER) in a child",
        (("hold-child", "unshare-user"),),
        any_of(Judge("new-user-namespace")),
        phase="hold",
        needs=("host-can:userns",),
    ),
    Attempt(
        "seccomp.clone-newuser",
        "seccomp",
        "clone(CLONE_NEWUSER) directly",
        (("hold-clone-newuser",),),
        any_of(Judge("new-user-namespace")),
        phase="hold",
        needs=("host-can:userns",),
    ),
    Attempt(
        "seccomp.ptrace-traceme",
        "seccomp",
        "ptrace(PTRACE_TRACEME) in a child",
        (("hold-child", "traceme"),),
        any_of(Judge("traced-child")),
        phase="hold",
    ),
    Attempt(
        "seccomp.keyring",
        "seccomp",
        "keyctl: join a new named session keyring (kernel keyrings are shared state)",
        (("hold-child", "keyring"),),
        any_of(Judge("keyring")),
        phase="hold",
        needs=("host-can:keyring",),
    ),
)

# ---------------------------------------------------------------------------------------------
# terminals: {pty} is a pseudo-terminal the doctor opened on the host (it reads the other side)
# ---------------------------------------------------------------------------------------------

TERMINALS: Final[tuple[Attempt, ...]] = (
    Attempt(
        "terminals.host-pty",
        "terminals",
        "write into another terminal of the user (/dev/pts/N)",
        (("write-terminal", "{pty}", "{pty_marker:host-pty}"),),
        any_of(Judge("pty", ("host-pty",))),
    ),
    Attempt(
        "terminals.host-pty-via-proc",
        "terminals",
        "write into a host process's terminal through /proc/PID/fd/0",
        (("write-terminal", "/proc/{sentinel_pid}/fd/0", "{pty_marker:via-proc}"),),
        any_of(Judge("pty", ("via-proc",))),
    ),
    Attempt(
        "terminals.every-pts",
        "terminals",
        "open every terminal in /dev/pts for writing (nothing is written)",
        (("hold-every-pts", "{slot}"),),
        any_of(held("pts")),
        phase="hold",
    ),
    Attempt(
        "terminals.console",
        "terminals",
        "open the first virtual console for writing (nothing is written)",
        (("hold-open", "/dev/tty1", "write"),),
        any_of(held("write")),
        phase="hold",
        needs=("host-writable:/dev/tty1",),
    ),
    Attempt(
        "terminals.dev-console",
        "terminals",
        "open /dev/console for writing (nothing is written)",
        (("hold-open", "/dev/console", "write"),),
        any_of(held("write")),
        phase="hold",
        needs=("host-writable:/dev/console",),
    ),
)
