"""The system: package managers (apt, brew, dnf…), services (systemctl), processes (kill),
scheduled jobs (crontab), hosts and clocks (hostname, date, ip), disks and accounts. Inspecting
is read-only; changing the system high; what cannot be undone from inside a session is
destructive (power, accounts, disks, ``kill -1``).
"""

# ruff: noqa: SIM905  (tables are whitespace-separated strings on purpose: easy to audit)

from __future__ import annotations

from typing import TYPE_CHECKING

from stockade.risk.flags import flag, optional, read, value
from stockade.risk.model import Args, Call, D, Flag, Found, H, L, M, R, Spec, SubTable

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from stockade.risk.engine import Context

#: ``ip`` subcommand words that change the system.
IP_CHANGES = frozenset("add del delete set flush change replace append exec".split())


def hostname_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    if args.operands or args.has(_HOSTNAME_FILE):
        found.add(H, "program.table", "hostname sets the host name")


def date_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    if any(word[:1] != "+" for word, _, _, _ in args.operands):
        found.add(H, "program.table", "date MMDDhhmm sets the clock")


def ifconfig_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    if len(args.operands) > 1:
        found.add(H, "program.table", "ifconfig configures an interface")


def ip_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    words = [word for word, _, _, _ in args.operands]
    if any(word in IP_CHANGES for word in words):
        found.add(H, "program.table", "ip changes the network configuration")
    if words[:2] == ["netns", "exec"] and len(words) > 3:
        ctx.command(found, call.shifted(args.operands[3][2]))


def service_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    words = [word for word, _, _, _ in args.operands]
    status_all = call.words[1:] == _SERVICE_STATUS_ALL.names
    if not (len(words) >= 2 and words[1] == "status") and not status_all:
        found.add(H, "program.table", "service starts, stops or reloads a service")


def crontab_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    if args.has(_CRONTAB_LIST) and not args.has(_CRONTAB_REMOVE):
        found.add(R, "program.table", "crontab -l lists jobs")
    else:
        found.add(H, "system.persistence", "crontab installs or removes jobs that run later")


def kill_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """``kill PID`` is high; a PID of -1 (``kill -9 -1``) signals every process. (``-1`` after
    the options is a PID, not a signal: ``kill -9 -1``, ``kill -- -1``, ``kill -s KILL -1``.)"""
    words = call.words
    if len(words) > 1 and words[1] in _KILL_LIST.names:
        found.add(R, "program.table", "kill -l lists signals")
        return
    index = 1
    if index < len(words) and words[index] in _KILL_SIGNAL.names:
        index += 2
    elif index < len(words) and words[index][:1] == "-" and words[index] != "--":
        index += 1
    if index < len(words) and words[index] == "--":
        index += 1
    if "-1" in words[index:]:
        found.add(D, "process.kill-all", "kill -1 signals every process")
    else:
        found.add(H, "program.table", f"{args.name} signals processes")


_HOSTNAME_FILE = read("-F", "--file")
_SERVICE_STATUS_ALL = flag("--status-all")
_CRONTAB_LIST = flag("-l")
_CRONTAB_REMOVE = flag("-r")
_KILL_LIST = flag("-l", "-L", "--list", "--table")
_KILL_SIGNAL = value("-s", "-n", "--signal")


def _named(rule: str, why: str, names: str) -> dict[str, Spec]:
    """Programs whose own rule decides, whatever their arguments."""
    return {name: Spec(D, rule, why=f"{name}: {why}") for name in names.split()}


_SYSTEMCTL: SubTable = {
    "": R,
    "status": R,
    "show": R,
    "cat": R,
    "is-active": R,
    "is-enabled": R,
    "is-failed": R,
    "is-system-running": R,
    "list-units": R,
    "list-unit-files": R,
    "list-timers": R,
    "list-sockets": R,
    "list-dependencies": R,
    "list-jobs": R,
    "list-machines": R,
    "get-default": R,
    "help": R,
    "show-environment": H,
    "start": H,
    "stop": H,
    "restart": H,
    "reload": H,
    "try-restart": H,
    "reload-or-restart": H,
    "enable": H,
    "disable": H,
    "mask": H,
    "unmask": H,
    "daemon-reload": H,
    "edit": H,
    "kill": H,
    "reset-failed": M,
    "set-default": H,
    "set-environment": H,
    "link": H,
    "revert": H,
    "isolate": D,
    "poweroff": D,
    "reboot": D,
    "halt": D,
    "kexec": D,
    "suspend": D,
    "hibernate": D,
    "hybrid-sleep": D,
    "rescue": D,
    "emergency": D,
    "default": D,
}

_APT: SubTable = {
    "": R,
    "list": R,
    "search": R,
    "show": R,
    "showpkg": R,
    "policy": R,
    "depends": R,
    "rdepends": R,
    "madison": R,
    "changelog": R,
    "help": R,
    "download": L,
    "source": M,
    "update": H,
    "install": H,
    "reinstall": H,
    "upgrade": H,
    "full-upgrade": H,
    "dist-upgrade": H,
    "remove": H,
    "purge": H,
    "autoremove": H,
    "autopurge": H,
    "build-dep": H,
    "satisfy": H,
    "clean": M,
    "autoclean": M,
    "edit-sources": H,
    "mark": H,
    "check": R,
}

_BREW: SubTable = {
    "": R,
    "list": R,
    "ls": R,
    "info": R,
    "search": R,
    "outdated": R,
    "deps": R,
    "uses": R,
    "leaves": R,
    "config": R,
    "doctor": R,
    "--prefix": R,
    "--cellar": R,
    "--cache": R,
    "home": L,
    "desc": R,
    "log": R,
    "cat": R,
    "shellenv": R,
    "commands": R,
    "install": H,
    "reinstall": H,
    "upgrade": H,
    "update": H,
    "uninstall": H,
    "remove": H,
    "rm": H,
    "link": M,
    "unlink": M,
    "pin": L,
    "unpin": L,
    "tap": H,
    "untap": H,
    "cleanup": M,
    "autoremove": H,
    "services": {"list": R, "info": R, "*": H},
    "bundle": {"check": R, "list": R, "*": H},
}

_DNF: SubTable = {
    "": R,
    "list": R,
    "info": R,
    "search": R,
    "provides": R,
    "repolist": R,
    "repoquery": R,
    "history": {"": R, "list": R, "info": R, "*": H},
    "check-update": R,
    "makecache": M,
    "clean": M,
    "install": H,
    "reinstall": H,
    "remove": H,
    "erase": H,
    "upgrade": H,
    "update": H,
    "downgrade": H,
    "autoremove": H,
    "distro-sync": H,
    "group": {"list": R, "info": R, "*": H},
    "module": {"list": R, "info": R, "*": H},
    "download": L,
}

_PACMAN_LIKE: SubTable = {"": R, "-Q": R, "-Qi": R, "-Ql": R, "-Ss": R, "-Si": R, "*": H}

_APK: SubTable = {
    "": R,
    "info": R,
    "search": R,
    "list": R,
    "policy": R,
    "stats": R,
    "update": H,
    "add": H,
    "del": H,
    "upgrade": H,
    "fix": H,
    "cache": M,
}

_SNAP: SubTable = {
    "": R,
    "list": R,
    "info": R,
    "find": R,
    "version": R,
    "services": R,
    "changes": R,
    "connections": R,
    "*": H,
}


SPECS: dict[str, Spec] = {
    # --- package managers -----------------------------------------------------------------
    "apt": Spec(R, subcommands=_APT, flags=(value("-o", "-c", "-t", "--target-release"),)),
    "apt-get": Spec(R, subcommands=_APT, flags=(value("-o", "-c", "-t", "--target-release"),)),
    "aptitude": Spec(R, subcommands=_APT, flags=(value("-o", "-t", "--target-release"),)),
    "apt-cache": Spec(R, subcommands={"*": R, "": R}),
    "brew": Spec(R, subcommands=_BREW, examples=(("brew install jq", H), ("brew list", R))),
    "dnf": Spec(
        R,
        subcommands=_DNF,
        flags=(
            value("--repo", "--enablerepo", "--disablerepo", "--releasever", "--installroot"),
            read("-c", "--config"),
        ),
    ),
    "pacman": Spec(
        R, subcommands=_PACMAN_LIKE, examples=(("pacman -Ss vim", R), ("pacman -S vim", H))
    ),
    "apk": Spec(R, subcommands=_APK),
    "snap": Spec(R, subcommands=_SNAP),
    "systemctl": Spec(
        R,
        subcommands=_SYSTEMCTL,
        flags=(
            value("-H", "--host", "-M", "--machine", "-t", "--type", "-p", "--property"),
            value("--state", "-n", "--lines", "-o", "--output", "--root"),
        ),
        examples=(
            ("systemctl status nginx", R),
            ("systemctl restart x", H),
            ("systemctl poweroff", D),
        ),
    ),
    # --- hosts, clocks, network, logs: read-only unless the arguments set something --------
    "hostname": Spec(
        R,
        flags=(_HOSTNAME_FILE,),
        check=hostname_check,
        examples=(("hostname", R), ("hostname x", H)),
    ),
    "date": Spec(
        R,
        flags=(
            Flag(("-s", "--set"), H, takes="value", why="date -s sets the clock"),
            value("-d", "--date", "-r", "--reference", "--rfc-3339"),
            read("-f", "--file"),
            optional("-I", "--iso-8601"),
        ),
        check=date_check,
        examples=(("date +%s", R), ("date -s '2020-01-01'", H), ("date 010100002020", H)),
    ),
    "ifconfig": Spec(R, check=ifconfig_check, examples=(("ifconfig eth0 down", H),)),
    "ip": Spec(
        R,
        flags=(value("-n", "-netns", "-f", "-family", "-b", "-batch", "-rc", "-rcvbuf"),),
        check=ip_check,
        examples=(
            ("ip addr show", R),
            ("ip route add x via y", H),
            ("ip netns exec x rm -rf /", D),
        ),
    ),
    "service": Spec(
        R, flags=(_SERVICE_STATUS_ALL,), check=service_check, examples=(("service x status", R),)
    ),
    "journalctl": Spec(
        R,
        flags=(
            Flag(("--vacuum-size", "--vacuum-time", "--vacuum-files"), M, takes="value"),
            flag("--rotate", "--flush", "--sync", "--relinquish-var", tier=M),
            value("-u", "--unit", "-p", "--priority", "-t", "--identifier", "-S", "--since"),
            value("-U", "--until", "-o", "--output", "-M", "--machine", "--root"),
            value("--namespace", "-g", "--grep", "--cursor", "--after-cursor", "-D"),
            read("--file", "--directory"),
            optional("-n", "--lines", "-b", "--boot"),
        ),
        examples=(("journalctl -u web -n 50", R), ("journalctl --vacuum-time=2d", M)),
    ),
    "dmesg": Spec(
        R,
        flags=(
            flag("-c", "--read-clear", "-C", "--clear", "-D", "--console-off", "-E", tier=M),
            flag("--console-on", tier=M),
            Flag(("-n", "--console-level"), M, takes="value"),
            value("-f", "--facility", "-l", "--level", "-s", "--buffer-size", "--time-format"),
            read("-F", "--file"),
        ),
        examples=(("dmesg", R), ("dmesg -C", M)),
    ),
    # --- processes and jobs ---------------------------------------------------------------
    "kill": Spec(
        None,
        flags=(_KILL_LIST, _KILL_SIGNAL),
        check=kill_check,
        examples=(("kill 1234", H), ("kill -9 -1", D, "process.kill-all"), ("kill -l", R)),
    ),
    **{
        name: Spec(H, why=f"{name} signals processes")
        for name in "pkill killall xkill renice".split()
    },
    "crontab": Spec(
        None,
        flags=(_CRONTAB_LIST, _CRONTAB_REMOVE, value("-u"), flag("-e", "-i")),
        check=crontab_check,
        examples=(("crontab -l", R), ("crontab jobs.txt", H), ("crontab -r", H)),
    ),
    "atrm": Spec(H, "system.persistence", why="atrm removes jobs that run later"),
    "launchctl": Spec(
        H, "system.persistence", why="launchctl loads jobs that run outside the session"
    ),
    # --- mounts, firewalls, kernel, desktop, keys: high -------------------------------------
    **{
        name: Spec(H, why=f"{name} changes the system")
        for name in """mount umount swapon swapoff losetup iptables ip6tables nft ufw firewall-cmd
            sysctl modprobe insmod rmmod hostnamectl timedatectl xdg-open open
            sensible-browser gpg gpg2 age""".split()
    },
    # --- what cannot be undone from inside a session --------------------------------------
    **_named(
        "system.power",
        "powers the machine off or restarts it",
        "shutdown reboot halt poweroff init telinit kexec",
    ),
    **_named(
        "system.accounts",
        "changes user accounts",
        """useradd userdel usermod adduser deluser passwd chpasswd chage groupadd groupdel
        groupmod gpasswd visudo chsh chfn vipw vigr""",
    ),
    **_named("process.kill-all", "signals every process", "killall5"),
    **_named("disk.dd", "copies raw disk blocks", "dd dcfldd dc3dd"),
    **_named(
        "disk.mkfs", "creates a filesystem", "mkfs mke2fs mkswap newfs mkdosfs mkntfs mkexfatfs"
    ),
    **_named(
        "disk.partition",
        "changes disks and partitions",
        """fdisk sfdisk cfdisk gdisk sgdisk parted wipefs blkdiscard cryptsetup e2fsck fsck
        tune2fs resize2fs lvremove vgremove pvremove zpool zfs hdparm""",
    ),
}
#: The same tools under their other names.
SPECS["yum"] = SPECS["dnf"]  # dnf replaced yum and took its command line
SPECS["microdnf"] = SPECS["dnf"]
SPECS["zypper"] = Spec(R, subcommands=_DNF)
SPECS["yay"] = SPECS["pacman"]  # AUR helpers: pacman's command line
SPECS["paru"] = SPECS["pacman"]
SPECS["flatpak"] = Spec(R, subcommands=_SNAP)
SPECS["port"] = Spec(R, subcommands=_BREW)

#: Database clients are high whatever they read; their options are not reviewed.
NOT_REVIEWED: dict[str, str] = {
    name: "a database client (high: it reaches a database)"
    for name in "psql mysql mariadb sqlite3 redis-cli mongo mongosh cqlsh".split()
}
SPECS.update({name: Spec(H, operands=("read",), flags=None) for name in NOT_REVIEWED})
