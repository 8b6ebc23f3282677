r"""The risk classifier: every shell command gets one of five tiers, with the rules that decided it.

``classify("CMD")`` parses the command with :mod:`stockade.shell` and classifies every segment
(simple command), every command/process substitution and every redirect target; the command's
tier is the maximum. Everything that decides a tier is plain data near the top of this module
(program tables, subcommand tables, wrappers, interpreters, secret and path patterns) so a
reviewer can audit it in one sitting; the functions below only apply the tables.

Fail closed: whatever cannot be analysed is ``destructive`` with a reason — parse errors, a
command word that is not static, nesting deeper than 8, inputs over 64 KiB, unknown programs,
unknown git subcommands, interpreters running inline code. :func:`classify` never raises.

Choices a reviewer should know about (each is a line in a table below, easy to change):

* Shells and interpreters running inline code are destructive, but static shell code
  (``bash -c 'rm -rf /'``, heredocs into ``sh``) is still classified, so its own rules (the
  hard-deny candidates above all) are reported too.
* awk is analysed rather than always destructive: a program without ``system``, ``getline``,
  pipes or output redirection only reads (``awk '{print $1}'``); anything else is destructive.
* ``source .venv/bin/activate`` (a virtualenv's ``bin/activate``) is medium; any other
  ``source``/``.`` is destructive.
* ``PAGER=cat``, ``GIT_PAGER=cat``, ``git -c core.pager=cat``: the pager variables run their
  value, so only the values in SAFE_PAGERS are harmless; any other value is destructive.
* Project executables (``./gradlew``, ``scripts/x.sh``) and project scripts (``python x.py``)
  are medium, like ``make``; the same from outside the project is high. ``python -m`` of a
  module not in PYTHON_MODULES is high.
* ``git checkout NAME`` switches branches (low) only when NAME looks like a ref (``main``,
  ``feature/x``, ``v1.2``, a hash); a name that may be a path (``src``, ``a.py``) is
  destructive: it can discard edits. ``git switch`` is the unambiguous spelling.
* ``PATH=…`` and ``HOME=…`` are high (later program names may resolve elsewhere).
* Settings overrides replace a program's own tier, never destructive findings about its
  arguments or the checks on secrets, paths, privileges, redirects and pipes.

Rule ids are stable (the permissions layer maps some of them to built-in hard denies, marked
HARD below). Tiers: R read-only, L low, M medium, H high, D destructive, ``*`` depends.

===========================  ====  =================================================================
rule id                      tier  when
===========================  ====  =================================================================
parse.error                  D     the command does not parse as bash (ERROR/MISSING node)
parse.too-long               D     input over 64 KiB
parse.too-deep               D     substitutions/inline code nested deeper than 8
parse.control-char           D     raw control characters bash may split differently
parse.invalid-text           D     not valid UTF-8 text
parse.not-text               D     not a string
parse.dropped-text           D     the grammar skipped text, so what runs is unknown
parse.misparse               D     the grammar merged lines or tokens unreliably
parse.unsupported            D     a shell construct the parser does not model
parse.internal               D     the parser failed (bug; fail closed)
parse.unavailable            D     tree-sitter-bash is not installed
internal.error               D     the classifier failed (bug; fail closed)
command.dynamic              D     command word built from ``$…``, backticks, globs, braces
program.unknown              D     program not in the tables (the fail-closed default)
program.table                \*    tier from the program table
program.version              R     ``--version``/``--help``-only invocation of a known program
program.override             \*    tier set by settings (``[risk] programs``)
command.project-executable   M     ``./script``, ``bin/tool``: project code
command.outside-executable   H     an executable outside the project (``/opt/x``, ``~/x``)
subcommand.table             \*    tier from a program's subcommand table (npm, cargo, …)
subcommand.unknown           D     subcommand not in the program's table
subcommand.dynamic           D     subcommand word is not static
wrapper.unknown-option       D     a wrapper option we cannot parse (the wrapped command could not
                                   be found reliably)
wrapper.no-command           R     a wrapper with nothing to run (``nice``, ``time``)
shell.assignment             L     bare ``NAME=value``
shell.declaration            L     ``export``/``declare``/``local``/``readonly``/``unset``
shell.test                   R     ``[[ … ]]``, ``[ … ]``, ``test``
shell.arithmetic             R     ``(( … ))``, ``let``
shell.arith-injection        D     array subscript with code in an arithmetic context
shell.control                R     ``for``/``case``/``select`` word lists
shell.function-call          R     call of a function defined earlier (its body is classified)
shell.fork-bomb              D     a function that calls itself (``:(){ :|:& };:``)
shell.lookup                 R     ``command -v``, ``type``, ``hash`` lookups
shell.redirect-only          R     redirects without a command (targets are classified)
env.dump                     H     bare ``env``/``printenv``/``export -p``/``set``: dumps secrets
env.exec-hook                D     assignment that makes programs run code (``LD_PRELOAD``,
                                   ``GIT_SSH_COMMAND``, ``PAGER=…``, ``BASH_ENV``, …)
env.path                     H     ``PATH`` changed: later program names may resolve elsewhere
secret.env-var               H     expands a variable named like a secret (``$API_TOKEN``)
secret.read                  H     reads/copies a secret file (``.env``, ``~/.ssh``, ``*.pem``…)
read.outside-project         H     reads an absolute or home path with a content reader
write.device                 D     writes to a raw ``/dev/*`` device (redirect, tee, cp, …)
write.protected              H     writes ``.git/hooks``, ``.git/config``, ``.stockade/``, …
write.home                   H     writes a ``~``/``$HOME`` path
write.outside-project        H     writes an absolute path outside ``/tmp``
write.dynamic                H     write target is not static
write.tmp                    L     writes under ``/tmp`` or ``/var/tmp``
redirect.overwrite           M     ``>`` to a project file
redirect.append              L     ``>>`` to a project file
privilege.sudo               D     HARD ``sudo``/``doas`` anywhere
privilege.switch-user        D     ``su``, ``pkexec``, ``run0``, ``runuser``, ``chroot``, ``sg``
system.power                 D     shutdown, reboot, halt, poweroff
system.accounts              D     useradd, userdel, passwd, visudo, …
system.persistence           H     crontab, at, systemd units: runs later, outside the session
process.kill-all             D     ``kill -1``/``kill -9 -1``, ``killall5``
disk.dd                      D     HARD ``dd``
disk.mkfs                    D     HARD ``mkfs``, ``mkfs.*``, ``mke2fs``, ``mkswap``
disk.partition               D     fdisk, parted, wipefs, blkdiscard, cryptsetup, …
fs.shred                     D     shred, wipe, srm
fs.recursive-system          D     ``chmod``/``chown``/``chgrp -R`` on ``/``, ``~`` or a system dir
rm.recursive-force-root      D     HARD ``rm`` recursive+force of ``/`` (``/``, ``/*``, ``//``,
                                   ``/.``, ``--no-preserve-root``, ``$UNSET/*``, ``cd / && rm -rf
                                   *``)
rm.recursive-force-home      D     HARD ``rm`` recursive+force of ``~`` (``~``, ``~/``, ``~/*``,
                                   ``$HOME``, ``${HOME}``, ``"$HOME"/*``, ``~user``)
rm.recursive-force-system    D     ``rm`` recursive+force of a top-level system directory
rm.recursive-force           D     ``rm`` with recursive and force flags in any spelling
rm.dynamic-flags             D     ``rm`` argument that may expand to flags (``rm $X``)
rm.delete                    H     any other ``rm``/``unlink``
chmod.world-writable         D     HARD ``chmod 777``, ``o+w``, ``a+rwx`` and equivalents
chmod.setuid                 H     ``chmod u+s``/``4755``
interpreter.inline-code      D     ``sh -c``, ``python -c``, ``node -e``, ``perl -e``, …
interpreter.stdin            D     an interpreter reading code from stdin/heredoc/terminal
interpreter.script           M     an interpreter running a project script file
interpreter.outside-script   H     … a script outside the project
interpreter.dynamic-script   D     … a script path that is not static (``bash <(…)``)
interpreter.eval             D     ``eval``
interpreter.source           D     ``source``/``.``
interpreter.source-venv      M     ``source .venv/bin/activate``
pipe.to-interpreter          D     a pipe feeding a shell or interpreter (``… | sh``)
download.pipe-to-shell       D     HARD downloaded content run by a shell/interpreter (``curl … |
                                   sh``, ``sh -c "$(curl …)"``, ``bash <(wget …)``)
python.module                \*    ``python -m`` module table
python.unknown-module        H     ``python -m`` of an unlisted module
awk.program                  R     awk program without system/getline/pipes/redirects
awk.exec                     D     awk program that can run commands or write files
awk.in-place                 M     ``gawk -i inplace``
sed.exec                     D     sed ``e`` command or ``s///e`` flag
sed.write                    \*    sed ``w``/``W`` file (tier of the target)
sed.in-place                 M     ``sed -i``
sed.unparsed                 D     sed script we cannot parse
find.delete                  H     ``find … -delete``
find.delete-wide             D     ``find -delete`` under ``/``, ``~`` or a system directory
shell.nested-code            \*    code a command runs that is classified as such: ``watch CMD``,
                                  ``trap CODE``, ``alias x=CODE``, ``ssh host CMD``, tar's
                                  ``--to-command``/``-I``/checkpoint exec, rsync ``-e``
archive.extract              M     extracting an archive
rsync.remote                 H     rsync to/from another host
rsync.delete                 H     rsync ``--delete*``/``--remove-source-files``
docker.host-escape           D     ``--privileged``, host namespaces, ``/`` or the docker socket
                                   mounted into a container
docker.host-access           H     host network, a host device, or a path outside the project
                                  mounted into a container
gh.api                       \*    ``gh api``: read-only for GET, high otherwise
npm.script                   \*    ``npm run X``: low; deploy/publish/release scripts high
git.subcommand               \*    tier from the git subcommand table
git.unknown-subcommand       D     git subcommand not in the table (alias, ``git-foo``)
git.push                     H     ``git push``
git.push-force               D     ``--force``, ``--force-with-lease``, ``-f`` in a bundle,
                                   ``+refspec``, push config overrides
git.push-delete              D     ``--delete``, ``:branch``, ``--mirror``, ``--prune``
git.reset-hard               D     ``git reset --hard``
git.clean-force              D     ``git clean`` (anything but ``-n``/``--dry-run``)
git.branch-delete            D     ``git branch -d/-D/--delete``, ``update-ref -d``
git.discard-changes          D     ``git checkout <path>``/``--``/``-f``, ``git restore``, ``git
                                   switch --discard-changes``, ``stash drop``
git.stash-clear              D     ``git stash clear``
git.history-rewrite          D     ``filter-branch``, ``filter-repo``, ``reflog expire/delete``
git.exec-config              D     ``-c``/``config`` key that runs programs (``core.pager``,
                                   ``core.sshCommand``, ``alias.*=!…``, ``filter.*``, …)
git.exec-option              D     ``--upload-pack``, ``--receive-pack``, ``--exec``, ``rebase -x``,
                                   ``submodule foreach``, ``ext::`` URLs
git.config-write             \*    ``git config`` setting a key: M local, H global/system
===========================  ====  =================================================================
"""

# ruff: noqa: SIM905  (the tables are whitespace-separated strings on purpose: easy to audit)
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import NamedTuple, TypeAlias, Union

from stockade.shell import MAX_SUBSTITUTION_DEPTH, Redirect, Segment, fast_parse, parse
from stockade.tiers import Tier

__all__ = ["HARD_DENY_RULES", "RULE_IDS", "Assessment", "Reason", "classify"]

R = Tier.READ_ONLY
L = Tier.LOW
M = Tier.MEDIUM
H = Tier.HIGH
D = Tier.DESTRUCTIVE


class Reason(NamedTuple):
    """Why one segment got its tier: a stable rule id, the segment text, the tier, a detail.
    (Immutable; a NamedTuple rather than a dataclass because classify makes one per segment
    and this is twice as fast to build.)"""

    rule_id: str
    segment: str
    tier: Tier
    detail: str


@dataclass(frozen=True, slots=True)
class Assessment:
    """The result of :func:`classify`: the command's tier (the maximum over everything it runs),
    the deciding reason(s) of every segment in source order, and the parsed segments."""

    tier: Tier
    reasons: tuple[Reason, ...]
    segments: tuple[Segment, ...]

    @property
    def rule_ids(self) -> frozenset[str]:
        """Every rule id among the reasons (what the permissions layer matches hard denies on)."""
        return frozenset(reason.rule_id for reason in self.reasons)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready view (``stockade classify --json``)."""
        return {
            "tier": self.tier.label,
            "reasons": [
                {
                    "rule_id": reason.rule_id,
                    "segment": reason.segment,
                    "tier": reason.tier.label,
                    "detail": reason.detail,
                }
                for reason in self.reasons
            ],
        }


#: Rule ids the permissions layer may turn into built-in hard denies (see the table above).
HARD_DENY_RULES: frozenset[str] = frozenset(
    {
        "rm.recursive-force-root",
        "rm.recursive-force-home",
        "privilege.sudo",
        "chmod.world-writable",
        "disk.dd",
        "disk.mkfs",
        "download.pipe-to-shell",
    }
)


# =============================================================================================
# Program table: programs whose tier does not depend on a subcommand.
#
# Each group: (tier, argument policy, programs). The argument policy says how file arguments
# are checked on top of the tier:
#   none    arguments are not paths (echo, sleep)
#   meta    paths whose metadata only is read (ls, stat): no secret/outside checks
#   read    content readers: secrets → high (secret.read); absolute/home paths → high
#   search  like read, but the first operand is a pattern (grep PATTERN FILE…)
#   write   writers: devices → destructive; protected/home/absolute → high; secrets → high
# Programs needing argument analysis (rm, chmod, find, sed, git, …) have handlers instead.
# =============================================================================================

PROGRAM_GROUPS: tuple[tuple[Tier, str, str], ...] = (
    # --- harmless builtins and utilities ---------------------------------------------------
    (R, "none", "echo printf true false : pwd sleep yes seq expr factor numfmt tty locale"),
    (R, "none", "whoami id groups uname arch nproc uptime free vmstat iostat mpstat lscpu"),
    (R, "none", "lsblk lsusb lspci lsmod lsof who w last users getconf cal ncal tput clear"),
    (R, "none", "dirs popd shift return exit break continue wait jobs times caller help"),
    (R, "none", "compgen complete compopt logname bc ps pgrep pstree top htop btop history"),
    (R, "none", "netstat ss nvidia-smi sw_vers systeminfo"),
    (R, "meta", "ls dir vdir tree exa eza lsd stat file du df realpath readlink basename"),
    (R, "meta", "dirname pathchk which whereis cd pushd test [ mountpoint namei"),
    (R, "meta", "locate mlocate plocate"),
    # --- content readers -------------------------------------------------------------------
    (R, "read", "cat tac nl head tail less more most bat batcat strings xxd od hexdump hd"),
    (R, "read", "base64 base32 basenc md5sum sha1sum sha224sum sha256sum sha384sum"),
    (R, "read", "sha512sum b2sum cksum sum md5 shasum wc cut paste join comm fold fmt pr"),
    (R, "read", "column expand unexpand rev tr iconv diff diff3 sdiff cmp colordiff"),
    (R, "read", "zcat gzcat bzcat xzcat zstdcat lz4cat zless zmore jq gojq xmllint"),
    (R, "read", "readelf objdump nm size tsort look shuf csvlook man info tldr"),
    (R, "read", "shellcheck hadolint yamllint markdownlint actionlint checkmake"),
    (R, "search", "grep egrep fgrep rg ag ack zgrep zegrep zfgrep bzgrep xzgrep pcregrep"),
    # --- linters, type checkers, analysers (read the project, write at most caches) ---------
    (R, "read", "mypy pyright flake8 pylint pyflakes pycodestyle pydocstyle bandit vulture"),
    (L, "read", "openssl ssh-keygen"),
    (R, "read", "radon pyre staticcheck cppcheck tflint checkov semgrep cloc tokei scc"),
    # --- low: reversible, in-project -------------------------------------------------------
    (L, "write", "mkdir touch rmdir mktemp mkfifo ln split csplit"),
    (L, "none", "read mapfile readarray getopts ulimit umask shopt bind fg bg disown"),
    (L, "none", "unalias suspend stty notify-send say pbcopy pbpaste xclip xsel wl-copy"),
    (L, "none", "ping ping6 traceroute tracepath mtr dig nslookup host whois"),
    (L, "read", "pytest py.test jest vitest mocha ava karma ctest coverage"),
    (L, "read", "gcc g++ cc c++ clang clang++ tcc javac kotlinc scalac zip"),
    # --- medium: mutating but recoverable --------------------------------------------------
    (M, "write", "cp mv install rename truncate sponge dos2unix unix2dos patch"),
    (M, "write", "gzip gunzip bzip2 bunzip2 xz unxz zstd unzstd lz4 pigz"),
    (M, "read", "ninja meson scons bazel bazelisk buck2 ant sbt lein"),
    (M, "read", "webpack vite rollup esbuild parcel turbo nx lerna tsup swc babel"),
    (M, "read", "tox nox sphinx-build jekyll hugo zola rustc ld ar ranlib strip objcopy"),
    (M, "read", "as nasm ldd black isort autopep8 yapf autoflake pyupgrade"),
    # --- high: hard to undo, wide blast radius, network, secrets ---------------------------
    (H, "read", "curl wget http https xh aria2c lynx w3m links elinks"),
    (H, "read", "ssh scp sftp mosh ssh-copy-id ssh-add telnet ftp nc ncat netcat socat"),
    (H, "none", "kill pkill killall xkill renice"),
    (H, "write", "chown chgrp chattr setfacl mknod"),
    (H, "none", "mount umount swapon swapoff losetup iptables ip6tables nft ufw"),
    (H, "none", "firewall-cmd sysctl modprobe insmod rmmod hostnamectl timedatectl"),
    (H, "none", "xdg-open open sensible-browser gpg gpg2 age"),
    (H, "read", "psql mysql mariadb sqlite3 redis-cli mongo mongosh cqlsh"),
    (H, "none", "gcloud az doctl flyctl heroku vercel netlify wrangler firebase"),
    (H, "none", "ansible ansible-playbook pulumi vagrant packer"),
)

#: Programs that get their own rule id whatever their arguments: (rule id, tier, programs).
NAMED_PROGRAMS: tuple[tuple[str, Tier, str], ...] = (
    ("privilege.sudo", D, "sudo doas"),
    ("privilege.switch-user", D, "su pkexec run0 runuser chroot sg newgrp nsenter"),
    ("system.power", D, "shutdown reboot halt poweroff init telinit kexec"),
    ("system.accounts", D, "useradd userdel usermod adduser deluser passwd chpasswd chage"),
    ("system.accounts", D, "groupadd groupdel groupmod gpasswd visudo chsh chfn vipw vigr"),
    ("system.persistence", H, "at batch atrm systemd-run launchctl"),  # at/batch/systemd-run:
    # handlers classify what they will run, too
    ("process.kill-all", D, "killall5"),
    ("disk.dd", D, "dd dcfldd dc3dd"),
    ("disk.mkfs", D, "mkfs mke2fs mkswap newfs mkdosfs mkntfs mkexfatfs"),
    ("disk.partition", D, "fdisk sfdisk cfdisk gdisk sgdisk parted wipefs blkdiscard"),
    ("disk.partition", D, "cryptsetup e2fsck fsck tune2fs resize2fs lvremove vgremove"),
    ("disk.partition", D, "pvremove zpool zfs hdparm sgdisk"),
    ("fs.shred", D, "shred wipe srm"),
)

# =============================================================================================
# Wrappers: they run the rest of their arguments as a command, which is classified instead.
# (short options taking a value, long options taking a value, short flags, long flags,
#  operands before the command, floor tier). An option not listed fails closed, because the
#  wrapped command could then not be found reliably.
# env, xargs, command, watch, flock, find -exec, package runners have handlers.
# =============================================================================================

WRAPPERS: dict[str, tuple[str, str, str, str, int, Tier]] = {
    "nice": ("n", "adjustment", "", "", 0, R),
    "timeout": ("sk", "signal kill-after", "v", "preserve-status foreground verbose", 1, R),
    "nohup": ("", "", "", "", 0, L),
    "time": ("fo", "format output", "pvaq", "portability verbose append quiet", 0, R),
    "stdbuf": ("ioe", "input output error", "", "", 0, R),
    "setsid": ("", "", "cfw", "ctty fork wait", 0, L),
    "chronic": ("", "", "ev", "", 0, R),
    "ionice": ("cn", "class classdata", "t", "ignore", 0, R),
    "builtin": ("", "", "", "", 0, R),
    "exec": ("a", "", "cl", "", 0, R),
    "coproc": ("", "", "", "", 0, R),
    "unbuffer": ("", "", "p", "", 0, R),
    "caffeinate": ("tw", "", "dimsu", "", 0, R),
    "catchsegv": ("", "", "", "", 0, R),
    "xvfb-run": ("nsefpw", "server-num server-args error-file auth-file wait", "a",
                 "auto-servernum", 0, L),
    "dbus-run-session": ("", "config-file dbus-daemon", "", "", 0, L),
    "taskset": ("", "", "ac", "all-tasks cpu-list", 1, R),
    "chrt": ("T", "sched-runtime sched-period sched-deadline", "abdfiomrRv",
             "all-tasks batch deadline fifo idle other rr reset-on-fork verbose", 1, L),
    "strace": ("abeEIopPsSuX", "", "cCdDfFhiknqrtTvVwxyYzZ", "", 0, L),
    "ltrace": ("aAeElnopsu", "", "bcCdDfhiLrStTVwx", "", 0, L),
    "valgrind": ("", "", "hqv", "", 0, L),
    "entr": ("", "", "acdnprsz", "", 0, L),
    "proxychains": ("f", "", "q", "", 0, H),
    "proxychains4": ("f", "", "q", "", 0, H),
    "torsocks": ("uPa", "user pass address port", "6diq", "", 0, H),
}

# =============================================================================================
# Interpreters. Shells run code from -c, stdin or a script; the others from their options.
# (options whose value is inline code, options taking another value, version/help options)
# Short options may be bundled (``bash -xc``, ``perl -ne``, ``python -uc``).
# =============================================================================================

SHELLS = frozenset(
    "sh bash zsh dash ksh mksh pdksh ash yash posh rbash fish csh tcsh elvish nu xonsh".split()
)

#: Shells: ``c`` is a flag (the first operand is then the code); ``s`` reads stdin.
SHELL_OPTIONS: tuple[str, str, str] = (
    "c --command",
    "o O C --rcfile --init-file --init-command",
    "--version --help -h",
)

INTERPRETERS: dict[str, tuple[str, str, str]] = {
    "python": ("c", "W X --check-hash-based-pycs", "-V -VV --version -h --help -?"),
    "pypy": ("c", "W X", "-V --version -h --help"),
    "ipython": ("c", "m --profile --ipython-dir --config", "-V --version -h --help"),
    "node": ("e p --eval --print", "r --require --import --loader --experimental-loader "
             "--inspect-port --title --conditions C --input-type --env-file",
             "-v --version -h --help"),
    "ts-node": ("e p --eval --print", "r --require P --project O --compiler-options",
                "-v --version -h --help"),
    "tsx": ("e p --eval --print", "r --require --import --tsconfig", "-v --version -h --help"),
    "perl": ("e E", "I M m x C d D", "-v -V --version -h --help"),
    "ruby": ("e", "I r C E F K", "--version -h --help"),
    "php": ("r B R E F", "c d z t", "-v --version -h --help -i -m"),
    "lua": ("e", "l", ""),
    "luajit": ("e", "l b j", ""),
    "Rscript": ("e", "", "--version --help"),
    "R": ("e", "f --file", "--version --help"),
    "julia": ("e E", "p J L C O t --project", "-v --version -h --help"),
    "osascript": ("e", "l s", ""),
    "tclsh": ("", "encoding", ""),
    "wish": ("", "encoding", ""),
    "expect": ("c", "", "-v"),
    "groovy": ("e", "cp classpath", "-v --version -h --help"),
}
#: Options that only check syntax (nothing runs), even with a script: ``bash -n x.sh``.
SYNTAX_CHECK_OPTIONS: dict[str, frozenset[str]] = {
    "node": frozenset({"-c", "--check"}), "ruby": frozenset({"-c"}),
    "php": frozenset({"-l", "--syntax-check"}),
}
#: Options with which an otherwise harmless program runs a command: program → option →
#: "command" (a shell command, classified as such) or "program" (a program, classified as a
#: command word). ``less +!cmd`` (a leading ``+`` command with ``!``/``|``) is handled too.
EXEC_OPTIONS: dict[str, dict[str, str]] = {
    "man": {"-P": "command", "--pager": "command", "-H": "command", "--html": "command"},
    "zip": {"-TT": "command", "--unzip-command": "command"},
    "mapfile": {"-C": "command"}, "readarray": {"-C": "command"},
    "sort": {"--compress-program": "program"},
    "scp": {"-S": "program"}, "sftp": {"-S": "program"},
    "rsync": {}, "less": {}, "more": {},
}
#: Versioned interpreter names map to the table entry: python3.12 → python, perl5.36 → perl.
VERSIONED = re.compile(r"^(python|pypy|perl|ruby|php|lua|node|pip|tclsh|wish)[\d.]*$")
#: Programs that read code from their arguments or stdin and cannot be analysed.
REPLS = frozenset("irb jshell ghci scala kotlin clojure guile racket sbcl clisp gdb lldb".split())
#: The program words that fetch remote content (for download.pipe-to-shell).
DOWNLOADERS = frozenset(
    "curl wget fetch http https xh aria2c lynx w3m links elinks nc ncat netcat socat".split()
)

# =============================================================================================
# Environment assignments (``VAR=x cmd``, ``export VAR=x``, ``env VAR=x cmd``).
# =============================================================================================

#: Variables that make programs (or the shell) run code of the assigner's choosing.
EXEC_HOOK_VARS = frozenset(
    """LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT DYLD_INSERT_LIBRARIES DYLD_LIBRARY_PATH
    DYLD_FRAMEWORK_PATH BASH_ENV ENV PROMPT_COMMAND PS4 SHELLOPTS BASHOPTS IFS BASH_FUNC
    GIT_SSH GIT_SSH_COMMAND GIT_EXTERNAL_DIFF GIT_ASKPASS SSH_ASKPASS SUDO_ASKPASS
    GIT_PROXY_COMMAND GIT_EXEC_PATH GIT_TEMPLATE_DIR GIT_CONFIG_PARAMETERS GIT_CONFIG_COUNT
    GIT_CONFIG_GLOBAL GIT_CONFIG_SYSTEM GIT_CONFIG GIT_EDITOR GIT_SEQUENCE_EDITOR EDITOR VISUAL
    LESSOPEN LESSCLOSE BROWSER PYTHONSTARTUP PYTHONHOME PERL5OPT PERL5LIB PERLLIB PERL5DB
    RUBYOPT RUBYLIB RUSTC_WRAPPER RUSTC_WORKSPACE_WRAPPER CARGO_BUILD_RUSTC_WRAPPER
    CARGO_TARGET_DIR_RUNNER SHELL MAKESHELL CONFIG_SHELL npm_config_script_shell
    npm_config_node_options npm_config_userconfig YARN_RC_FILENAME""".split()
)
#: Prefixes of exec-hook variables (``GIT_CONFIG_KEY_0``, ``BASH_FUNC_f%%``).
EXEC_HOOK_PREFIXES = ("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_", "BASH_FUNC_", "CARGO_TARGET_")
#: Pager variables: they run their value, so only these values are harmless.
PAGER_VARS = frozenset(
    "PAGER GIT_PAGER MANPAGER SYSTEMD_PAGER BAT_PAGER DELTA_PAGER GH_PAGER AWS_PAGER PSQL_PAGER"
    .split()
)
SAFE_PAGERS = frozenset({"", "cat", "less", "more", "most", "true", "less -R", "less -r",
                         "less -FRX", "less -FRSX", "less -FX", "less -X"})
#: Compiler-like variables: harmless when set to a known compiler.
TOOL_VARS = frozenset("CC CXX CPP FC LD AR NM RANLIB RUSTC".split())
SAFE_TOOL = re.compile(
    r"^(?:(?:ccache|sccache) )?(?:gcc|g\+\+|cc|c\+\+|clang|clang\+\+|zig cc|zig c\+\+|tcc|icc|"
    r"gfortran|ld|ld\.lld|ld\.gold|lld|ar|llvm-ar|nm|llvm-nm|ranlib|rustc|cpp)(?:-\d+)?$"
)
#: Option variables: harmless unless they load code.
OPTION_VARS: dict[str, re.Pattern[str]] = {
    "NODE_OPTIONS": re.compile(r"(?:^|\s)(?:-r|--require|--import|--loader|"
                               r"--experimental-loader|--env-file|--inspect)"),
    "JAVA_TOOL_OPTIONS": re.compile(r"-javaagent|-agentlib|-agentpath|-XX:On|-Xbootclasspath"),
    "_JAVA_OPTIONS": re.compile(r"-javaagent|-agentlib|-agentpath|-XX:On|-Xbootclasspath"),
    "JDK_JAVA_OPTIONS": re.compile(r"-javaagent|-agentlib|-agentpath|-XX:On|-Xbootclasspath"),
}
#: Variables that change where programs and their configuration are found.
PATH_VARS = frozenset("PATH HOME XDG_CONFIG_HOME ZDOTDIR GNUPGHOME".split())
#: Secret-looking names (``$API_TOKEN``), as in the sandbox's environment scrub.
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL", re.IGNORECASE)
SECRET_EXPANSION = re.compile(
    r"\$\{?[!#]?[A-Za-z_]*(?:KEY|TOKEN|SECRET|PASSW|CREDENTIAL)", re.IGNORECASE
)

# =============================================================================================
# Paths.
# =============================================================================================

#: Secret files, matched against an argument's last path component (after any ``/``, ``=``,
#: ``@`` or ``:``, so ``--env-file=.env``, ``@.env`` and ``host:.env`` count).
SECRET_FILE = re.compile(
    r"""(?x)(?:
        \.env(?!\.(?:example|sample|template|dist|defaults)$)[.\w*?-]*   # .env, .env.local
      | \.envrc | \.netrc | _netrc | \.pgpass | \.npmrc | \.pypirc | \.git-credentials
      | \.dockercfg | \.vault-token | \.htpasswd | \.boto | \.s3cfg | \.my\.cnf
      | credentials(?:\.json|\.csv|\.xml|\.ya?ml)? | client_secrets?\.json
      | service[-_]account[\w.-]*\.json | secrets?\.(?:json|ya?ml|toml|env|txt)
      | id_(?:rsa|dsa|ecdsa|ed25519|xmss)[\w.*-]*
      | [\w.*?-]*\.(?:pem|key|p12|pfx|jks|keystore|kdbx|ppk|asc|gpg|ovpn|env)
      | shadow | gshadow | sudoers | master\.key | kubeconfig | environ
      | \.ssh | \.aws | \.gnupg | \.azure | \.password-store
    )"""
)
#: A cheap necessary condition for SECRET_FILE (checked first; the tests hold it to that):
#: a secret file name starts with ``.``, contains ``_``, is one of these names, or has one of
#: these extensions.
SECRET_NAMES = frozenset(
    "shadow gshadow sudoers kubeconfig environ credentials master.key".split()
)
SECRET_EXTENSIONS = frozenset(
    "pem key p12 pfx jks keystore kdbx ppk asc gpg ovpn json csv xml yml yaml toml env txt "
    "cnf".split()
)
#: Secret directories anywhere in a path (``~/.ssh/config``, ``~/.kube/config``).
SECRET_DIR = re.compile(
    r"(?:^|[/=@:])(?:\.ssh|\.aws|\.gnupg|\.azure|\.password-store|\.config/gh|\.config/gcloud)/"
    r"|(?:^|/)\.kube/config$|(?:^|/)\.docker/config\.json$"
)
#: Dot-globs that can match secret files (``cat .*``, ``cat .e*``).
DOT_GLOB = re.compile(r"(?:^|/)\.[\w-]*[*?\[]")
#: Devices that are safe to read and write.
HARMLESS_DEVICES = frozenset(
    "/dev/null /dev/zero /dev/random /dev/urandom /dev/stdin /dev/stdout /dev/stderr /dev/tty"
    .split()
)
#: Absolute paths a content reader may read without raising the tier.
HARMLESS_READ_PATHS = frozenset(
    "/etc/os-release /etc/lsb-release /etc/debian_version /etc/hostname /etc/timezone "
    "/proc/cpuinfo /proc/meminfo /proc/version /proc/loadavg /proc/uptime".split()
)
TMP_PREFIXES = ("/tmp/", "/var/tmp/", "/private/tmp/")
#: In-project paths that would let the agent loosen its own jail or run code later.
PROTECTED_PATH = re.compile(
    r"(?:^|/)(?:\.git/(?:hooks|config)|\.stockade|\.bashrc|\.bash_profile|\.profile|\.zshrc|"
    r"\.zprofile|\.zshenv|\.bash_login|\.bash_logout|\.envrc|\.git/info/attributes|"
    r"\.gitmodules|\.vscode/(?:settings|tasks)\.json)(?:/|$)"
)
#: Top-level system directories: recursive deletion or permission changes are catastrophic.
SYSTEM_DIRS = frozenset(
    """bin boot dev etc home lib lib32 lib64 libx32 media mnt opt proc root run sbin snap srv
    sys usr var Applications Library System Users Volumes private nix""".split()
)
#: Directories whose programs are the programs of the same name (``/usr/bin/env`` is ``env``).
SYSTEM_BIN_DIRS = frozenset(
    """/bin /usr/bin /usr/local/bin /sbin /usr/sbin /usr/local/sbin /opt/homebrew/bin
    /opt/local/bin /run/current-system/sw/bin /snap/bin /usr/libexec""".split()
)
#: Tool directories (project and user installs) whose programs are trusted by name.
TOOL_BIN_DIR = re.compile(
    r"^(?:\./)?(?:node_modules/\.bin|\.venv/bin|venv/bin|\.tox/[\w.-]+/bin|"
    r"(?:~|\$HOME|\$\{HOME\})/(?:\.local/bin|\.cargo/bin|go/bin|\.bun/bin|\.deno/bin|"
    r"\.npm-global/bin|\.pyenv/shims|\.rbenv/shims|\.volta/bin))$"
)
#: Venv activation scripts: ``source`` of these is project set-up, not arbitrary code.
VENV_ACTIVATE = re.compile(r"^(?:\./)?(?:[\w.-]+/)*bin/activate$")

# =============================================================================================
# Subcommand tables. A value is a tier, a nested table, or a marker:
#   @run     the rest is a command, classified (at least low): ``npm exec``, ``uv run``
#   @fetch   like @run, but the tool may download the program first (at least high)
#   @script  a package script: low, or high for deploy/publish/release scripts
#   @code    the next argument is inline code: destructive
#   @file    the next argument is a script file (interpreter.script)
#   @repl    an interactive interpreter or shell reading the terminal: destructive
# Keys: "" is the tier with no subcommand, "*" the tier of an unlisted one (destructive when
# absent: an unknown subcommand may be a plugin or alias). Options before a subcommand are
# skipped; SUBCOMMAND_VALUE_OPTIONS lists those that take a separate value.
# =============================================================================================

SubTable: TypeAlias = dict[str, Union[Tier, str, "SubTable"]]

_NPM_CONFIG: SubTable = {"": R, "get": R, "list": R, "ls": R, "set": M, "delete": M, "edit": M,
                         "fix": M}
_NPM_CACHE: SubTable = {"": R, "ls": R, "verify": R, "clean": M, "add": M, "npx": R}
_NPM: SubTable = {
    "": R, "test": L, "t": L, "tst": L, "run": "@script", "run-script": "@script", "rum": "@script",
    "start": M, "stop": M, "restart": M, "exec": "@run", "x": "@run",
    "install": H, "i": H, "in": H, "ins": H, "add": H, "ci": H, "clean-install": H,
    "install-test": H, "it": H, "install-ci-test": H, "cit": H, "uninstall": H, "remove": H,
    "rm": H, "r": H, "un": H, "unlink": H, "update": H, "up": H, "upgrade": H, "udpate": H,
    "link": M, "ln": M, "prune": M, "dedupe": M, "ddp": M, "rebuild": M, "rb": M,
    "ls": R, "list": R, "ll": R, "la": R, "outdated": R, "view": R, "info": R, "show": R,
    "v": R, "search": R, "s": R, "find": R, "help": R, "help-search": R, "explain": R,
    "why": R, "fund": R, "root": R, "prefix": R, "bin": R, "ping": R, "query": R, "sbom": R,
    "doctor": R, "whoami": R, "stars": R, "completion": R, "diff": R, "docs": L, "home": L,
    "repo": L, "bugs": L, "init": L, "create": H, "innit": L, "pack": L, "version": M,
    "config": _NPM_CONFIG, "c": _NPM_CONFIG, "get": R, "set": M, "cache": _NPM_CACHE,
    "audit": {"": L, "fix": H, "signatures": L}, "pkg": {"": R, "get": R, "set": M,
    "delete": M, "fix": M}, "shrinkwrap": M, "edit": M, "explore": D,
    "publish": D, "unpublish": D, "deprecate": H, "dist-tag": H, "owner": H, "access": H,
    "team": H, "org": H, "token": H, "login": H, "adduser": H, "add-user": H, "logout": L,
    "hook": H, "profile": H, "star": H, "unstar": H, "trust": H,
}
_PNPM: SubTable = {
    **_NPM, "": R, "*": "@script", "dlx": "@fetch", "i": H, "install": H, "add": H,
    "import": H, "fetch": H, "patch": M, "patch-commit": M, "store": {"": R, "status": R,
    "path": R, "prune": M, "add": H}, "env": H, "setup": H, "licenses": R, "deploy": H,
    "recursive": H, "-r": H, "server": H, "approve-builds": H, "self-update": H,
}
_YARN: SubTable = {
    "": H, "*": "@script", "install": H, "add": H, "remove": H, "upgrade": H, "up": H,
    "upgrade-interactive": H, "dedupe": M, "run": "@script", "test": L, "exec": "@run",
    "dlx": "@fetch", "node": "@run", "list": R, "info": R, "why": R, "outdated": R,
    "audit": L, "licenses": R, "bin": R, "config": _NPM_CONFIG, "cache": _NPM_CACHE,
    "init": L, "link": M, "unlink": M, "pack": L, "version": M, "publish": D,
    "npm": {"publish": D, "info": R, "whoami": R, "login": H, "logout": L, "audit": L,
            "tag": H}, "workspaces": {"list": R, "info": R, "foreach": H, "focus": H},
    "workspace": H, "global": H, "set": M, "plugin": H, "constraints": R, "patch": M,
    "patch-commit": M, "explain": R, "search": R, "import": H, "policies": H, "login": H,
    "logout": L, "owner": H, "tag": H, "team": H, "check": R, "generate-lock-entry": R,
    "help": R, "create": H,
}
_BUN: SubTable = {
    "": R, "*": "@file", "run": "@script", "test": L, "x": "@fetch", "exec": "@run",
    "install": H, "i": H, "add": H, "a": H, "remove": H, "rm": H, "update": H,
    "outdated": R, "audit": L, "link": M, "unlink": M, "pm": {"": R, "ls": R, "bin": R,
    "cache": R, "hash": R, "trust": H, "untrusted": R, "pack": L, "whoami": R},
    "build": M, "init": L, "create": H, "c": H, "upgrade": H, "publish": D, "patch": M,
    "info": R, "repl": "@repl", "-e": "@code", "--eval": "@code", "-p": "@code", "--print": "@code",
}
_DENO: SubTable = {
    "": "@repl", "*": "@file", "run": "@file", "eval": "@code", "repl": "@repl", "test": L,
    "bench": L,
    "check": R, "lint": R, "fmt": M, "doc": R, "info": R, "task": "@script", "compile": M,
    "bundle": M, "cache": M, "install": H, "add": H, "remove": M, "uninstall": H,
    "upgrade": H, "publish": D, "init": L, "serve": M, "coverage": R, "types": R,
    "completions": R, "jupyter": M, "outdated": R, "clean": M,
}
_PIP: SubTable = {
    "": R, "install": H, "uninstall": H, "download": H, "wheel": H, "list": R, "show": R,
    "freeze": R, "check": R, "help": R, "search": R, "index": R, "inspect": R, "debug": R,
    "hash": R, "completion": R, "config": {"": R, "list": R, "get": R, "debug": R,
    "set": M, "unset": M, "edit": M}, "cache": {"": R, "dir": R, "info": R, "list": R,
    "remove": M, "purge": M},
}
_UV: SubTable = {
    "": R, "run": "@run", "sync": H, "lock": M, "add": H, "remove": M, "tree": R,
    "venv": L, "init": L, "build": M, "publish": D, "export": L, "format": M, "help": R,
    "version": R, "pip": {**_PIP, "compile": M, "sync": H, "tree": R},
    "tool": {"run": "@fetch", "install": H, "uninstall": H, "upgrade": H, "list": R,
             "dir": R, "update-shell": H},
    "python": {"list": R, "find": R, "dir": R, "install": H, "uninstall": H, "pin": L,
               "upgrade": H},
    "cache": {"dir": R, "clean": M, "prune": M, "size": R},
    "self": {"version": R, "update": H}, "generate-shell-completion": R,
}
_POETRY: SubTable = {
    "": R, "install": H, "add": H, "remove": M, "update": H, "lock": M, "sync": H,
    "run": "@run", "shell": "@repl", "show": R, "check": R, "version": R, "build": M,
    "publish": D, "new": L, "init": L, "export": L, "search": R, "about": R, "list": R,
    "help": R, "env": {"info": R, "list": R, "use": M, "remove": M, "activate": R},
    "config": {"": R, "--list": R}, "source": {"add": M, "remove": M, "show": R},
    "cache": {"list": R, "clear": M}, "self": {"show": R, "update": H, "add": H, "install": H},
    "debug": {"info": R, "resolve": R}, "python": {"list": R, "install": H, "remove": M},
}
_CARGO: SubTable = {
    "": R, "build": M, "b": M, "check": L, "c": L, "test": L, "t": L, "run": M, "r": M,
    "bench": L, "doc": L, "d": L, "clippy": L, "fmt": M, "clean": M, "new": L, "init": L,
    "add": H, "remove": M, "rm": M, "update": M, "fetch": M, "install": H, "uninstall": H,
    "publish": D, "yank": D, "login": H, "logout": L, "owner": H, "search": R, "tree": R,
    "metadata": R, "pkgid": R, "locate-project": R, "verify-project": R, "version": R,
    "help": R, "package": M, "vendor": M, "generate-lockfile": M, "fix": M, "rustc": M,
    "rustdoc": L, "report": R, "info": R, "config": R, "nextest": L, "llvm-cov": L,
    "audit": R, "deny": R, "outdated": R, "expand": R, "udeps": L, "watch": M, "make": M,
    "miri": L, "tarpaulin": L, "machete": R, "sort": M, "insta": M, "hack": L,
}
_GO: SubTable = {
    "": R, "build": M, "test": L, "vet": R, "fmt": M, "run": M, "get": H, "install": H,
    "list": R, "env": R, "version": R, "doc": R, "generate": H, "clean": M, "fix": M,
    "bug": L, "help": R, "telemetry": L, "tool": M,
    "mod": {"tidy": M, "download": M, "verify": R, "graph": R, "why": R, "init": L,
            "edit": M, "vendor": M},
    "work": {"init": L, "use": L, "edit": M, "sync": M, "vendor": M},
}
_RUSTUP: SubTable = {
    "": R, "show": R, "which": R, "doc": L, "default": M, "update": H, "install": H,
    "uninstall": H, "check": R, "override": M, "run": "@run", "completions": R,
    "toolchain": {"list": R, "install": H, "uninstall": H, "link": M},
    "target": {"list": R, "add": H, "remove": M},
    "component": {"list": R, "add": H, "remove": M}, "self": H, "set": M,
}
_GH: SubTable = {
    "": R, "status": R, "search": R, "browse": L, "help": R, "version": R, "completion": R,
    "api": "@gh-api", "attestation": R,
    "pr": {"list": R, "view": R, "status": R, "diff": R, "checks": R, "checkout": L,
           "co": L, "create": H, "new": H, "merge": H, "close": H, "reopen": H, "comment": H,
           "edit": H, "review": H, "ready": H, "lock": H, "unlock": H, "update-branch": H,
           "revert": H},
    "issue": {"list": R, "view": R, "status": R, "create": H, "new": H, "comment": H,
              "close": H, "reopen": H, "edit": H, "delete": D, "transfer": H, "pin": H,
              "unpin": H, "lock": H, "unlock": H, "develop": M},
    "repo": {"view": R, "list": R, "clone": M, "create": H, "new": H, "fork": H,
             "delete": D, "archive": D, "unarchive": H, "rename": H, "edit": H, "sync": H,
             "set-default": L, "deploy-key": {"list": R, "add": H, "delete": H},
             "autolink": {"list": R, "view": R, "create": H, "delete": H}, "license": R,
             "gitignore": R},
    "run": {"list": R, "view": R, "watch": R, "download": L, "rerun": M, "cancel": M,
            "delete": H},
    "workflow": {"list": R, "view": R, "run": H, "enable": H, "disable": H},
    "release": {"list": R, "view": R, "download": L, "create": H, "edit": H, "upload": H,
                "delete": D, "delete-asset": D, "verify": R, "verify-asset": R},
    "auth": {"status": R, "token": H, "login": H, "logout": H, "refresh": H,
             "setup-git": H, "switch": M},
    "gist": {"list": R, "view": R, "create": H, "new": H, "edit": H, "delete": D,
             "clone": M, "rename": H},
    "label": {"list": R, "create": H, "edit": H, "delete": H, "clone": H},
    "cache": {"list": R, "delete": H}, "secret": {"list": R, "set": H, "delete": H},
    "variable": {"list": R, "get": R, "set": H, "delete": H},
    "ssh-key": {"list": R, "add": H, "delete": H}, "gpg-key": {"list": R, "add": H,
    "delete": H}, "config": {"get": R, "list": R, "set": M, "clear-cache": L},
    "extension": {"list": R, "search": R, "browse": R, "install": H, "upgrade": H,
                  "remove": M, "create": L, "exec": H},
    "alias": {"list": R, "set": H, "delete": M, "import": H}, "org": {"list": R},
    "project": {"list": R, "view": R, "field-list": R, "item-list": R, "*": H},
    "ruleset": {"list": R, "view": R, "check": R}, "codespace": {"list": R, "view": R,
    "*": H}, "copilot": H, "agent-task": {"list": R, "view": R, "*": H},
}
_COMPOSE: SubTable = {
    "ps": R, "logs": R, "config": R, "ls": R, "images": R, "top": R, "version": R,
    "events": R, "port": R, "up": M, "down": M, "build": M, "pull": M, "push": H,
    "start": M, "stop": M, "restart": M, "run": M, "exec": H, "rm": H, "kill": H,
    "create": M, "pause": M, "unpause": M, "cp": M, "watch": M, "wait": R, "scale": M,
    "attach": H, "stats": R,
}
_DOCKER: SubTable = {
    "": R, "ps": R, "images": R, "inspect": R, "logs": R, "version": R, "info": R,
    "stats": R, "top": R, "port": R, "diff": R, "events": R, "search": R, "history": R,
    "build": M, "run": "@docker-run", "create": "@docker-run", "exec": H, "start": M,
    "stop": M, "restart": M, "pause": M, "unpause": M, "wait": R, "kill": H, "rm": H,
    "rmi": H, "pull": M, "push": H, "tag": L, "login": H, "logout": L, "cp": M, "commit": M,
    "save": L, "load": M, "import": M, "export": L, "rename": M, "update": M, "attach": H,
    "compose": _COMPOSE,
    "image": {"ls": R, "list": R, "inspect": R, "history": R, "rm": H, "prune": H,
              "pull": M, "push": H, "build": M, "tag": L, "save": L, "load": M,
              "import": M},
    "container": {"ls": R, "list": R, "ps": R, "inspect": R, "logs": R, "top": R,
                  "stats": R, "port": R, "diff": R, "run": "@docker-run",
                  "create": "@docker-run", "exec": H, "start": M, "stop": M, "restart": M,
                  "kill": H, "rm": H, "prune": H, "cp": M, "commit": M, "export": L,
                  "rename": M, "update": M, "wait": R, "attach": H, "pause": M,
                  "unpause": M},
    "network": {"ls": R, "list": R, "inspect": R, "create": M, "rm": H, "prune": H,
                "connect": M, "disconnect": M},
    "volume": {"ls": R, "list": R, "inspect": R, "create": L, "rm": D, "prune": D},
    "system": {"df": R, "info": R, "events": R, "prune": H},
    "builder": {"ls": R, "prune": M, "build": M},
    "buildx": {"ls": R, "inspect": R, "du": R, "version": R, "build": M, "bake": M,
               "create": M, "use": L, "rm": M, "prune": M, "stop": M},
    "context": {"ls": R, "list": R, "inspect": R, "show": R, "use": M, "create": M, "rm": M},
    "manifest": {"inspect": R, "*": H}, "scout": R, "sbom": R, "trust": {"inspect": R, "*": H},
    "swarm": H, "service": {"ls": R, "ps": R, "inspect": R, "logs": R, "*": H},
    "stack": {"ls": R, "ps": R, "services": R, "*": H}, "node": {"ls": R, "inspect": R, "*": H},
    "secret": {"ls": R, "inspect": H, "*": H}, "config": {"ls": R, "inspect": R, "*": H},
    "plugin": {"ls": R, "inspect": R, "*": H},
}
_KUBECTL: SubTable = {
    "": R, "get": R, "describe": R, "logs": R, "explain": R, "version": R,
    "api-resources": R, "api-versions": R, "cluster-info": R, "top": R, "diff": R,
    "events": R, "wait": R, "completion": R, "plugin": {"list": R},
    "auth": {"can-i": R, "whoami": R, "reconcile": H},
    "config": {"view": R, "get-contexts": R, "current-context": R, "get-clusters": R,
               "get-users": R, "use-context": M, "use": M, "set-context": M, "*": H},
    "apply": H, "create": H, "patch": H, "replace": H, "scale": H, "autoscale": H,
    "rollout": {"status": R, "history": R, "*": H}, "set": H, "label": H, "annotate": H,
    "expose": H, "cp": H, "edit": H, "port-forward": H, "proxy": H, "run": H, "attach": H,
    "exec": H, "debug": H, "cordon": H, "uncordon": H, "drain": H, "taint": H,
    "certificate": H, "kustomize": R, "delete": D,
}
_HELM: SubTable = {
    "": R, "list": R, "ls": R, "status": R, "get": R, "show": R, "inspect": R,
    "template": R, "lint": R, "search": R, "version": R, "history": R, "env": R,
    "verify": R, "help": R, "install": H, "upgrade": H, "rollback": H, "test": M,
    "uninstall": D, "delete": D, "del": D, "un": D, "package": L, "pull": M, "push": H,
    "create": L, "dependency": {"list": R, "build": M, "update": M},
    "repo": {"list": R, "add": M, "update": M, "remove": M, "index": L},
    "plugin": {"list": R, "*": H}, "registry": H,
}
_TERRAFORM: SubTable = {
    "": R, "validate": R, "plan": R, "show": R, "output": R, "version": R, "providers": R,
    "graph": R, "console": R, "fmt": M, "init": M, "get": M, "refresh": H, "apply": H,
    "import": H, "taint": H, "untaint": H, "destroy": D, "login": H, "logout": L, "test": M,
    "force-unlock": H, "state": {"list": R, "show": R, "pull": R, "mv": H, "rm": H,
                                 "push": D, "replace-provider": H},
    "workspace": {"list": R, "show": R, "select": L, "new": L, "delete": H},
}
_SYSTEMCTL: SubTable = {
    "": R, "status": R, "show": R, "cat": R, "is-active": R, "is-enabled": R,
    "is-failed": R, "is-system-running": R, "list-units": R, "list-unit-files": R,
    "list-timers": R, "list-sockets": R, "list-dependencies": R, "list-jobs": R,
    "list-machines": R, "get-default": R, "help": R, "show-environment": H,
    "start": H, "stop": H, "restart": H, "reload": H, "try-restart": H,
    "reload-or-restart": H, "enable": H, "disable": H, "mask": H, "unmask": H,
    "daemon-reload": H, "edit": H, "kill": H, "reset-failed": M, "set-default": H,
    "set-environment": H, "link": H, "revert": H, "isolate": D, "poweroff": D, "reboot": D,
    "halt": D, "kexec": D, "suspend": D, "hibernate": D, "hybrid-sleep": D, "rescue": D,
    "emergency": D, "default": D,
}
_APT: SubTable = {
    "": R, "list": R, "search": R, "show": R, "showpkg": R, "policy": R, "depends": R,
    "rdepends": R, "madison": R, "changelog": R, "help": R, "download": L, "source": M,
    "update": H, "install": H, "reinstall": H, "upgrade": H, "full-upgrade": H,
    "dist-upgrade": H, "remove": H, "purge": H, "autoremove": H, "autopurge": H,
    "build-dep": H, "satisfy": H, "clean": M, "autoclean": M, "edit-sources": H,
    "mark": H, "check": R,
}
_BREW: SubTable = {
    "": R, "list": R, "ls": R, "info": R, "search": R, "outdated": R, "deps": R,
    "uses": R, "leaves": R, "config": R, "doctor": R, "--prefix": R, "--cellar": R,
    "--cache": R, "home": L, "desc": R, "log": R, "cat": R, "shellenv": R, "commands": R,
    "install": H, "reinstall": H, "upgrade": H, "update": H, "uninstall": H, "remove": H,
    "rm": H, "link": M, "unlink": M, "pin": L, "unpin": L, "tap": H, "untap": H,
    "cleanup": M, "autoremove": H, "services": {"list": R, "info": R, "*": H},
    "bundle": {"check": R, "list": R, "*": H},
}
_DNF: SubTable = {
    "": R, "list": R, "info": R, "search": R, "provides": R, "repolist": R,
    "repoquery": R, "history": {"": R, "list": R, "info": R, "*": H}, "check-update": R,
    "makecache": M, "clean": M, "install": H, "reinstall": H, "remove": H, "erase": H,
    "upgrade": H, "update": H, "downgrade": H, "autoremove": H, "distro-sync": H,
    "group": {"list": R, "info": R, "*": H}, "module": {"list": R, "info": R, "*": H},
    "download": L,
}
_PACMAN_LIKE: SubTable = {"": R, "-Q": R, "-Qi": R, "-Ql": R, "-Ss": R, "-Si": R, "*": H}
_APK: SubTable = {"": R, "info": R, "search": R, "list": R, "policy": R, "stats": R,
                  "update": H, "add": H, "del": H, "upgrade": H, "fix": H, "cache": M}
_SNAP: SubTable = {"": R, "list": R, "info": R, "find": R, "version": R, "services": R,
                   "changes": R, "connections": R, "*": H}
_GRADLE: SubTable = {
    "": M, "*": M, "test": L, "check": L, "tasks": R, "projects": R, "properties": R,
    "dependencies": R, "dependencyInsight": R, "help": R, "build": M, "assemble": M,
    "clean": M, "run": M, "bootRun": M, "jar": M, "compileJava": L, "compileKotlin": L,
    "lint": R, "publish": D, "publishToMavenLocal": M, "uploadArchives": D,
    "wrapper": M, "init": L, "installDist": M,
}
_MAVEN: SubTable = {
    "": M, "*": M, "test": L, "verify": L, "validate": R, "compile": L, "test-compile": L,
    "package": M, "install": M, "clean": M, "site": M, "deploy": D, "release:perform": D,
    "release:prepare": H, "dependency:tree": R, "dependency:list": R, "help:effective-pom": R,
    "versions:display-dependency-updates": R, "exec:java": M, "exec:exec": H,
    "spring-boot:run": M, "checkstyle:check": R, "spotless:apply": M, "spotless:check": R,
}
_DOTNET: SubTable = {
    "": R, "--info": R, "--list-sdks": R, "--list-runtimes": R, "build": M, "test": L,
    "run": M, "watch": M, "restore": H, "clean": M, "format": M, "publish": M, "pack": L,
    "new": L, "sln": M, "list": R, "add": H, "remove": M, "tool": {"list": R, "run": M,
    "*": H}, "nuget": {"push": D, "delete": D, "*": H}, "workload": {"list": R, "*": H},
    "dev-certs": H, "user-secrets": H, "ef": M, "help": R, "sdk": {"check": R},
}
_SWIFT: SubTable = {
    "": "@repl", "*": "@file", "build": M, "test": L, "run": M, "repl": "@repl", "package": {
        "resolve": H, "update": H, "init": L, "describe": R, "dump-package": R,
        "show-dependencies": R, "clean": M, "reset": M, "edit": M, "unedit": M,
        "generate-xcodeproj": M, "*": H}, "format": M, "--version": R,
}
_MIX: SubTable = {
    "": M, "*": M, "test": L, "compile": L, "format": M, "deps.get": H, "deps.update": H,
    "deps.tree": R, "hex.publish": D, "phx.server": M, "ecto.migrate": H, "ecto.drop": D,
    "ecto.reset": D, "help": R, "credo": R, "dialyzer": R,
}
_PRE_COMMIT: SubTable = {
    "": M, "run": M, "install": H, "uninstall": H, "install-hooks": M, "autoupdate": M,
    "clean": M, "gc": M, "validate-config": R, "validate-manifest": R, "sample-config": R,
    "try-repo": H, "migrate-config": M, "help": R,
}
_RUFF: SubTable = {"": R, "*": R, "check": R, "format": M, "rule": R, "config": R,
                   "linter": R, "version": R, "clean": M, "server": M, "analyze": R}
_BIOME: SubTable = {"": R, "check": R, "lint": R, "format": R, "ci": R, "init": L,
                    "migrate": M, "version": R, "explain": R, "rage": R, "search": R}
_GOLANGCI: SubTable = {"": R, "run": R, "linters": R, "version": R, "help": R, "config": R,
                       "cache": {"status": R, "clean": M}, "fmt": M, "formatters": R}
_CONDA: SubTable = {
    "": R, "list": R, "info": R, "search": R, "config": {"": R, "--show": R, "*": M},
    "env": {"list": R, "export": R, "create": H, "remove": H, "update": H},
    "install": H, "create": H, "update": H, "upgrade": H, "remove": H, "uninstall": H,
    "clean": M, "run": "@run", "activate": L, "deactivate": L, "init": H, "doctor": R,
}
_PIPX: SubTable = {"": R, "list": R, "environment": R, "run": "@fetch", "install": H,
                   "uninstall": H, "upgrade": H, "upgrade-all": H, "reinstall": H,
                   "reinstall-all": H, "inject": H, "uninject": M, "ensurepath": H,
                   "completions": R}
_PUBLISHER: SubTable = {"": R, "check": R, "upload": D, "register": D}
_HATCH: SubTable = {"": R, "*": "@script", "run": "@run", "build": M, "publish": D,
                    "test": L, "fmt": M, "version": R, "env": {"show": R, "*": M},
                    "shell": "@repl", "new": L, "clean": M, "status": R, "project": R,
                    "dep": R, "config": {"show": R, "*": M}, "python": {"show": R, "*": H}}
_ALEMBIC: SubTable = {"": R, "current": R, "history": R, "heads": R, "branches": R,
                      "show": R, "check": R, "upgrade": H, "downgrade": H, "stamp": H,
                      "revision": L, "merge": L, "init": L, "edit": M}
_MKDOCS: SubTable = {"": R, "build": M, "serve": M, "new": L, "gh-deploy": D,
                     "get-deps": R}
_SEVEN_Z: SubTable = {"": R, "l": R, "t": R, "i": R, "h": R, "b": R, "a": L, "u": M,
                      "x": M, "e": M, "d": M, "rn": M}
_BUNDLE: SubTable = {"": H, "install": H, "update": H, "add": H, "remove": M, "exec": "@run",
                     "list": R, "show": R, "info": R, "check": R, "outdated": R, "lock": M,
                     "config": {"list": R, "get": R, "*": M}, "clean": M, "init": L}
_RUN_ONLY: SubTable = {"": R, "run": "@run", "*": H}
_AWS: SubTable = {
    "": R, "*": H, "help": R, "--version": R,
    "sts": {"get-caller-identity": R, "*": H},
    "s3": {"ls": R, "presign": H, "cp": H, "mv": H, "sync": H, "mb": H, "rm": H, "rb": D,
           "website": H},
    "s3api": {"list-buckets": R, "list-objects": R, "list-objects-v2": R, "head-object": R,
              "get-bucket-policy": R, "delete-bucket": D, "*": H},
    "configure": {"list": R, "get": H, "*": H},
}

#: Program → subcommand table. docker and podman share one; tools without a table but with
#: subcommand-like first words (``pdm``, ``rye``, ``pipenv``) use ``_RUN_ONLY``.
SUBCOMMANDS: dict[str, SubTable] = {
    "npm": _NPM, "pnpm": _PNPM, "yarn": _YARN, "bun": _BUN, "deno": _DENO,
    "pip": _PIP, "uv": _UV, "poetry": _POETRY, "pipx": _PIPX, "conda": _CONDA,
    "mamba": _CONDA, "micromamba": _CONDA, "hatch": _HATCH, "pdm": {**_RUN_ONLY,
    "install": H, "add": H, "sync": H, "lock": M, "build": M, "publish": D, "list": R,
    "show": R}, "rye": {**_RUN_ONLY, "sync": H, "add": H, "build": M, "publish": D,
    "test": L, "lint": R, "fmt": M}, "pipenv": {**_RUN_ONLY, "install": H, "sync": H,
    "lock": M, "graph": R, "shell": "@repl", "check": R, "--venv": R, "--where": R},
    "twine": _PUBLISHER, "flit": {"": R, "build": M, "publish": D, "install": H},
    "cargo": _CARGO, "go": _GO, "rustup": _RUSTUP, "gh": _GH, "docker": _DOCKER,
    "podman": _DOCKER, "nerdctl": _DOCKER, "docker-compose": _COMPOSE,
    "podman-compose": _COMPOSE, "kubectl": _KUBECTL, "oc": _KUBECTL, "helm": _HELM,
    "terraform": _TERRAFORM, "tofu": _TERRAFORM, "systemctl": _SYSTEMCTL,
    "apt": _APT, "apt-get": _APT, "apt-cache": {"*": R, "": R}, "aptitude": _APT,
    "brew": _BREW, "dnf": _DNF, "yum": _DNF, "microdnf": _DNF, "zypper": _DNF,
    "pacman": _PACMAN_LIKE, "yay": _PACMAN_LIKE, "paru": _PACMAN_LIKE, "apk": _APK,
    "snap": _SNAP, "flatpak": _SNAP, "port": _BREW, "gradle": _GRADLE,
    "gradlew": _GRADLE, "mvn": _MAVEN, "mvnw": _MAVEN, "dotnet": _DOTNET,
    "swift": _SWIFT, "mix": _MIX, "pre-commit": _PRE_COMMIT, "prek": _PRE_COMMIT,
    "ruff": _RUFF, "biome": _BIOME, "golangci-lint": _GOLANGCI, "alembic": _ALEMBIC,
    "mkdocs": _MKDOCS, "7z": _SEVEN_Z, "7za": _SEVEN_Z, "7zz": _SEVEN_Z,
    "bundle": _BUNDLE, "bundler": _BUNDLE, "aws": _AWS,
    "tsc": {"": M, "*": M}, "eslint": {"": R, "*": R},
    "prettier": {"": R, "*": R}, "gofmt": {"": R, "*": R}, "goimports": {"": R, "*": R},
    "rustfmt": {"": M, "*": M}, "clang-format": {"": R, "*": R},
    "clang-tidy": {"": R, "*": R}, "codespell": {"": R, "*": R}, "typos": {"": R, "*": R},
    "unzip": {"": M, "*": M}, "cargo-nextest": {"": L, "*": L},
}

#: Options before a subcommand that take a separate value (``kubectl -n ns get pods``).
SUBCOMMAND_VALUE_OPTIONS: dict[str, frozenset[str]] = {
    name: frozenset(options.split())
    for name, options in {
        "npm": "--prefix -C --workspace -w --registry --cache --userconfig --loglevel",
        "pnpm": "-C --dir --filter -F --reporter --loglevel",
        "yarn": "--cwd", "bun": "--cwd -c --config",
        "pip": "--python --proxy --log --cache-dir --retries --timeout",
        "uv": "--directory --project --python -p --cache-dir --config-file --color",
        "poetry": "-C --directory -P --project",
        "cargo": "-Z --config --color -C", "go": "-C",
        "gh": "-R --repo --hostname",
        "docker": "-H --host -c --context --config -l --log-level --tlscacert --tlscert "
        "--tlskey -f --file -p --project-name --profile --env-file --project-directory "
        "--ansi --parallel --progress",
        "kubectl": "-n --namespace --context --cluster --user -s --server --kubeconfig "
        "-l --selector -o --output --token --as --as-group --request-timeout",
        "helm": "-n --namespace --kube-context --kubeconfig --registry-config "
        "--repository-config --repository-cache",
        "systemctl": "-H --host -M --machine -t --type -p --property --state -n --lines "
        "-o --output --root",
        "apt": "-o -c -t --target-release",
        "dnf": "--repo --enablerepo --disablerepo -c --releasever --installroot",
        "gradle": "-p --project-dir -b --build-file -c --settings-file -x --exclude-task "
        "-I --init-script",
        "mvn": "-f --file -s --settings -P --activate-profiles -pl --projects -rf "
        "--resume-from -T --threads -gs --global-settings",
        "pre-commit": "-c --config", "ruff": "--config", "golangci-lint": "-c --config",
        "conda": "-n --name -p --prefix", "tsc": "-p --project",
        "aws": "--profile --region --output --endpoint-url --query --cli-read-timeout "
        "--cli-connect-timeout --color --ca-bundle",
    }.items()
}
for _alias, _same in (("podman", "docker"), ("nerdctl", "docker"), ("docker-compose", "docker"),
                      ("podman-compose", "docker"), ("oc", "kubectl"), ("apt-get", "apt"),
                      ("yum", "dnf"), ("gradlew", "gradle"), ("mvnw", "mvn"),
                      ("mamba", "conda"), ("micromamba", "conda"), ("prek", "pre-commit")):
    SUBCOMMAND_VALUE_OPTIONS[_alias] = SUBCOMMAND_VALUE_OPTIONS[_same]

#: Flags that change a (sub)command's tier; the first flag present wins. Keys are the program
#: and the subcommand path; ``*`` is the path of an unlisted subcommand.
FLAG_TIERS: dict[tuple[str, ...], tuple[tuple[str, Tier], ...]] = {
    ("cargo", "clippy"): (("--fix", M),),
    ("cargo", "fmt"): (("--check", R),),
    ("go", "env"): (("-w", M), ("-u", M)),
    ("ruff", "check"): (("--no-fix", R), ("--fix", M), ("--fix-only", M)),
    ("ruff", "*"): (("--no-fix", R), ("--fix", M), ("--fix-only", M)),
    ("ruff", "format"): (("--check", R), ("--diff", R)),
    ("black",): (("--check", R), ("--diff", R)),
    ("isort",): (("--check", R), ("--check-only", R), ("-c", R), ("--diff", R)),
    ("autopep8",): (("--diff", R), ("-d", R)),
    ("yapf",): (("--diff", R), ("-d", R)),
    ("tsc", ""): (("--noEmit", R), ("--showConfig", R), ("--listFilesOnly", R)),
    ("tsc", "*"): (("--noEmit", R), ("--showConfig", R), ("--listFilesOnly", R)),
    ("eslint", ""): (("--fix-dry-run", R), ("--fix", M)),
    ("eslint", "*"): (("--fix-dry-run", R), ("--fix", M)),
    ("prettier", "*"): (("--write", M), ("-w", M)),
    ("gofmt", "*"): (("-w", M),), ("goimports", "*"): (("-w", M),),
    ("rustfmt", "*"): (("--check", R),), ("clang-format", "*"): (("-i", M),),
    ("clang-tidy", "*"): (("--fix", M), ("-fix", M), ("--fix-errors", M), ("-fix-errors", M)),
    ("codespell", ""): (("-w", M), ("--write-changes", M)),
    ("codespell", "*"): (("-w", M), ("--write-changes", M)),
    ("typos", ""): (("-w", M), ("--write-changes", M)),
    ("typos", "*"): (("-w", M), ("--write-changes", M)),
    ("biome", "check"): (("--write", M), ("--apply", M), ("--fix", M), ("--apply-unsafe", M)),
    ("biome", "lint"): (("--write", M), ("--apply", M), ("--fix", M)),
    ("biome", "format"): (("--write", M),),
    ("golangci-lint", "run"): (("--fix", M),),
    ("unzip", "*"): (("-l", R), ("-t", R), ("-Z", R), ("-v", R), ("-p", R), ("-z", R)),
    ("docker", "compose", "down"): (("-v", H), ("--volumes", H), ("--rmi", H)),
    ("docker", "system", "prune"): (("--volumes", D),),
    ("terraform", "apply"): (("-destroy", D),),
    ("terraform", "fmt"): (("-check", R),),
    ("kubectl", "delete"): (("--dry-run", R),),
    ("kubectl", "apply"): (("--dry-run", R),),
    ("helm", "install"): (("--dry-run", R),), ("helm", "upgrade"): (("--dry-run", R),),
    ("dotnet", "format"): (("--verify-no-changes", R),),
    ("deno", "fmt"): (("--check", R),),
    ("mix", "format"): (("--check-formatted", R),),
    ("npm", "install"): (("--dry-run", R),), ("npm", "publish"): (("--dry-run", L),),
    ("cargo", "publish"): (("--dry-run", L), ("-n", L)),
    ("uv", "publish"): (("--dry-run", L),),
    ("pip", "install"): (("--dry-run", R),),
    ("aws", "s3", "rm"): (("--dryrun", R), ("--recursive", D)),
    ("aws", "s3", "sync"): (("--dryrun", R), ("--delete", D)),
}
for _compressor in "gzip gunzip bzip2 bunzip2 xz unxz zstd unzstd lz4 pigz".split():
    FLAG_TIERS[(_compressor,)] = (
        ("-c", R), ("--stdout", R), ("-l", R), ("--list", R), ("-t", R), ("--test", R),
        ("-k", L), ("--keep", L),
    )

#: Package runners: options before the command (taking a value / flags / taking inline code)
#: and operands before it. Other options fail closed (``wrapper.unknown-option``).
RUNNERS: dict[tuple[str, ...], tuple[str, str, str, int]] = {
    ("npx",): ("-p --package -w --workspace --prefix",
               "-y --yes --no -q --quiet --ws --workspaces --include-workspace-root "
               "--no-install --ignore-existing", "-c --call", 0),
    ("npm", "exec"): ("-p --package -w --workspace --prefix", "-y --yes --no -q --quiet "
                      "--ws --workspaces --include-workspace-root", "-c --call", 0),
    ("pnpm", "exec"): ("-C --dir --filter -F --resume-from", "-r --recursive --parallel "
                       "--no-bail --report-summary", "-c --shell-mode", 0),
    ("pnpm", "dlx"): ("--package", "--silent -s", "-c --shell-mode", 0),
    ("yarn", "exec"): ("", "", "", 0), ("yarn", "dlx"): ("-p --package", "-q --quiet", "", 0),
    ("bunx",): ("-p --package", "--bun", "", 0), ("bun", "x"): ("-p --package", "--bun", "", 0),
    ("uv", "run"): ("--with --with-editable --with-requirements --python -p --package "
                    "--extra --group --env-file --directory --project --index "
                    "--default-index --index-url --extra-index-url --python-platform",
                    "--isolated --no-sync --frozen --locked --no-project --all-packages "
                    "--all-extras --no-dev --dev --only-dev --active --no-active -q --quiet "
                    "-v --verbose --offline --no-cache --script --no-env-file --exact "
                    "--no-editable --module -m", "", 0),
    ("uv", "tool", "run"): ("--from --with --with-editable --with-requirements --python -p "
                            "--index --index-url --extra-index-url", "--isolated "
                            "--no-cache -q -v --offline", "", 0),
    ("uvx",): ("--from --with --with-editable --with-requirements --python -p --index "
               "--index-url --extra-index-url", "--isolated --no-cache -q -v --offline", "", 0),
    ("pipx", "run"): ("--spec --python --pip-args --index-url", "--no-cache "
                      "--system-site-packages -q -v --verbose --quiet", "", 0),
    ("conda", "run"): ("-n --name -p --prefix --cwd", "--no-capture-output --live-stream "
                       "-v", "", 0),
    ("rustup", "run"): ("", "--install", "", 1),
}
#: Runners whose whole argument list is ``[options] command [args]``: (runner key, floor).
TOP_LEVEL_RUNNERS: dict[str, tuple[tuple[str, ...], Tier]] = {
    "npx": (("npx",), L), "pnpx": (("pnpm", "dlx"), H), "bunx": (("bunx",), H),
    "uvx": (("uvx",), H),
}

#: ``python -m MODULE``: a tier, or the program the module is (``python -m pip`` is ``pip``).
PYTHON_MODULES: dict[str, Tier | str] = {
    "pytest": "pytest", "pip": "pip", "mypy": "mypy", "ruff": "ruff", "black": "black",
    "isort": "isort", "flake8": "flake8", "pylint": "pylint", "pyright": "pyright",
    "bandit": "bandit", "pycodestyle": "pycodestyle", "pydocstyle": "pydocstyle",
    "pyflakes": "pyflakes", "vulture": "vulture", "coverage": "coverage", "tox": "tox",
    "nox": "nox", "twine": "twine", "poetry": "poetry", "uv": "uv", "pipx": "pipx",
    "pre_commit": "pre-commit", "mkdocs": "mkdocs", "alembic": "alembic", "hatch": "hatch",
    "pdm": "pdm", "autopep8": "autopep8", "yapf": "yapf", "radon": "radon",
    "unittest": L, "doctest": L, "venv": L, "virtualenv": L, "build": M, "json.tool": R,
    "pydoc": R, "compileall": L, "py_compile": L, "tabnanny": R, "pyclbr": R, "site": R,
    "sysconfig": R, "platform": R, "this": R, "tokenize": R, "dis": R, "ast": R,
    "calendar": R, "uuid": R, "base64": R, "zipfile": L, "tarfile": L, "gzip": M,
    "sphinx": M, "pytest_benchmark": L, "hypothesis": L, "ensurepip": H, "pip_audit": R,
    "http.server": H, "webbrowser": H, "smtpd": H, "ftplib": H, "uvicorn": M,
    "gunicorn": M, "flask": M, "django": M, "streamlit": M, "jupyter": M,
    "notebook": M, "ipykernel": M, "nuitka": M, "PyInstaller": M, "maturin": M,
    "cProfile": M, "profile": M, "pdb": M, "trace": M, "timeit": D, "code": D,
    "asyncio": D, "sqlite3": D, "idlelib": D, "IPython": D, "runpy": D,
}

#: ``make`` targets that are not medium (every target on the command line counts).
MAKE_TARGETS: dict[str, Tier] = {
    "help": R, "-n": L, "install": H, "uninstall": H, "deploy": H, "publish": H,
    "release": H, "upload": H, "push": H, "docker-push": H,
}
#: ``npm run`` scripts with these words in their name are high (they usually ship things).
SHIPPING_SCRIPT = re.compile(r"deploy|publish|release|upload|ship|prod", re.IGNORECASE)

#: git ``-c``/``config`` keys that make git run a program (lower-case; ``*`` is any part).
GIT_EXEC_KEYS = re.compile(
    r"""(?x)^(?:
        core\.(?:pager|sshcommand|editor|fsmonitor|hookspath|askpass|gitproxy|worktree|
              alternaterefscommand|attributesfile|excludesfile)
      | alias\..* | pager\..* | diff\..*\.(?:textconv|command) | diff\.external
      | filter\..* | merge\..*\.driver | credential(?:\..*)?\.helper | sequence\.editor
      | gpg(?:\..*)?\.program | uploadpack\.packobjectshook | include\.path | includeif\..*
      | remote\..*\.(?:uploadpack|receivepack|proxy) | protocol\..*allow | url\..*
      | ssh\.variant | instaweb\..* | sendemail\..* | web\.browser | browser\..*\.(?:cmd|path)
      | man\..*\.(?:cmd|path) | difftool\..*\.(?:cmd|path) | mergetool\..*\.(?:cmd|path)
      | receive\..* | http\..*\.?proxy | http\.proxy | submodule\..*\.update
      | core\.sshcommand | init\.templatedir | clean\.requireforce | safe\.directory
    )$"""
)

# =============================================================================================
# git: subcommand-aware. Subcommands not listed here or in GIT_HANDLERS (below) are unknown
# and fail closed: they may be aliases or ``git-foo`` programs on PATH.
# =============================================================================================

GIT_SUBCOMMANDS: dict[str, Tier] = {
    # read-only
    "status": R, "diff": R, "log": R, "show": R, "blame": R, "annotate": R, "shortlog": R,
    "describe": R, "rev-parse": R, "rev-list": R, "ls-files": R, "ls-tree": R,
    "ls-remote": R, "cat-file": R, "grep": R, "show-ref": R, "for-each-ref": R,
    "name-rev": R, "merge-base": R, "cherry": R, "whatchanged": R, "count-objects": R,
    "fsck": R, "verify-commit": R, "verify-tag": R, "verify-pack": R, "check-ignore": R,
    "check-attr": R, "check-ref-format": R, "check-mailmap": R, "var": R, "help": R,
    "version": R, "range-diff": R, "diff-tree": R, "diff-files": R, "diff-index": R,
    "show-branch": R, "request-pull": R, "get-tar-commit-id": R, "column": R,
    "interpret-trailers": R, "stripspace": R, "patch-id": R, "mailinfo": R,
    "fmt-merge-msg": R, "show-index": R, "unpack-file": L, "merge-tree": R,
    "difftool": M, "citool": M, "gui": M, "gitk": M,
    # low: reversible, in-repository
    "add": L, "init": L, "format-patch": L, "archive": L, "bundle": L, "hash-object": L,
    "commit-tree": L, "mktag": L, "mktree": L, "update-index": L, "read-tree": M,
    "write-tree": L, "notes": L, "bisect": L, "sparse-checkout": M, "maintenance": M,
    "rerere": L, "replay": M,
    # medium: mutating but recoverable
    "commit": M, "fetch": M, "pull": M, "merge": M, "rebase": M, "cherry-pick": M,
    "revert": M, "am": M, "apply": M, "mv": M, "rm": M, "clone": M, "submodule": M,
    "gc": M, "repack": M, "pack-refs": M, "lfs": M, "symbolic-ref": M, "hook": M,
    "stage": L, "mergetool": M, "checkout-index": D,
    # high: hard to undo, leaves the machine
    "push": H, "prune": H, "replace": H, "update-ref": H, "send-email": H,
    "send-pack": H, "daemon": H, "instaweb": H, "http-push": H, "credential": H,
    "credential-store": H, "credential-cache": H, "imap-send": H, "svn": H, "p4": H,
    "cvsimport": H, "fast-import": H, "fast-export": L, "upload-pack": H,
    "receive-pack": H, "shell": D,
}
#: Options of ``git`` itself that take a separate value.
GIT_GLOBAL_VALUE_OPTIONS = frozenset(
    "-C -c --git-dir --work-tree --namespace --super-prefix --config-env --exec-path".split()
)
#: Common directory names: ``git checkout src`` discards edits rather than switching branch.
LIKELY_PATHS = frozenset(
    """src lib test tests docs doc app bin build dist scripts config public static assets
    include pkg cmd internal vendor node_modules spec examples example tools benchmarks
    web www data fixtures migrations templates styles components pages api server client
    packages crates modules resources res target out""".split()
)
#: Branch prefixes that make ``a/b`` a branch name rather than a path.
BRANCH_PREFIXES = frozenset(
    """feature feat fix bugfix hotfix release chore docs refactor test dependabot renovate
    origin upstream users user dev wip codex claude agent copilot cursor experiment
    exp topic""".split()
)

#: Every rule id a Reason can carry (the table in the module docstring, as data).
RULE_IDS: frozenset[str] = frozenset(
    """
    parse.error parse.too-long parse.too-deep parse.control-char parse.invalid-text
    parse.not-text parse.dropped-text parse.misparse parse.unsupported parse.internal
    parse.unavailable internal.error command.dynamic program.unknown program.table
    program.version program.override command.project-executable command.outside-executable
    subcommand.table subcommand.unknown subcommand.dynamic wrapper.unknown-option
    wrapper.no-command shell.assignment shell.declaration shell.test shell.arithmetic
    shell.arith-injection shell.control shell.function-call shell.fork-bomb shell.lookup
    shell.redirect-only env.dump env.exec-hook env.path secret.env-var secret.read
    read.outside-project write.device write.protected write.home write.outside-project
    write.dynamic write.tmp redirect.overwrite redirect.append privilege.sudo
    privilege.switch-user system.power system.accounts system.persistence process.kill-all
    disk.dd disk.mkfs disk.partition fs.shred fs.recursive-system rm.recursive-force-root
    rm.recursive-force-home rm.recursive-force-system rm.recursive-force rm.dynamic-flags
    rm.delete chmod.world-writable chmod.setuid interpreter.inline-code interpreter.stdin
    interpreter.script interpreter.outside-script interpreter.dynamic-script interpreter.eval
    interpreter.source interpreter.source-venv pipe.to-interpreter download.pipe-to-shell
    python.module python.unknown-module awk.program awk.exec awk.in-place sed.exec sed.write
    sed.in-place sed.unparsed find.delete find.delete-wide shell.nested-code archive.extract
    rsync.remote rsync.delete docker.host-escape docker.host-access gh.api npm.script git.subcommand
    git.unknown-subcommand git.push git.push-force git.push-delete git.reset-hard
    git.clean-force git.branch-delete git.discard-changes git.stash-clear git.history-rewrite
    git.exec-config git.exec-option git.config-write
    """.split()
)

# =============================================================================================
# Tables used by the argument handlers below (kept here so all the data is in one place).
# =============================================================================================

#: ``git stash SUB``: (tier, rule).
GIT_STASH: dict[str, tuple[Tier, str]] = {
    "list": (R, "git.subcommand"), "show": (R, "git.subcommand"),
    "push": (L, "git.subcommand"), "save": (L, "git.subcommand"),
    "create": (L, "git.subcommand"), "store": (L, "git.subcommand"),
    "apply": (M, "git.subcommand"), "pop": (M, "git.subcommand"),
    "branch": (M, "git.subcommand"), "drop": (D, "git.discard-changes"),
    "clear": (D, "git.stash-clear"),
}
#: git subcommand options that name a program to run.
GIT_EXEC_OPTIONS: dict[str, frozenset[str]] = {
    "clone": frozenset({"--upload-pack", "-u"}),
    "fetch": frozenset({"--upload-pack"}), "pull": frozenset({"--upload-pack"}),
    "ls-remote": frozenset({"--upload-pack", "--exec"}),
    "push": frozenset({"--receive-pack", "--exec"}),
    "archive": frozenset({"--exec"}), "send-pack": frozenset({"--receive-pack", "--exec"}),
}
#: Linux capabilities that let a container escape (docker ``--cap-add``).
ESCAPE_CAPS = frozenset(
    "ALL SYS_ADMIN SYS_PTRACE SYS_MODULE DAC_READ_SEARCH DAC_OVERRIDE SYS_RAWIO BPF "
    "NET_ADMIN SYS_BOOT MKNOD".split()
)
#: Host paths whose mount into a container escapes it.
ESCAPE_MOUNTS = frozenset(
    "/var/run/docker.sock /run/docker.sock /var/run /run /proc /sys /dev /etc /root "
    "/var/lib/docker /run/containerd/containerd.sock /run/podman/podman.sock".split()
)
#: awk constructs that run commands or write files.
AWK_DANGER = re.compile(
    r"system\s*\(|getline|\|&|\|\s*\"|\bprintf?\b[^;{}\n]*(?:>|(?<!\|)\|(?!\|))|@load|@include"
)
#: ssh ``-o`` options that run a local command.
SSH_EXEC_OPTION = re.compile(
    r"(?i)^\s*(?:ProxyCommand|LocalCommand|PermitLocalCommand|KnownHostsCommand|"
    r"ProxyUseFdpass|Match|Include)\b"
)
#: ``ip`` subcommand words that change the system.
IP_CHANGES = frozenset("add del delete set flush change replace append exec".split())

# =============================================================================================
# Derived lookups, built once from the tables above.
# =============================================================================================

_new_reason = tuple.__new__  # Reason(...) without the NamedTuple wrapper's argument parsing
_new_call = tuple.__new__
_PROGRAMS: dict[str, tuple[Tier, str, str]] = {
    name: (tier, policy, f"{name} is {tier.label} in the program table")
    for tier, policy, names in PROGRAM_GROUPS
    for name in names.split()
}
_NAMED: dict[str, tuple[str, Tier]] = {
    name: (rule, tier) for rule, tier, names in NAMED_PROGRAMS for name in names.split()
}


class _Options:
    """A parsed option spec: short option chars / long options, with and without a value."""

    __slots__ = ("code_long", "code_short", "long_flags", "long_values", "short_flags",
                 "short_values", "versions")

    def __init__(self, code: str, values: str, versions: str = "", flags: str = "") -> None:
        self.code_short = frozenset(t for t in code.split() if not t.startswith("-"))
        self.code_long = frozenset(t for t in code.split() if t.startswith("-"))
        self.short_values = frozenset(t for t in values.split() if not t.startswith("-"))
        self.long_values = frozenset(t for t in values.split() if t.startswith("-"))
        self.short_flags = frozenset(t for t in flags.split() if not t.startswith("-"))
        self.long_flags = frozenset(t for t in flags.split() if t.startswith("-"))
        self.versions = frozenset(versions.split())


def _wrapper_options(spec: tuple[str, str, str, str, int, Tier]) -> _Options:
    short_values, long_values, short_flags, long_flags, _, _ = spec
    return _Options(
        "",
        " ".join([*short_values, *("--" + o for o in long_values.split())]),
        "",
        " ".join([*short_flags, *("--" + o for o in long_flags.split())]),
    )


_WRAPPER_OPTIONS = {name: _wrapper_options(spec) for name, spec in WRAPPERS.items()}
_FLAT_FLAG_TIERS = frozenset(key[0] for key in FLAG_TIERS if len(key) == 1)
_SHELL_OPTIONS = _Options(*SHELL_OPTIONS)
_INTERPRETER_OPTIONS = {name: _Options(*spec) for name, spec in INTERPRETERS.items()}
_RUNNER_OPTIONS = {
    key: (_Options(code, values, "", flags), operands)
    for key, (values, flags, code, operands) in RUNNERS.items()
}

_ROOT_TARGET = re.compile(r"^/+(?:\.\.?/+)*(?:\.\.?|\*|\.\*|\.\[!.\]\*)?/*$")
_HOME_TARGET = re.compile(r"^~[\w.-]*(?:/+(?:\.\.?/+)*(?:\.|\*|\.\*)?)?/*$")
_OTHER_HOME_TARGET = re.compile(r"^/+(?:home|Users)/+[^/*]+/*(?:\*|\.\*)?/*$|^/+root(?:/+\*?)?/*$")
_SYSTEM_TARGET = re.compile(
    r"^/+(?:" + "|".join(sorted(SYSTEM_DIRS)) + r")(?:/+(?:\*|\.\*)?)?/*$"
)
_UNSET_VAR_TARGET = re.compile(r"^\$\{?(?!HOME\b)[A-Za-z_]\w*\}?/+(?:\*|\.\*)?/*$")
_HOME_VAR = re.compile(r"^(?:\$HOME|\$\{HOME\})(?=/|$)")
_PWD_VAR = re.compile(r"^(?:\$PWD|\$\{PWD\}|\$\(pwd\)|`pwd`)(?=/|$)")
_SIMPLE_WORD = re.compile(r"^[\w@%+=:,./-]*$")

# path classes
# path classes; ELSEWHERE: relative to a directory `cd` went to that is not known
_P_PLAIN, _P_TMP, _P_HARMLESS, _P_DEVICE, _P_ABS, _P_HOME, _P_DYNAMIC, _P_ELSEWHERE = range(8)


class _Found:
    """The findings for one segment: its highest tier and the rules that reached it
    (``every``, when asked for, keeps lower findings too)."""

    __slots__ = ("every", "items", "tier")

    def __init__(self, keep_every: bool = False) -> None:
        self.tier: Tier = R
        self.items: list[tuple[str, str]] = []
        self.every: list[tuple[Tier, str, str]] | None = [] if keep_every else None

    def add(self, tier: Tier, rule: str, detail: str) -> None:
        if self.every is not None:
            self.every.append((tier, rule, detail))
        if tier > self.tier:
            self.tier = tier
            self.items = [(rule, detail)]
        elif tier == self.tier:
            self.items.append((rule, detail))


class _Call(NamedTuple):
    """One (possibly unwrapped) command: its words and the segment it came from."""

    seg: Segment
    words: tuple[str, ...]
    static: tuple[bool, ...]
    siblings: tuple[Segment, ...]
    depth: int

    def shifted(self, start: int) -> _Call:
        """The command that starts at word ``start`` (a wrapper's wrapped command)."""
        return _Call(self.seg, self.words[start:], self.static[start:], self.siblings, self.depth)

    def replaced(self, words: tuple[str, ...], static: tuple[bool, ...]) -> _Call:
        return _Call(self.seg, words, static, self.siblings, self.depth)


# =============================================================================================
# The classifier.
# =============================================================================================


def classify(
    command: str, *, program_overrides: Mapping[str, Tier] | None = None
) -> Assessment:
    """Classify a shell command. Pure, never raises: anything unexpected is destructive.

    ``program_overrides`` sets the tier of programs by name (settings ``[risk] programs``);
    it replaces what the tables say about that program, but destructive findings about its
    arguments (``rm -rf``, a force push, inline code, the rules in :data:`HARD_DENY_RULES`)
    and the checks on secrets, paths, privileges, redirects and pipes still apply.
    """
    try:
        return _classify(command, program_overrides)
    except RecursionError:
        return _failed(command, "parse.too-deep", "the command is nested too deeply to analyse")
    except Exception as error:  # fail closed on a classifier bug rather than raise
        return _failed(command, "internal.error", f"classifier error: {type(error).__name__}")


def _failed(command: object, rule: str, detail: str) -> Assessment:
    text = command if isinstance(command, str) else repr(command)
    return Assessment(D, (Reason(rule, _shorten(text), D, detail),), ())


def _shorten(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _classify(command: str, program_overrides: Mapping[str, Tier] | None) -> Assessment:
    parsed = fast_parse(command) if type(command) is str else None
    if parsed is None:
        parsed = parse(command, fast_path=type(command) is not str)
    if parsed.problems:
        return Assessment(
            D,
            tuple(
                Reason(p.code, p.text or _shorten(parsed.source), D, p.detail)
                for p in parsed.problems
            ),
            parsed.segments,
        )
    context = _Context(_overrides(program_overrides), parsed.functions)
    tier = context.run(parsed.segments, 0)
    return Assessment(tier, tuple(context.reasons), parsed.segments)


def _overrides(overrides: Mapping[str, Tier] | None) -> dict[str, tuple[Tier, str]]:
    """Validate overrides without raising: a value that is not a tier counts as destructive.
    Returns name → (tier, how to describe it)."""
    if not overrides:
        return {}
    result: dict[str, tuple[Tier, str]] = {}
    for name, value in overrides.items():
        tier: Tier | None = None
        if isinstance(value, Tier):
            tier = value
        elif isinstance(value, str):
            try:
                tier = Tier.parse(value)
            except ValueError:
                tier = None
        if tier is None:
            result[str(name)] = (D, f"{name}: invalid tier {value!r} in settings (treated as "
                                 "destructive)")
        else:
            result[str(name)] = (tier, f"{name} is {tier.label} by settings")
    return result


class _Context:
    """State of one classification: reasons found so far, functions, the working directory."""

    __slots__ = ("cwd", "defined", "functions", "overrides", "reasons")

    def __init__(
        self,
        overrides: dict[str, tuple[Tier, str]],
        functions: Mapping[str, tuple[str, ...]],
    ) -> None:
        self.overrides = overrides
        self.functions: Mapping[str, tuple[str, ...]] = functions
        self.defined: set[str] | frozenset[str] = _NO_NAMES  # a set once a function is defined
        self.reasons: list[Reason] = []
        # None: the project directory; "?": somewhere unknown; else the static path `cd`'d to
        self.cwd: str | None = None

    # -- segments --------------------------------------------------------------------------

    def run(self, segments: tuple[Segment, ...], depth: int) -> Tier:
        """Classify segments in order; return the highest tier (their reasons are recorded)."""
        top = R
        if depth > MAX_SUBSTITUTION_DEPTH:
            self.reasons.append(
                Reason("parse.too-deep", _shorten(segments[0].text) if segments else "", D,
                       f"nested deeper than {MAX_SUBSTITUTION_DEPTH} levels")
            )
            return D
        for segment in segments:
            tier = self.segment(segment, segments, depth)
            if tier > top:
                top = tier
        return top

    def segment(self, seg: Segment, siblings: tuple[Segment, ...], depth: int) -> Tier:
        (text, words, static, assignments, redirects, substitutions, _, _, _, _, kind,
         in_function) = seg
        top = R
        for substitution in substitutions:
            tier = self.run(substitution.segments, depth + 1)
            if tier > top:
                top = tier
        found = _Found()
        if kind == "command":
            self.command(found, _new_call(_Call, (seg, words, static, siblings, depth)))
        elif kind == "assignment":
            found.add(L, "shell.assignment", "sets a shell variable")
        elif kind == "declaration":
            self.declaration(found, seg)
        elif kind == "test":
            self.test(found, seg.words[1:])
        elif kind == "arithmetic":
            self.arithmetic(found, seg.words[1:])
        elif kind == "control":
            found.add(R, "shell.control", "a loop or case word list")
        else:
            found.add(R, "shell.redirect-only", "redirects without a command")
        if assignments:
            self.assignments(found, assignments)
        if redirects:
            self.redirects(found, seg)
        if in_function is not None:
            if not isinstance(self.defined, set):
                self.defined = set()
            self.defined.add(in_function)
        if "@P}" in text:
            found.add(D, "interpreter.eval", "${…@P} expands a prompt string, which runs $(…)")
        tier = found.tier
        items = found.items
        if len(items) == 1:
            rule, detail = items[0]
            self.reasons.append(_new_reason(Reason, (rule, text, tier, detail)))
        else:
            for rule, detail in dict.fromkeys(items):  # in order, without repeats
                self.reasons.append(_new_reason(Reason, (rule, text, tier, detail)))
        return tier if tier > top else top

    def nested(self, found: _Found, call: _Call, code: str, rule: str, what: str) -> Tier:
        """Classify shell code a command runs (``sh -c CODE``, ``watch CMD``, tar's
        ``--to-command``) one level deeper; its reasons are recorded, its tier returned."""
        parsed = parse(code, depth=call.depth + 1)
        if parsed.problems:
            for problem in parsed.problems:
                self.reasons.append(
                    Reason(problem.code, problem.text or _shorten(code), D, problem.detail)
                )
            found.add(D, rule, f"{what} cannot be analysed")
            return D
        if parsed.functions:
            self.functions = {**parsed.functions, **self.functions}
        saved = self.cwd  # the code runs in a child process: its `cd` does not leak out
        tier = self.run(parsed.segments, call.depth + 1)
        self.cwd = saved
        found.add(tier, rule, f"{what} runs {_shorten(code, 60)!r}")
        return tier

    # -- shell-level constructs ------------------------------------------------------------

    def assignments(self, found: _Found, assignments: Iterable[object]) -> None:
        for assignment in assignments:
            name: str = getattr(assignment, "name", "")
            value: str = getattr(assignment, "value", "")
            static: bool = getattr(assignment, "static", False)
            self.assignment(found, name, value, static)

    def assignment(self, found: _Found, name: str, value: str, static: bool) -> None:
        """``NAME=value`` before a command, bare, exported or given to ``env``."""
        base = name.partition("[")[0].rstrip("+")
        if base in PAGER_VARS:
            if not static or value.strip() not in SAFE_PAGERS:
                found.add(D, "env.exec-hook", f"{base} runs its value as a program")
        elif base in EXEC_HOOK_VARS or base.startswith(EXEC_HOOK_PREFIXES):
            found.add(D, "env.exec-hook", f"{base} makes programs run code of the caller's choice")
        elif base in TOOL_VARS:
            if not static or SAFE_TOOL.match(value.strip()) is None:
                found.add(D, "env.exec-hook", f"{base} names the compiler/tool builds will run")
        elif base in OPTION_VARS:
            if not static or OPTION_VARS[base].search(value) is not None:
                found.add(D, "env.exec-hook", f"{base} loads code into every process")
        elif base in PATH_VARS:
            found.add(H, "env.path", f"{base} changes where programs and their settings are found")
        if not static and SECRET_EXPANSION.search(value) is not None:
            found.add(H, "secret.env-var", "expands a variable named like a secret")

    def declaration(self, found: _Found, seg: Segment) -> None:
        """``export``/``declare``/``local``/``readonly``/``typeset``/``unset``."""
        words = seg.words
        keyword = words[0] if words else ""
        operands = [w for w in words[1:] if not w.startswith(("-", "+"))]
        flags = "".join(w[1:] for w in words[1:] if w.startswith(("-", "+")))
        if keyword in ("unset", "local"):
            found.add(L, "shell.declaration", f"{keyword} changes shell variables")
        elif not operands and not seg.assignments:
            if flags and set(flags) <= set("fF"):
                found.add(R, "shell.lookup", "lists shell functions")
            else:
                found.add(H, "env.dump", f"{keyword} without names prints variables (secrets)")
        else:
            found.add(L, "shell.declaration", f"{keyword} sets shell variables")
        for word, static in zip(words[1:], seg.static[1:], strict=False):
            if not static and SECRET_EXPANSION.search(word) is not None:
                found.add(H, "secret.env-var", "expands a variable named like a secret")

    def test(self, found: _Found, operands: tuple[str, ...]) -> None:
        """``[[ … ]]``: reading only, unless an arithmetic comparison evaluates code."""
        found.add(R, "shell.test", "a conditional test")
        text = " ".join(operands)
        if _ARITH_OPERATOR.search(text) is not None:
            self.arithmetic(found, operands)

    def arithmetic(self, found: _Found, operands: tuple[str, ...]) -> None:
        """``(( … ))``/``let``: an array subscript holding ``$(…)`` or backticks runs it."""
        text = " ".join(operands)
        if _ARITH_CODE.search(text) is not None:
            found.add(D, "shell.arith-injection", "arithmetic evaluates code in a subscript")
        else:
            found.add(R, "shell.arithmetic", "arithmetic on shell variables")

    # -- redirects and paths ---------------------------------------------------------------

    def redirects(self, found: _Found, seg: Segment) -> None:
        for redirect in seg.redirects:
            op = redirect.op
            if op in ("<<", "<<-", "<<<") or op.endswith("-"):
                continue  # stdin text (interpreters check it) or closing a descriptor
            target = redirect.target
            if op in (">&", "<&") and (target.isdigit() or target == "-"):
                continue  # duplicating a descriptor
            if op in ("<", "<&"):
                self.read_path(found, target, redirect.static)
                continue
            self.write_target(found, target, redirect.static, "redirect", op == ">>" or
                              op == "&>>")

    def path_class(self, word: str, static: bool) -> int:
        """Where a path argument points: project, /tmp, a device, absolute, home, unknown."""
        if not word:
            return _P_PLAIN
        first = word[0]
        if first == "/":
            return _absolute_class(word)
        if first == "~" or _HOME_VAR.match(word) is not None:
            return _P_HOME
        if not static and first in "$`":
            pwd = _PWD_VAR.match(word)
            if pwd is None:
                return _P_DYNAMIC
            word = "." + word[pwd.end() :]
        cwd = self.cwd
        if cwd is None:
            return _P_PLAIN
        if cwd == "?":
            return _P_ELSEWHERE
        if cwd.startswith("~"):
            return _P_HOME
        return _absolute_class(cwd.rstrip("/") + "/" + word)

    def read_path(self, found: _Found, word: str, static: bool) -> None:
        """A file a content reader reads: secrets and outside-project paths are high.
        A lone ``/`` is a separator argument (``cut -d /``, ``tr / _``), not a file."""
        if word == "/":
            return
        if (
            static
            and self.cwd is None
            and word[0] not in "~."
            and "/" not in word
            and "_" not in word
            and word.rpartition(".")[2] not in SECRET_EXTENSIONS
            and word not in SECRET_NAMES
        ):
            return  # a plain file name in the project (the commonest case): nothing to check
        if _is_secret(word, static):
            found.add(H, "secret.read", f"reads {word!r}, which looks like a secret")
            return
        kind = self.path_class(word, static)
        if kind in (_P_ABS, _P_HOME, _P_DEVICE, _P_ELSEWHERE) and word not in HARMLESS_READ_PATHS:
            found.add(H, "read.outside-project", f"reads {word!r} outside the project")

    def write_target(
        self, found: _Found, word: str, static: bool, what: str, append: bool = False
    ) -> None:
        """A file a command writes. ``what`` is ``redirect`` (which sets the base tier for a
        project file) or a program name (whose own tier covers project files)."""
        kind = self.path_class(word, static)
        if kind == _P_HARMLESS:
            return
        if kind == _P_DEVICE:
            found.add(D, "write.device", f"writes to the raw device {word!r}")
        elif PROTECTED_PATH.search(word) is not None:
            found.add(H, "write.protected", f"writes {word!r}, which can loosen the jail or "
                      "run code later")
        elif kind == _P_HOME:
            found.add(H, "write.home", f"writes {word!r} in the home directory")
        elif kind == _P_ABS:
            found.add(H, "write.outside-project", f"writes {word!r} outside the project")
        elif kind in (_P_DYNAMIC, _P_ELSEWHERE):
            found.add(H, "write.dynamic", f"writes to {word!r}, which is only known at run time")
        elif kind == _P_TMP:
            found.add(L, "write.tmp", f"writes {word!r} under /tmp")
        elif what == "redirect":
            if append:
                found.add(L, "redirect.append", f"appends to {word!r}")
            else:
                found.add(M, "redirect.overwrite", f"overwrites {word!r}")
        if _is_secret(word, static):
            found.add(H, "secret.read", f"writes or copies {word!r}, which looks like a secret")

    def check_paths(
        self, found: _Found, call: _Call, policy: str, skip_operands: int = 0
    ) -> None:
        """Apply a program's argument policy (see PROGRAM_GROUPS) to its arguments."""
        words = call.words
        static = call.static
        if (policy == "none" or policy == "meta") and False not in static:
            return  # no argument policy, nothing expands
        options_done = skip_value = False
        for index in range(1, len(words)):
            word = words[index]
            is_static = static[index]
            if not is_static and "$" in word and SECRET_EXPANSION.search(word) is not None:
                found.add(H, "secret.env-var", "expands a variable named like a secret")
            if policy == "none" or policy == "meta":
                continue
            if skip_value:
                skip_value = False
                continue
            if not options_done and word[:1] == "-" and len(word) > 1:
                if word == "--":
                    options_done = True
                    continue
                if policy == "search" and (word in _SEARCH_VALUE_OPTIONS or (
                        word[1] != "-" and word[-1] in _SEARCH_VALUE_CHARS)):
                    skip_value = True
                    continue
                _, eq, value = word.partition("=")
                if not eq or not value:
                    continue
                word = value
            elif skip_operands > 0:
                skip_operands -= 1
                continue
            if policy == "write":
                self.write_target(found, word, is_static, words[0])
            else:
                self.read_path(found, word, is_static)

    # -- commands --------------------------------------------------------------------------

    def command(self, found: _Found, call: _Call) -> None:
        """Resolve the command word (paths, functions, overrides) and classify the command."""
        words = call.words
        if not words:
            found.add(R, "wrapper.no-command", "nothing to run")
            return
        name = words[0]
        if not call.static[0]:
            found.add(D, "command.dynamic", f"the command word {name!r} is only known at run time")
            return
        key = name
        if "/" in name:
            directory, _, base = name.rpartition("/")
            if directory not in SYSTEM_BIN_DIRS and TOOL_BIN_DIR.match(directory) is None:
                self.path_executable(found, call, name)
                return
            key = base
        if key in self.functions:
            if call.seg.in_function == key:
                found.add(D, "shell.fork-bomb", f"function {key!r} calls itself")
                return
            if key in self.defined:
                found.add(R, "shell.function-call", f"calls the function {key!r} defined above")
                if not _known(key):
                    return
        if not self.overrides:
            entry = _PLAIN_PROGRAMS.get(key)
            if entry is not None:  # the commonest case, without the dispatch below
                self.table_program(found, call, key, entry)
                return
        override = self.overrides.get(key) if self.overrides else None
        if override is None and key not in _KNOWN:
            versioned = VERSIONED.match(key)
            if versioned is not None:
                key = versioned.group(1)
                override = self.overrides.get(key)
        if override is not None:
            self.overridden(found, call, key, *override)
        else:
            self.program(found, call, key)

    def program(self, found: _Found, call: _Call, key: str) -> None:
        entry = _PLAIN_PROGRAMS.get(key)
        if entry is not None:
            self.table_program(found, call, key, entry)
            return
        handler = _HANDLERS.get(key)
        if handler is not None:
            handler(self, found, call, key)
            return
        named = _NAMED.get(key)
        if named is not None or key.startswith("mkfs."):
            rule, tier = named if named is not None else ("disk.mkfs", D)
            found.add(tier, rule, f"{key} is {tier.label}")
            return
        entry = _PROGRAMS.get(key)
        if entry is not None:
            self.table_program(found, call, key, entry)
            return
        table = SUBCOMMANDS.get(key)
        if table is not None:
            self.subcommand(found, call, key, table)
            return
        runner = TOP_LEVEL_RUNNERS.get(key)
        if runner is not None:
            self.runner(found, call, runner[0], runner[1], 1)
            return
        found.add(D, "program.unknown", f"{key!r} is not in the program table (unknown programs "
                  "are destructive; settings [risk] programs can set its tier)")

    def table_program(
        self, found: _Found, call: _Call, key: str, entry: tuple[Tier, str, str]
    ) -> None:
        """A PROGRAM_GROUPS entry: its tier, version-only invocations, flag tiers, the
        argument policy."""
        words = call.words
        tier, policy, detail = entry
        if len(words) == 2 and words[1] in _VERSION_FLAGS:
            found.add(R, "program.version", f"{key} {words[1]} only prints information")
            return
        modifiers = FLAG_TIERS.get((key,)) if key in _FLAT_FLAG_TIERS else None
        if modifiers is not None:
            modified = _modified(tier, modifiers, words, 1)
            if modified != tier:
                tier, detail = modified, f"{key} is {modified.label} with these options"
        found.add(tier, "program.table", detail)
        if len(words) > 1:
            skip = 0
            if policy == "search":
                skip = 0 if _has_pattern_option(words) else 1
            self.check_paths(found, call, policy, skip)
            if key in EXEC_OPTIONS:
                self.exec_options(found, call, key)

    def exec_options(self, found: _Found, call: _Call, key: str) -> None:
        """EXEC_OPTIONS: options whose value is a command the program runs."""
        options = EXEC_OPTIONS[key]
        words = call.words
        for index in range(1, len(words)):
            word = words[index]
            if word[:1] == "+" and key in ("less", "more") and ("!" in word or "|" in word):
                found.add(D, "interpreter.inline-code", f"{key} {word} runs a shell command")
                continue
            name, eq, value = word.partition("=")
            use = options.get(name)
            if use is None and len(word) > 2 and word[:2] in options and word[1] != "-":
                use, value, eq = options[word[:2]], word[2:], "="  # `-Pcmd`
            if use is None:
                continue
            if eq:
                text, static = value, call.static[index]
            elif index + 1 < len(words):
                text, static = words[index + 1], call.static[index + 1]
            else:
                continue
            self.embedded(found, call, text, static, f"{key} {name}")

    def overridden(self, found: _Found, call: _Call, key: str, tier: Tier, why: str) -> None:
        """Settings set this program's tier. What the arguments do still counts: destructive
        findings (force push, ``rm -rf``, inline code…) and the checks on secrets, paths,
        privileges and pipes are kept; only the program's own tier is replaced."""
        tables = _Found(keep_every=True)
        self.program(tables, call, key)
        found.add(tier, "program.override", why)
        self.secret_arguments(found, call)
        for rule_tier, rule, detail in tables.every or ():
            if (rule_tier == D and rule not in _OVERRIDABLE) or rule.startswith(
                    _NEVER_OVERRIDDEN):
                found.add(rule_tier, rule, detail)

    def path_executable(self, found: _Found, call: _Call, name: str) -> None:
        """``./script``, ``bin/tool``, ``/opt/x/bin/y``: code from a path, not a known program."""
        if name[0] not in "/~$" and self.cwd is None:
            found.add(M, "command.project-executable", f"runs the project's {name!r}")
        else:
            found.add(H, "command.outside-executable", f"runs {name!r} from outside the project")
        self.check_paths(found, call, "none")

    def wrapped(self, found: _Found, call: _Call, start: int, floor: Tier, what: str) -> None:
        """Classify the command a wrapper runs (``words[start:]``), at least at ``floor``."""
        if start >= len(call.words):
            found.add(R, "wrapper.no-command", f"{what} without a command runs nothing")
            return
        if floor > R:
            found.add(floor, "program.table", f"{what} is at least {floor.label}")
        self.command(found, call.shifted(start))

    def wrapper(self, found: _Found, call: _Call, key: str) -> None:
        """A WRAPPERS entry: skip its options and operands, classify what it runs."""
        spec = WRAPPERS[key]
        start = _skip_options(call.words, 1, _WRAPPER_OPTIONS[key], spec[4])
        if start < 0:
            found.add(D, "wrapper.unknown-option", f"{key}: an option we cannot parse")
            return
        self.wrapped(found, call, start, spec[5], key)

    def subcommand(self, found: _Found, call: _Call, key: str, table: SubTable) -> None:
        """Walk a SUBCOMMANDS table (``gh pr create``, ``docker compose up``)."""
        words = call.words
        count = len(words)
        value_options = SUBCOMMAND_VALUE_OPTIONS.get(key, _NO_OPTIONS)
        path = [key]
        node = table
        value: Tier | str | SubTable = D
        index = 1
        while True:
            while index < count:
                word = words[index]
                if word[:1] not in "-+" or len(word) < 2 or word in node:
                    break
                if node is table and word in _VERSION_FLAGS:
                    found.add(R, "program.version", f"{key} {word} only prints information")
                    return
                index += 2 if word in value_options else 1
            if index >= count:
                value = node.get("", node.get("*", D))
                path.append("")
                break
            if not call.static[index]:
                found.add(D, "subcommand.dynamic",
                          f"{' '.join(words[:index])}: subcommand only known at run time")
                return
            sub = words[index]
            listed = node.get(sub)
            if listed is None:
                default = node.get("*")
                if default is None:
                    found.add(D, "subcommand.unknown", f"{' '.join(words[: index + 1])}: not in "
                              "the subcommand table (may be a plugin or alias)")
                    return
                value = default
                path.append("*")
                break
            value = listed
            path.append(sub)
            index += 1
            if not isinstance(value, dict):
                break
            node = value
        shown = " ".join(words[:index]) if path[-1] != "*" else f"{' '.join(words[:index])} …"
        if isinstance(value, Tier):
            modifiers = FLAG_TIERS.get(tuple(path))
            tier = value if modifiers is None else _modified(value, modifiers, words, 1)
            found.add(tier, "subcommand.table", f"{shown} is {tier.label}")
            self.secret_arguments(found, call)
        elif value == "@run" or value == "@fetch":
            self.runner(found, call, tuple(p for p in path if p), L if value == "@run" else H,
                        index)
        elif value == "@script":
            self.package_script(found, call, index, " ".join(words[:index]))
        elif value == "@code":
            found.add(D, "interpreter.inline-code", f"{shown} runs inline code")
        elif value == "@file":
            self.script(found, call, _first_operand(words, index), shown)
        elif value == "@repl":
            found.add(D, "interpreter.stdin", f"{shown} reads code from the terminal")
        elif value == "@gh-api":
            self.gh_api(found, call, index)
        elif value == "@docker-run":
            self.docker_run(found, call, index)
        else:  # a nested table reached without a subcommand (never in the shipped tables)
            found.add(D, "subcommand.unknown", f"{shown}: incomplete subcommand")

    def secret_arguments(self, found: _Found, call: _Call) -> None:
        """Any argument (or ``--opt=value``) naming a secret file raises the tier to high."""
        for word, static in zip(call.words[1:], call.static[1:], strict=False):
            value = word.partition("=")[2] if word[:1] == "-" else word
            if value and _is_secret(value, static):
                found.add(H, "secret.read", f"uses {value!r}, which looks like a secret")
            elif not static and "$" in word and SECRET_EXPANSION.search(word) is not None:
                found.add(H, "secret.env-var", "expands a variable named like a secret")

    def runner(
        self, found: _Found, call: _Call, key: tuple[str, ...], floor: Tier, start: int
    ) -> None:
        """``npx tsc``, ``uv run pytest``, ``poetry run x``: classify what the runner runs."""
        options, operands = _RUNNER_OPTIONS.get(key, (_NO_RUNNER_OPTIONS, 0))
        words = call.words
        count = len(words)
        index = start
        module = False
        what = " ".join(key)
        while index < count:
            word = words[index]
            if word == "--":
                index += 1
                break
            if word[:1] != "-" or len(word) < 2:
                break
            name = word.partition("=")[0]
            if name in options.code_long or (name[1:] in options.code_short and len(name) == 2):
                found.add(D, "interpreter.inline-code", f"{what} {word} runs a shell command")
                if index + 1 < count and call.static[index + 1]:
                    self.nested(found, call, words[index + 1], "interpreter.inline-code", what)
                return
            if name in ("-m", "--module") and key[-1] == "run" and key[0] == "uv":
                module = True
                index += 1
            elif name in options.long_values or (len(name) == 2 and name[1:] in
                                                 options.short_values):
                index += 1 if "=" in word else 2
            elif name in options.long_flags or (len(name) == 2 and name[1:] in
                                                options.short_flags):
                index += 1
            else:
                found.add(D, "wrapper.unknown-option", f"{what}: option {word!r} we cannot parse")
                return
        index += operands
        if index >= count:
            found.add(R, "wrapper.no-command", f"{what} without a command")
            return
        if module:
            replaced = call.replaced(("python", "-m", *words[index:]),
                                     (True, True, *call.static[index:]))
            found.add(floor, "program.table", f"{what} is at least {floor.label}")
            self.command(found, replaced)
        elif words[index].endswith(".py") and call.static[index]:
            found.add(floor, "program.table", f"{what} is at least {floor.label}")
            self.command(found, call.replaced(("python", *words[index:]),
                                              (True, *call.static[index:])))
        else:
            self.wrapped(found, call, index, floor, what)

    def package_script(self, found: _Found, call: _Call, index: int, shown: str) -> None:
        """``npm run build``: project scripts are low; ones that ship things are high."""
        position = _first_operand(call.words, index)
        if position >= len(call.words):
            found.add(R, "npm.script", f"{shown} lists the scripts")
            return
        name = call.words[position]
        if not call.static[position]:
            found.add(D, "subcommand.dynamic", f"{shown}: script name only known at run time")
        elif SHIPPING_SCRIPT.search(name) is not None:
            found.add(H, "npm.script", f"{shown} {name}: scripts that deploy/publish are high")
        else:
            found.add(L, "npm.script", f"{shown} {name} runs a project script")
        self.secret_arguments(found, call)

    def script(self, found: _Found, call: _Call, index: int, what: str) -> None:
        """An interpreter runs the script file ``words[index]``."""
        words = call.words
        if index >= len(words):
            found.add(D, "interpreter.stdin", f"{what} reads code from stdin or the terminal")
            return
        path = words[index]
        if not call.static[index]:
            found.add(D, "interpreter.dynamic-script", f"{what} runs {path!r}, only known at "
                      "run time")
            if self.download_fed(call):
                found.add(D, "download.pipe-to-shell", f"{what} runs downloaded code")
            return
        if path in _STDIN_PATHS:
            self.stdin_code(found, call, what)
            return
        kind = self.path_class(path, True)
        if kind == _P_PLAIN:
            found.add(M, "interpreter.script", f"{what} runs the project script {path!r}")
        else:
            found.add(H, "interpreter.outside-script", f"{what} runs {path!r} from outside the "
                      "project")

    # -- interpreters ----------------------------------------------------------------------

    def stdin_code(self, found: _Found, call: _Call, what: str) -> None:
        """An interpreter reads its code from stdin: a heredoc, a here-string, a file, a pipe
        or the terminal. Shell code we can read is classified too (for its reasons)."""
        seg = call.seg
        shell = _base_name(call.words[0]) in SHELLS
        source: Redirect | None = None
        for redirect in seg.redirects:
            if redirect.op in ("<<", "<<-", "<<<", "<") and redirect.fd in (None, 0):
                source = redirect
        if source is not None and source.op == "<":
            path = source.target
            if not source.static:
                found.add(D, "interpreter.dynamic-script", f"{what} runs {path!r}, only known "
                          "at run time")
            elif path in _STDIN_PATHS or path.startswith("/dev/fd/"):
                found.add(D, "interpreter.stdin", f"{what} reads code from {path!r}")
            elif self.path_class(path, True) == _P_PLAIN:
                found.add(M, "interpreter.script", f"{what} runs the project script {path!r}")
            else:
                found.add(H, "interpreter.outside-script", f"{what} runs {path!r} from outside "
                          "the project")
        elif source is not None:
            if source.op == "<<<":
                code, readable = source.target, source.static
            else:
                code = source.body or ""
                readable = "'" in source.target or '"' in source.target or "\\" in source.target
                readable = readable or _EXPANDS_IN_HEREDOC.search(code) is None
            found.add(D, "interpreter.stdin", f"{what} runs the text on its stdin as code")
            if shell and readable:
                self.nested(found, call, code, "interpreter.stdin", f"the code {what} reads")
        elif seg.fed_by:
            found.add(D, "pipe.to-interpreter", f"a pipe feeds {what}, which runs it as code")
        else:
            found.add(D, "interpreter.stdin", f"{what} reads code from stdin or the terminal")
        if self.download_fed(call):
            found.add(D, "download.pipe-to-shell", f"{what} runs downloaded code")

    def download_fed(self, call: _Call) -> bool:
        """Does downloaded content reach this command: through a pipe into it, or through a
        substitution in its arguments or heredoc (``sh -c "$(curl …)"``, ``bash <(wget …)``)?"""
        seg = call.seg
        looked = 0
        for span in seg.fed_by:
            for index in span:
                looked += 1
                if looked > _MAX_FEEDERS or _has_download(call.siblings[index]):
                    return True
        return any(_tree_has_download(sub.segments) for sub in seg.substitutions)

    def shell(self, found: _Found, call: _Call, key: str) -> None:
        """``sh``/``bash``/…: inline code (``-c``), stdin (``-s``, ``-``, none) or a script."""
        words = call.words
        count = len(words)
        options = _SHELL_OPTIONS
        inline = stdin = version = noexec = False
        code: str | None = None
        code_static = True
        index = 1
        while index < count:
            word = words[index]
            if word in ("-", "--"):
                index += 1
                break
            if word[:1] not in "-+" or len(word) < 2:
                break
            if word.startswith("--"):
                name, eq, value = word.partition("=")
                if name in options.code_long:
                    inline = True
                    if eq:
                        code, code_static = value, call.static[index]
                elif name in options.long_values and not eq:
                    index += 1
                version = version or name in options.versions
                index += 1
                continue
            takes_value = False
            for position, char in enumerate(word[1:], 1):
                if char in options.code_short:
                    inline = True
                elif char in options.short_values:
                    takes_value = position == len(word) - 1
                    break
                elif char == "s":
                    stdin = True
                elif char == "n" and word[0] == "-":
                    noexec = True
            version = version or word in options.versions
            index += 2 if takes_value else 1
        if noexec:
            found.add(R, "program.version", f"{key} -n only checks syntax")
            return
        if inline:
            if code is None and index < count:
                code, code_static = words[index], call.static[index]
            found.add(D, "interpreter.inline-code", f"{key} -c runs inline shell code")
            if code is not None and code_static:
                self.nested(found, call, code, "interpreter.inline-code", f"{key} -c code")
            elif self.download_fed(call):
                found.add(D, "download.pipe-to-shell", f"{key} -c runs downloaded code")
            return
        if version and index >= count:
            found.add(R, "program.version", f"{key} {words[-1]} only prints information")
        elif stdin or index >= count:
            self.stdin_code(found, call, key)
        else:
            self.script(found, call, index, key)

    def interpreter(self, found: _Found, call: _Call, key: str) -> None:
        """python, node, perl, ruby, …: inline code, a module, a script or stdin."""
        options = _INTERPRETER_OPTIONS[key]
        module_char = "m" if key in ("python", "pypy", "ipython") else ""
        words = call.words
        count = len(words)
        code: str | None = None
        code_static = True
        module: int = -1
        module_name = ""
        module_static = True
        version = stdin = False
        index = 1
        while index < count:
            word = words[index]
            if word == "-":
                stdin = True
                break
            if word == "--":
                index += 1
                break
            if word[:1] != "-" or len(word) < 2:
                break
            version = version or word in options.versions
            if word.startswith("--"):
                name, eq, value = word.partition("=")
                if name in options.code_long:
                    if eq:
                        code, code_static = value, call.static[index]
                    elif index + 1 < count:
                        code, code_static = words[index + 1], call.static[index + 1]
                    else:
                        code = ""
                    break
                index += 2 if name in options.long_values and not eq else 1
                continue
            rest_is_value = False
            for position, char in enumerate(word[1:], 1):
                if char in options.code_short or char == module_char:
                    attached = word[position + 1 :]
                    if attached:
                        value_word, value_static = attached, call.static[index]
                    elif index + 1 < count:
                        value_word, value_static = words[index + 1], call.static[index + 1]
                        index += 1
                    else:
                        value_word, value_static = "", True
                    if char == module_char:
                        module = index
                        code = None
                        module_name = value_word
                        module_static = value_static
                    else:
                        code, code_static = value_word, value_static
                    rest_is_value = True
                    break
                if char in options.short_values:
                    if position == len(word) - 1:
                        index += 1
                    rest_is_value = True
                    break
            if rest_is_value and (code is not None or module >= 0):
                break
            index += 1
        checks = SYNTAX_CHECK_OPTIONS.get(key)
        if checks is not None and any(word in checks for word in words[1:index + 1]):
            found.add(R, "program.version", f"{key}: a syntax check runs nothing")
        elif code is not None:
            found.add(D, "interpreter.inline-code", f"{key} runs inline code")
            if not code_static and self.download_fed(call):
                found.add(D, "download.pipe-to-shell", f"{key} runs downloaded code")
        elif module >= 0:
            self.python_module(found, call, module_name, module_static, module + 1)
        elif key == "node" and "--test" in words:
            found.add(L, "program.table", "node --test runs the project's tests")
        elif version and not stdin and index >= count:
            found.add(R, "program.version", f"{key} {words[-1]} only prints information")
        elif stdin or index >= count:
            self.stdin_code(found, call, key)
        else:
            self.script(found, call, index, key)

    def python_module(
        self, found: _Found, call: _Call, module: str, static: bool, rest: int
    ) -> None:
        """``python -m MODULE``: a tier from PYTHON_MODULES, or the program the module is."""
        if not static:
            found.add(D, "subcommand.dynamic", "python -m: module only known at run time")
            return
        entry = PYTHON_MODULES.get(module)
        if entry is None and module.endswith(".__main__"):
            entry = PYTHON_MODULES.get(module[: -len(".__main__")])
        if isinstance(entry, str):
            self.command(found, call.replaced((entry, *call.words[rest:]),
                                              (True, *call.static[rest:])))
        elif entry is not None:
            found.add(entry, "python.module", f"python -m {module} is {entry.label}")
            self.secret_arguments(found, call)
        else:
            found.add(H, "python.unknown-module", f"python -m {module}: a module not in the "
                      "table runs arbitrary code")

    def eval_(self, found: _Found, call: _Call, key: str) -> None:
        """``eval ARGS``: the joined arguments are shell code."""
        found.add(D, "interpreter.eval", "eval runs its arguments as shell code")
        if len(call.words) > 1 and all(call.static[1:]):
            self.nested(found, call, " ".join(call.words[1:]), "interpreter.eval", "eval code")
        elif self.download_fed(call):
            found.add(D, "download.pipe-to-shell", "eval runs downloaded code")

    def source(self, found: _Found, call: _Call, key: str) -> None:
        """``source FILE``/``. FILE`` runs the file in this shell; venv activation is medium."""
        words = call.words
        if len(words) > 1 and call.static[1] and VENV_ACTIVATE.match(words[1]) is not None:
            found.add(M, "interpreter.source-venv", f"{key} {words[1]} activates a virtualenv")
            return
        found.add(D, "interpreter.source", f"{key} runs a file's code in the current shell")
        if self.download_fed(call):
            found.add(D, "download.pipe-to-shell", f"{key} runs downloaded code")

    # -- wrappers with their own syntax ----------------------------------------------------

    def env(self, found: _Found, call: _Call, key: str) -> None:
        """``env [-i] [-u N] [-C DIR] [-S STR] [NAME=V]… [CMD…]``; bare ``env`` dumps secrets."""
        words = call.words
        count = len(words)
        index = 1
        while index < count:
            word = words[index]
            if word in ("-", "-i", "--ignore-environment", "-0", "--null", "-v", "--debug"):
                index += 1
            elif word in ("-u", "--unset", "-C", "--chdir"):
                index += 2
            elif word.startswith(("--unset=", "--chdir=", "--block-signal", "--default-signal",
                                  "--ignore-signal", "--list-signal-handling")) or (
                word[:2] in ("-u", "-C") and len(word) > 2
            ):
                index += 1
            elif word in ("-S", "--split-string") or word.startswith(("--split-string=", "-S")):
                if word in ("-S", "--split-string"):
                    text, static, index = (words[index + 1] if index + 1 < count else "",
                                           index + 1 >= count or call.static[index + 1],
                                           index + 2)
                else:
                    text = word.partition("=")[2] if word.startswith("--") else word[2:]
                    static, index = call.static[index], index + 1
                if not static:
                    found.add(D, "command.dynamic", "env -S: the command is only known at run "
                              "time")
                    return
                split = parse(text, depth=call.depth + 1)
                if split.problems or len(split.segments) != 1 or not split.segments[0].words:
                    self.nested(found, call, text, "command.dynamic", "env -S string")
                    found.add(D, "command.dynamic", "env -S string is not one simple command")
                    return
                inner = split.segments[0]
                self.assignments(found, inner.assignments)
                self.command(found, call.replaced(inner.words + words[index:],
                                                  inner.static + call.static[index:]))
                return
            elif "=" in word and word[:1] != "-" and _ENV_NAME.match(word) is not None:
                name, _, value = word.partition("=")
                self.assignment(found, name, value, call.static[index])
                index += 1
            elif word[:1] == "-" and len(word) > 1:
                found.add(D, "wrapper.unknown-option", f"env: option {word!r} we cannot parse")
                return
            else:
                break
        if index >= count:
            found.add(H, "env.dump", "env without a command prints every variable (secrets)")
            return
        self.command(found, call.shifted(index))

    def command_builtin(self, found: _Found, call: _Call, key: str) -> None:
        """``command -v x`` looks a name up; ``command [-p] x …`` runs x."""
        words = call.words
        index = 1
        while index < len(words) and words[index][:1] == "-" and len(words[index]) > 1:
            if words[index] == "--":
                index += 1
                break
            if set(words[index][1:]) & {"v", "V"}:
                found.add(R, "shell.lookup", f"{key} {words[index]} only looks names up")
                return
            if set(words[index][1:]) - {"p"}:
                found.add(D, "wrapper.unknown-option", f"{key}: option {words[index]!r}")
                return
            index += 1
        self.wrapped(found, call, index, R, key)

    def exec_(self, found: _Found, call: _Call, key: str) -> None:
        """``exec CMD`` replaces the shell with CMD; bare ``exec`` only applies redirects."""
        if len(call.words) == 1:
            found.add(R, "shell.redirect-only", "exec applies its redirects to the shell")
            return
        self.wrapper(found, call, key)

    def lookup(self, found: _Found, call: _Call, key: str) -> None:
        """``type``, ``hash``: name lookups; ``hash -p PATH NAME`` rebinds a name."""
        if key == "hash" and any(w.startswith("-") and "p" in w for w in call.words[1:]):
            found.add(D, "command.dynamic", "hash -p makes a program name run another file")
            return
        found.add(R, "shell.lookup", f"{key} only looks names up")

    def privileged(self, found: _Found, call: _Call, key: str) -> None:
        """sudo/doas/su/pkexec…: destructive whatever they run; the wrapped command is still
        classified so its own rules (``rm -rf /``) are reported too."""
        rule, tier = _NAMED[key]
        found.add(tier, rule, f"{key} runs a command with other privileges")
        words = call.words
        index = 1
        while index < len(words):
            word = words[index]
            if word == "--":
                index += 1
                break
            if key == "su" and word in ("-c", "--command") and index + 1 < len(words):
                if call.static[index + 1]:
                    self.nested(found, call, words[index + 1], rule, "su -c code")
                return
            if word[:1] != "-" and "=" not in word:
                break
            index += 2 if word in _PRIVILEGE_VALUE_OPTIONS else 1
        if index < len(words) and key != "su":
            self.command(found, call.shifted(index))

    def busybox(self, found: _Found, call: _Call, key: str) -> None:
        """``busybox APPLET args``: classify the applet like the program of the same name."""
        if len(call.words) == 1 or call.words[1].startswith("-"):
            found.add(R, "program.table", "busybox without an applet lists its applets")
            return
        self.command(found, call.shifted(1))

    def xargs(self, found: _Found, call: _Call, key: str) -> None:
        """``xargs [opts] CMD args``: CMD runs with arguments read from stdin (unknown words,
        possibly flags), so they are classified as dynamic."""
        words = call.words
        count = len(words)
        index = 1
        replace: str | None = None
        while index < count:
            word = words[index]
            if word == "--":
                index += 1
                break
            if word[:1] != "-" or len(word) < 2:
                break
            if word.startswith("--"):
                name, eq, value = word.partition("=")
                if name == "--replace":
                    replace = value if eq else "{}"
                elif name in _XARGS_LONG_VALUES and not eq:
                    index += 1
                elif name not in _XARGS_LONG_VALUES and name not in _XARGS_LONG_FLAGS:
                    found.add(D, "wrapper.unknown-option", f"xargs: option {word!r}")
                    return
                index += 1
                continue
            char = word[1]
            rest = word[2:]
            if char in "IadELnPs" and not rest:
                if char == "I" and index + 1 < count:
                    replace = words[index + 1]
                index += 2
                continue
            if char == "I":
                replace = rest
            elif char == "i":
                replace = rest or "{}"
            elif char not in "adELnPsel" and not set(word[1:]) <= set("0rtpxo"):
                found.add(D, "wrapper.unknown-option", f"xargs: option {word!r}")
                return
            index += 1
        if index >= count:
            found.add(R, "program.table", "xargs without a command runs echo")
            return
        inner_words = list(words[index:])
        inner_static = list(call.static[index:])
        if replace:
            for position, word in enumerate(inner_words):
                if position and replace in word:
                    inner_words[position] = word.replace(replace, "$XARGS")
                    inner_static[position] = False
        else:
            inner_words.append("$XARGS")
            inner_static.append(False)
        self.command(found, call.replaced(tuple(inner_words), tuple(inner_static)))

    def watch(self, found: _Found, call: _Call, key: str) -> None:
        """``watch [opts] CMD…``: without ``-x`` the words are joined and run by ``sh -c``."""
        words = call.words
        index = 1
        exec_mode = False
        while index < len(words) and words[index][:1] == "-" and len(words[index]) > 1:
            word = words[index]
            if word == "--":
                index += 1
                break
            if word in ("-n", "--interval", "-q", "--equexit"):
                index += 1
            elif word in ("-x", "--exec"):
                exec_mode = True
            elif not (word.startswith(("--interval=", "--differences", "--equexit=")) or
                      word.lstrip("-") in _WATCH_FLAGS or
                      (word[1] in "nq" and word[2:].replace(".", "").isdigit())):
                found.add(D, "wrapper.unknown-option", f"watch: option {word!r}")
                return
            index += 1
        if index >= len(words):
            found.add(R, "wrapper.no-command", "watch without a command")
        elif exec_mode:
            self.command(found, call.shifted(index))
        elif all(call.static[index:]):
            self.nested(found, call, " ".join(words[index:]), "shell.nested-code", "watch")
        else:
            found.add(D, "command.dynamic", "watch: the command is only known at run time")

    def flock(self, found: _Found, call: _Call, key: str) -> None:
        """``flock [opts] FILE CMD…`` or ``flock [opts] FILE -c 'CMD'``."""
        words = call.words
        index = 1
        operand_seen = False
        while index < len(words):
            word = words[index]
            if word in ("-c", "--command"):
                if index + 1 < len(words) and call.static[index + 1]:
                    self.nested(found, call, words[index + 1], "shell.nested-code", "flock -c")
                else:
                    found.add(D, "command.dynamic", "flock -c: command only known at run time")
                return
            if word in ("-w", "--timeout", "-E", "--conflict-exit-code"):
                index += 2
            elif word[:1] == "-" and len(word) > 1:
                index += 1
            elif not operand_seen:
                operand_seen = True
                index += 1
            else:
                break
        self.wrapped(found, call, index, L, "flock")

    def cd(self, found: _Found, call: _Call, key: str) -> None:
        """``cd``/``pushd``: read-only, but later relative paths resolve where it went."""
        found.add(R, "program.table", f"{key} changes the working directory")
        operands = [(w, s) for w, s in zip(call.words[1:], call.static[1:], strict=False)
                    if not (w[:1] == "-" and len(w) > 1)]
        if not operands:
            self.cwd = "~" if key == "cd" else "?"
            return
        target, static = operands[0]
        if not static and _HOME_VAR.match(target) is None:
            self.cwd = "?"
        elif target[:1] in "/~":
            self.cwd = target
        elif _HOME_VAR.match(target) is not None:
            self.cwd = "~" + _HOME_VAR.sub("", target)
        elif target == "-":
            self.cwd = "?"
        elif self.cwd is not None and self.cwd != "?":
            self.cwd = self.cwd.rstrip("/") + "/" + target

    def let(self, found: _Found, call: _Call, key: str) -> None:
        self.arithmetic(found, call.words[1:])

    def alias(self, found: _Found, call: _Call, key: str) -> None:
        """``alias name='cmd'``: the value is classified as the command it stands for."""
        found.add(L if len(call.words) > 1 else R, "shell.declaration", "alias")
        for word, static in zip(call.words[1:], call.static[1:], strict=False):
            name, eq, value = word.partition("=")
            if not eq:
                continue
            if not static:
                found.add(D, "command.dynamic", f"alias {name}: value only known at run time")
            elif value.strip():
                self.nested(found, call, value, "shell.nested-code", f"alias {name}")

    def trap(self, found: _Found, call: _Call, key: str) -> None:
        """``trap 'CODE' SIGNAL…``: CODE runs later in this shell, so it is classified."""
        words = call.words
        operands = [i for i in range(1, len(words)) if not words[i].startswith("-")]
        found.add(L if operands else R, "shell.declaration", "trap")
        if len(operands) >= 2:
            index = operands[0]
            if not call.static[index]:
                found.add(D, "command.dynamic", "trap: code only known at run time")
            elif words[index].strip() and words[index] != "-":
                self.nested(found, call, words[index], "shell.nested-code", "trap")

    def printenv(self, found: _Found, call: _Call, key: str) -> None:
        names = [w for w in call.words[1:] if not w.startswith("-")]
        if not names:
            found.add(H, "env.dump", f"{key} without names prints every variable (secrets)")
        elif any(SECRET_NAME.search(name) for name in names):
            found.add(H, "secret.env-var", f"{key} prints a variable named like a secret")
        else:
            found.add(R, "program.table", f"{key} prints named variables")

    def set_(self, found: _Found, call: _Call, key: str) -> None:
        if len(call.words) == 1:
            found.add(H, "env.dump", "set without arguments prints every variable (secrets)")
        else:
            found.add(R, "program.table", "set changes shell options or positional parameters")

    def reads_or_sets(self, found: _Found, call: _Call, key: str) -> None:
        """hostname/date/ifconfig/ip/service/journalctl/dmesg: read-only, unless the
        arguments set something."""
        words = call.words
        args = words[1:]
        if key == "hostname":
            setting = any(w[:1] != "-" for w in args) or "-F" in args
        elif key == "date":
            setting = any(w in ("-s", "--set") or w.startswith("--set=") for w in args)
        elif key == "ifconfig":
            setting = len([w for w in args if w[:1] != "-"]) > 1
        elif key == "ip":
            setting = any(w in IP_CHANGES for w in args)
        elif key == "service":
            setting = not ((len(args) >= 2 and args[1] == "status") or args == ("--status-all",))
        elif key == "journalctl":
            setting = any(w.startswith(("--vacuum", "--rotate", "--flush", "--sync",
                                        "--relinquish")) for w in args)
        else:
            setting = any(w in ("-c", "-C", "--clear", "--read-clear", "-n", "--console-level",
                                "-D", "-E") for w in args)
        if setting:
            tier = M if key in ("journalctl", "dmesg") else H
            found.add(tier, "program.table", f"{key} changes system state")
        else:
            found.add(R, "program.table", f"{key} only prints information")

    def at(self, found: _Found, call: _Call, key: str) -> None:
        """at/batch: high (runs later, outside the session); the commands they read from a
        heredoc or here-string are classified, a pipe into them is shell code."""
        if key == "at" and any(word in ("-l", "-c") for word in call.words[1:]):
            found.add(R, "program.table", "at -l/-c lists or shows jobs")
            return
        found.add(H, "system.persistence", f"{key} runs commands later, outside the session")
        if key == "at" and any(word in ("-r", "-d") for word in call.words[1:]):
            return
        for redirect in call.seg.redirects:
            if redirect.op in ("<<", "<<-", "<<<"):
                code = redirect.target if redirect.op == "<<<" else redirect.body or ""
                readable = redirect.static if redirect.op == "<<<" else (
                    _EXPANDS_IN_HEREDOC.search(code) is None or "'" in redirect.target
                    or '"' in redirect.target)
                if readable:
                    self.nested(found, call, code, "system.persistence", f"the {key} job")
                else:
                    found.add(D, "interpreter.stdin", f"{key} runs text known only at run time")
                return
        if call.seg.fed_by:
            found.add(D, "pipe.to-interpreter", f"a pipe feeds {key}, which runs it as code")

    def systemd_run(self, found: _Found, call: _Call, key: str) -> None:
        """systemd-run: high; the command it starts is classified too."""
        found.add(H, "system.persistence", "systemd-run starts a unit outside the session")
        words = call.words
        index = 1
        while index < len(words) and words[index][:1] == "-":
            word = words[index]
            if word == "--":
                index += 1
                break
            index += 2 if word in _SYSTEMD_RUN_VALUES else 1
        if index < len(words):
            self.command(found, call.shifted(index))

    def crontab(self, found: _Found, call: _Call, key: str) -> None:
        if "-l" in call.words and "-r" not in call.words:
            found.add(R, "program.table", "crontab -l lists jobs")
        else:
            found.add(H, "system.persistence", "crontab installs or removes jobs that run later")

    def kill(self, found: _Found, call: _Call, key: str) -> None:
        """``kill PID`` is high; a PID of -1 (``kill -9 -1``) signals every process."""
        words = call.words
        if len(words) > 1 and words[1] in ("-l", "-L", "--list", "--table"):
            found.add(R, "program.table", "kill -l lists signals")
            return
        index = 1
        if index < len(words) and words[index] in ("-s", "-n", "--signal"):
            index += 2
        elif index < len(words) and words[index][:1] == "-" and words[index] != "--":
            index += 1
        if index < len(words) and words[index] == "--":
            index += 1
        if "-1" in words[index:]:
            found.add(D, "process.kill-all", "kill -1 signals every process")
        else:
            found.add(H, "program.table", f"{key} signals processes")

    # -- file utilities --------------------------------------------------------------------

    def tee(self, found: _Found, call: _Call, key: str) -> None:
        files = [(w, s) for w, s in zip(call.words[1:], call.static[1:], strict=False)
                 if not (w[:1] == "-" and len(w) > 1)]
        append = any(w in ("-a", "--append") for w in call.words[1:])
        if not files:
            found.add(R, "program.table", "tee without files only copies stdin to stdout")
        for word, static in files:
            self.write_target(found, word, static, "redirect", append)

    def sort(self, found: _Found, call: _Call, key: str) -> None:
        """sort reads its files; ``-o FILE`` writes one."""
        words = call.words
        found.add(R, "program.table", "sort reads files")
        index = 1
        while index < len(words):
            word = words[index]
            output: str | None = None
            if word in ("-o", "--output") and index + 1 < len(words):
                output, static = words[index + 1], call.static[index + 1]
                index += 1
            elif word.startswith("--output="):
                output, static = word.partition("=")[2], call.static[index]
            elif word.startswith("-o") and len(word) > 2:
                output, static = word[2:], call.static[index]
            elif word.startswith("--compress-program"):
                found.add(D, "program.unknown", "sort --compress-program runs a program")
            elif word in ("-k", "-t", "-S", "-T", "--key", "--field-separator",
                          "--buffer-size", "--temporary-directory", "--batch-size"):
                index += 1
            elif word[:1] != "-":
                self.read_path(found, word, call.static[index])
            if output is not None:
                found.add(L, "program.table", "sort -o writes a file")
                self.write_target(found, output, static, "redirect")
            index += 1

    def uniq(self, found: _Found, call: _Call, key: str) -> None:
        """``uniq [opts] [INPUT [OUTPUT]]``: the second operand is written."""
        words = call.words
        found.add(R, "program.table", "uniq reads a file")
        operands = [i for i in range(1, len(words)) if words[i][:1] != "-" or words[i] == "-"]
        operands = [i for i in operands if words[i - 1] not in ("-f", "-s", "-w")]
        if operands:
            self.read_path(found, words[operands[0]], call.static[operands[0]])
        if len(operands) > 1:
            self.write_target(found, words[operands[1]], call.static[operands[1]], "redirect")

    def make(self, found: _Found, call: _Call, key: str) -> None:
        """make: medium; every target counts (``install``, ``deploy`` are high, ``help`` is
        read-only); ``VAR=x`` arguments are checked like assignments (``make SHELL=…``);
        ``-n`` (dry run) is at most low."""
        words = call.words
        targets: list[tuple[Tier, str]] = []
        dry_run = False
        index = 1
        while index < len(words):
            word = words[index]
            static = call.static[index]
            if word in ("-C", "-f", "--file", "--makefile", "-I", "--include-dir", "-j", "-l",
                        "-o", "-W", "--directory", "--old-file", "--what-if"):
                index += 2
                continue
            if word in ("-n", "--dry-run", "--just-print", "--recon", "-q", "--question", "-p",
                        "--print-data-base"):
                dry_run = True
            elif word[:1] == "-":
                pass
            elif "=" in word and _ENV_NAME.match(word) is not None:
                name, _, value = word.partition("=")
                self.assignment(found, name, value, static)
            elif not static:
                found.add(D, "subcommand.dynamic", f"make: target {word!r} only known at run "
                          "time")
            else:
                targets.append((MAKE_TARGETS.get(word, M), word))
            index += 1
        tier, target = max(targets, default=(M, ""))
        if dry_run:
            tier = min(tier, L)
        shown = f"{key} {target}" if target else key
        found.add(tier, "program.table", f"{shown} is {tier.label}" + (" (dry run)" if dry_run
                                                                       else ""))

    def danger(self, word: str, static: bool) -> str | None:
        """Is a deletion target ``/``, ``~`` or a system directory in any spelling?
        Returns ``root``, ``home``, ``system`` or None."""
        target = word
        if not static:
            if _UNSET_VAR_TARGET.match(target) is not None:
                return "root"  # `$DIR/*` is `/*` when DIR is unset or empty
            if _HOME_VAR.match(target) is not None:
                target = "~" + _HOME_VAR.sub("", target)
            elif target[:1] in "$`":
                return None
        if target[:1] not in "/~":
            cwd = self.cwd
            if cwd is None or cwd == "?" or target.startswith(".."):
                return None
            target = cwd.rstrip("/") + "/" + target if cwd != "/" else "/" + target
        if target[:1] == "~":
            return "home" if _HOME_TARGET.match(target) is not None else None
        if _ROOT_TARGET.match(target) is not None:
            return "root"
        if _OTHER_HOME_TARGET.match(target) is not None:
            return "home"
        if _SYSTEM_TARGET.match(target) is not None:
            return "system"
        return None

    def rm(self, found: _Found, call: _Call, key: str) -> None:
        """rm: high; recursive+force (any spelling) destructive; of / or ~ its own rule ids."""
        words = call.words
        recursive = force = no_preserve = dynamic_flags = False
        options_done = False
        targets: list[tuple[str, bool]] = []
        for word, static in zip(words[1:], call.static[1:], strict=False):
            if not options_done:
                if word == "--":
                    options_done = True
                    continue
                if not static and word[:1] in "$`" and _HOME_VAR.match(word) is None:
                    dynamic_flags = True  # "$X" may expand to -rf
                elif word.startswith("--"):
                    recursive = recursive or word == "--recursive"
                    force = force or word == "--force"
                    no_preserve = no_preserve or word == "--no-preserve-root"
                    continue
                elif word[:1] == "-" and len(word) > 1:
                    recursive = recursive or "r" in word or "R" in word
                    force = force or "f" in word
                    continue
            targets.append((word, static))
        spelled = "recursive and force" if recursive and force else "recursive"
        if recursive or no_preserve:
            worst: str | None = "root" if no_preserve else None
            for word, static in targets:
                kind = self.danger(word, static)
                if kind is not None and (worst is None or _DANGER_ORDER[kind] <
                                         _DANGER_ORDER[worst]):
                    worst = kind
            if worst is not None:
                found.add(D, f"rm.recursive-force-{worst}", f"{spelled} delete of "
                          f"{_DANGER_NAMES[worst]}")
            elif recursive and force:
                found.add(D, "rm.recursive-force", "rm with recursive and force flags")
        if dynamic_flags:
            found.add(D, "rm.dynamic-flags", "an argument only known at run time may be flags "
                      "(write `rm -- \"$X\"`)")
        found.add(H, "rm.delete", f"{key} deletes files")
        for word, static in targets:
            if self.path_class(word, static) == _P_DEVICE:
                found.add(D, "write.device", f"deletes the device node {word!r}")
            elif _is_secret(word, static):
                found.add(H, "secret.read", f"deletes {word!r}, which looks like a secret")

    def chmod(self, found: _Found, call: _Call, key: str) -> None:
        """chmod: low in the project; world-writable modes and setuid are flagged; recursive
        changes of /, ~ or system directories are destructive. chown/chgrp are high."""
        words = call.words
        recursive = False
        mode: tuple[str, bool] | None = None
        targets: list[tuple[str, bool]] = []
        for word, static in zip(words[1:], call.static[1:], strict=False):
            if word.startswith("--"):
                recursive = recursive or word == "--recursive"
                if word.startswith("--reference"):
                    mode = ("", True)
                continue
            if word[:1] == "-" and len(word) > 1 and set(word[1:]) <= set("RcfvhHLP"):
                recursive = recursive or "R" in word
                continue
            if key == "chmod" and mode is None:
                mode = (word, static)
            elif key != "chmod" and mode is None:
                mode = (word, static)  # the owner
            else:
                targets.append((word, static))
        base = L if key == "chmod" else H
        found.add(base, "program.table", f"{key} changes permissions or ownership")
        if key == "chmod" and mode is not None:
            text, static = mode
            if not static:
                found.add(H, "program.table", "chmod: the mode is only known at run time")
            elif _world_writable(text):
                found.add(D, "chmod.world-writable", f"chmod {text} makes files writable by "
                          "every user")
            elif _setuid(text):
                found.add(H, "chmod.setuid", f"chmod {text} sets the setuid/setgid bit")
        for word, static in targets:
            if recursive and self.danger(word, static) is not None:
                found.add(D, "fs.recursive-system", f"{key} -R of {word!r}")
            self.write_target(found, word, static, key)

    def find(self, found: _Found, call: _Call, key: str) -> None:
        """find: read-only listing; ``-exec``/``-ok`` run a command (classified, with ``{}``
        as a path under the start directory); ``-delete`` deletes; ``-fprint`` writes."""
        words = call.words
        count = len(words)
        found.add(R, "program.table", f"{key} lists files")
        index = 1
        while index < count and words[index] in ("-H", "-L", "-P", "-O0", "-O1", "-O2", "-O3"):
            index += 1
        starts: list[tuple[str, bool]] = []
        while index < count and (words[index][:1] not in "-(!)," or words[index] == "-"):
            starts.append((words[index], call.static[index]))
            index += 1
        start, start_static = starts[0] if starts else (".", True)
        filtered = False
        for word, static in starts:
            self.read_path(found, "/." if word == "/" else word, static)
        while index < count:
            word = words[index]
            if word in ("-exec", "-execdir", "-ok", "-okdir"):
                end = index + 1
                while end < count and words[end] not in (";", "+"):
                    end += 1
                inner = words[index + 1 : end]
                inner_static = list(call.static[index + 1 : end])
                placeholder = start.rstrip("/") + "/…" if start_static else "$FOUND"
                replaced = tuple(w.replace("{}", placeholder) if w != "{}" else placeholder
                                 for w in inner)
                for position, w in enumerate(inner):
                    if "{}" in w and not start_static:
                        inner_static[position] = False
                if inner:
                    self.command(found, call.replaced(replaced, tuple(inner_static)))
                index = end + 1
                filtered = True
                continue
            if word == "-delete":
                kind = self.danger(start, start_static)
                if kind is not None and not filtered:
                    found.add(D, f"rm.recursive-force-{kind}", f"find {start} -delete deletes "
                              f"{_DANGER_NAMES[kind]}")
                elif kind is not None:
                    found.add(D, "find.delete-wide", f"find -delete across {_DANGER_NAMES[kind]}")
                else:
                    found.add(H, "find.delete", "find -delete deletes the files it matches")
            elif word in _FIND_NAME_TESTS and index + 1 < count:
                pattern = words[index + 1]
                if _is_secret(pattern, False):
                    found.add(H, "secret.read", f"find looks for secret files ({pattern!r})")
                filtered = True
                index += 1
            elif word in ("-fprint", "-fprint0", "-fprintf", "-fls") and index + 1 < count:
                found.add(L, "program.table", f"find {word} writes a file")
                self.write_target(found, words[index + 1], call.static[index + 1], "redirect")
                index += 1
            elif word not in ("-depth", "-d", "-xdev", "-mount", "-maxdepth", "-mindepth",
                              "-follow", "-noleaf", "-ignore_readdir_race", "-daystart",
                              "-print", "-print0"):
                filtered = filtered or word[:1] == "-"
            index += 1

    def fd(self, found: _Found, call: _Call, key: str) -> None:
        """fd lists files; ``-x``/``-X`` (``--exec``/``--exec-batch``) run a command."""
        words = call.words
        found.add(R, "program.table", f"{key} lists files")
        for index, word in enumerate(words):
            if word in ("-x", "--exec", "-X", "--exec-batch") and index + 1 < len(words):
                end = index + 1
                while end < len(words) and words[end] != ";":
                    end += 1
                inner = tuple(w.replace("{}", "./…") for w in words[index + 1 : end])
                self.command(found, call.replaced(inner, call.static[index + 1 : end]))
                return

    def awk(self, found: _Found, call: _Call, key: str) -> None:
        """awk: a program without system(), getline, pipes or output redirection only reads;
        anything else can run commands or write files."""
        words = call.words
        count = len(words)
        program: str | None = None
        program_static = True
        index = 1
        script_file = False
        while index < count:
            word = words[index]
            if word == "--":
                index += 1
                break
            if word in ("-f", "--file", "-E", "--exec"):
                script_file = True
                if index + 1 < count:
                    self.script(found, call, index + 1, key)
                index += 2
                continue
            if word in ("-e", "--source"):
                if index + 1 < count:
                    program = (program or "") + "\n" + words[index + 1]
                    program_static = program_static and call.static[index + 1]
                index += 2
                continue
            if word in ("-l", "--load") or word.startswith(("-l", "--load=")):
                found.add(D, "awk.exec", "awk loads a native extension")
                return
            if word in ("-i", "--include") and index + 1 < count:
                if words[index + 1] == "inplace":
                    found.add(M, "awk.in-place", "gawk -i inplace rewrites its files")
                else:
                    found.add(M, "interpreter.script", "awk includes a library file")
                index += 2
                continue
            if word in ("-v", "--assign", "-F", "--field-separator"):
                index += 2
                continue
            if word[:1] == "-" and len(word) > 1:
                index += 1
                continue
            break
        if program is None and not script_file:
            if index < count:
                program, program_static = words[index], call.static[index]
                index += 1
            else:
                program = ""
        if program is not None:
            if not program_static:
                found.add(D, "awk.exec", "the awk program is only known at run time")
            elif AWK_DANGER.search(program) is not None:
                found.add(D, "awk.exec", "the awk program can run commands or write files")
            else:
                found.add(R, "awk.program", "the awk program only reads and prints")
            if "ENVIRON" in program:
                found.add(H, "secret.env-var", "the awk program reads the environment")
        for position in range(index, count):
            word = words[position]
            if "=" in word and _ENV_NAME.match(word) is not None:
                continue  # awk command-line assignment, not a file
            self.read_path(found, word, call.static[position])

    def sed(self, found: _Found, call: _Call, key: str) -> None:
        """sed: read-only, unless ``-i`` (medium), a ``w`` file (the target's tier) or an
        ``e`` command/flag (destructive). Scripts we cannot parse fail closed."""
        words = call.words
        count = len(words)
        scripts: list[tuple[str, bool]] = []
        in_place = sandbox = script_file = False
        files_from = -1
        index = 1
        while index < count:
            word = words[index]
            if word == "--":
                index += 1
                break
            if word[:1] != "-" or len(word) < 2:
                break
            if word.startswith("--"):
                name, eq, value = word.partition("=")
                if name == "--expression":
                    script, static = (value, call.static[index]) if eq else (
                        (words[index + 1], call.static[index + 1]) if index + 1 < count
                        else ("", True))
                    scripts.append((script, static))
                    index += 1 if eq else 2
                    continue
                if name == "--file":
                    script_file = True
                    if not eq and index + 1 < count:
                        self.script(found, call, index + 1, "sed -f")
                    index += 1 if eq else 2
                    continue
                in_place = in_place or name == "--in-place"
                sandbox = sandbox or name == "--sandbox"
                index += 2 if name == "--line-length" and not eq else 1
                continue
            position = 1
            while position < len(word):
                char = word[position]
                if char in "ef" or char == "l":
                    attached = word[position + 1 :]
                    if attached:
                        value, static = attached, call.static[index]
                    elif index + 1 < count:
                        index += 1
                        value, static = words[index], call.static[index]
                    else:
                        value, static = "", True
                    if char == "e":
                        scripts.append((value, static))
                    elif char == "f":
                        script_file = True
                        found.add(M, "interpreter.script", "sed -f runs a script file")
                    break
                if char == "i":
                    in_place = True
                    if position == len(word) - 1 and index + 1 < count and words[index + 1] == "":
                        index += 1  # BSD `sed -i '' …`
                    break  # the rest is the backup suffix
                position += 1
            index += 1
        if not scripts and not script_file and index < count:
            scripts.append((words[index], call.static[index]))
            files_from = index + 1
        else:
            files_from = index
        found.add(R, "program.table", "sed reads and prints")
        if in_place:
            found.add(M, "sed.in-place", "sed -i rewrites its files")
        for script, static in scripts:
            if not static:
                found.add(D, "sed.unparsed", "the sed script is only known at run time")
                continue
            scan = _sed_scan(script)
            if scan is None:
                found.add(D, "sed.unparsed", "sed script we cannot parse")
                continue
            executes, writes, reads = scan
            if executes and not sandbox:
                found.add(D, "sed.exec", "the sed script runs shell commands (e)")
            for target in writes if not sandbox else ():
                if target not in HARMLESS_DEVICES:
                    found.add(M, "sed.write", f"the sed script writes {target!r}")
                    self.write_target(found, target, True, "sed")
            for source in reads:
                self.read_path(found, source, True)
        for position in range(files_from, count):
            word = words[position]
            if in_place:
                self.write_target(found, word, call.static[position], "sed")
            else:
                self.read_path(found, word, call.static[position])

    def tar(self, found: _Found, call: _Call, key: str) -> None:
        """tar: list read-only, create low, extract medium; the commands tar can run
        (``--to-command``, ``-I``, checkpoint actions, rsh) are classified as commands."""
        words = call.words
        count = len(words)
        mode = ""
        directory: tuple[str, bool] | None = None
        absolute = remove = False
        operands: list[tuple[str, bool]] = []
        index = 1
        first = True
        while index < count:
            word = words[index]
            static = call.static[index]
            bundle = word[1:] if word[:1] == "-" and not word.startswith("--") else (
                word if first and word[:1] != "-" and set(word) <= _TAR_LETTERS else None)
            first = False
            if word.startswith("--"):
                name, eq, value = word.partition("=")
                if not eq and name in _TAR_LONG_VALUES and index + 1 < count:
                    index += 1
                    value, static = words[index], call.static[index]
                mode = _TAR_LONG_MODES.get(name, mode)
                absolute = absolute or name == "--absolute-names"
                remove = remove or name == "--remove-files"
                if name in ("--directory",):
                    directory = (value, static)
                elif name in ("--to-command", "--use-compress-program", "--rsh-command",
                              "--rmt-command", "--info-script", "--new-volume-script"):
                    self.embedded(found, call, value, static, f"tar {name}")
                elif name == "--checkpoint-action" and value.startswith("exec="):
                    self.embedded(found, call, value[5:], static, "tar checkpoint exec")
                elif name == "--file" and value:
                    operands.append((value, static))
            elif bundle is not None:
                values: list[str] = []
                for char in bundle:
                    if char in "ctxruAd" and not mode:
                        mode = _TAR_SHORT_MODES[char]
                    absolute = absolute or char == "P"
                    if char in "fCIFTXgKLNVb":
                        values.append(char)
                for char in values:
                    index += 1
                    if index >= count:
                        break
                    value, static = words[index], call.static[index]
                    if char == "C":
                        directory = (value, static)
                    elif char in "IF":
                        self.embedded(found, call, value, static, f"tar -{char}")
                    elif char in "fTX":
                        operands.append((value, static))
            else:
                operands.append((word, static))
            index += 1
        tier = {"list": R, "diff": R, "create": L, "append": L}.get(mode, M)
        found.add(tier, "archive.extract" if tier == M else "program.table",
                  f"tar {mode or '(no mode)'} is {tier.label}")
        if remove:
            found.add(H, "rm.delete", "tar --remove-files deletes the archived files")
        if tier == M:
            if absolute:
                found.add(H, "write.outside-project", "tar -P extracts to absolute paths")
            if directory is not None:
                self.write_target(found, directory[0], directory[1], "tar")
            elif self.cwd is not None:
                self.write_target(found, ".", True, "tar")
        for word, static in operands:
            self.read_path(found, word, static)

    def embedded(self, found: _Found, call: _Call, text: str, static: bool, what: str) -> None:
        """A command another program runs (tar's ``--to-command``, rsync's ``-e``)."""
        if not static:
            found.add(D, "shell.nested-code", f"{what}: command only known at run time")
            return
        self.nested(found, call, text, "shell.nested-code", what)

    def rsync(self, found: _Found, call: _Call, key: str) -> None:
        """rsync: a local copy is medium; to/from another host high; ``--delete*`` high;
        ``-e``/``--rsh`` is a command (classified)."""
        words = call.words
        count = len(words)
        operands: list[tuple[str, bool]] = []
        remote = delete = False
        index = 1
        while index < count:
            word = words[index]
            static = call.static[index]
            if word.startswith("--"):
                name, eq, value = word.partition("=")
                if not eq and name in _RSYNC_LONG_VALUES and index + 1 < count:
                    index += 1
                    value, static = words[index], call.static[index]
                if name == "--rsh":
                    self.embedded(found, call, value, static, "rsync --rsh")
                    remote = True
                elif name == "--rsync-path":
                    found.add(H, "rsync.remote", "rsync --rsync-path runs a command remotely")
                delete = delete or name.startswith("--delete") or name in (
                    "--remove-source-files", "--del")
            elif word[:1] == "-" and len(word) > 1:
                for position, char in enumerate(word[1:], 1):
                    if char in "efTBM":
                        attached = word[position + 1 :]
                        if not attached and index + 1 < count:
                            index += 1
                            attached, static = words[index], call.static[index]
                        if char == "e":
                            self.embedded(found, call, attached, static, "rsync -e")
                            remote = True
                        break
            else:
                operands.append((word, static))
            index += 1
        remote = remote or any(_REMOTE_PATH.match(w) is not None for w, _ in operands)
        if remote:
            found.add(H, "rsync.remote", "rsync copies to or from another host")
        else:
            found.add(M, "program.table", "rsync copies files locally")
        if delete:
            found.add(H, "rsync.delete", "rsync deletes files at the destination or source")
        for position, (word, static) in enumerate(operands):
            if _REMOTE_PATH.match(word) is not None:
                continue
            if position == len(operands) - 1 and len(operands) > 1:
                self.write_target(found, word, static, "rsync")
            else:
                self.read_path(found, word, static)

    def ssh(self, found: _Found, call: _Call, key: str) -> None:
        """ssh: high (another machine); a remote command is classified too, and ssh fed by
        a pipe with no remote command runs that input as shell code remotely."""
        words = call.words
        count = len(words)
        found.add(H, "program.table", f"{key} connects to another host")
        index = 1
        host_seen = False
        while index < count:
            word = words[index]
            if word[:1] == "-" and len(word) > 1 and not host_seen:
                if key != "ssh" and word == "-S" and index + 1 < count:
                    self.embedded(found, call, words[index + 1], call.static[index + 1],
                                  f"{key} -S")
                    index += 2
                    continue
                if word[-1] in _SSH_VALUE_OPTIONS and word[1:].isalpha():
                    if word[-1] == "o" and index + 1 < count and SSH_EXEC_OPTION.match(
                            words[index + 1]) is not None:
                        found.add(D, "env.exec-hook", "ssh -o option that runs a local command")
                    index += 1
                elif word.startswith("-o") and SSH_EXEC_OPTION.match(word[2:]) is not None:
                    found.add(D, "env.exec-hook", "ssh -o option that runs a local command")
                index += 1
                continue
            if not host_seen:
                host_seen = True
                index += 1
                continue
            break
        if key != "ssh":
            self.check_paths(found, call, "read")
            return
        if index < count:
            if all(call.static[index:]):
                self.nested(found, call, " ".join(words[index:]), "shell.nested-code",
                            "ssh (remote command)")
            else:
                found.add(D, "command.dynamic", "ssh: the remote command is only known at run "
                          "time")
        elif call.seg.fed_by:
            found.add(D, "pipe.to-interpreter", "a pipe feeds a remote shell")
            if self.download_fed(call):
                found.add(D, "download.pipe-to-shell", "a remote shell runs downloaded code")

    def docker_run(self, found: _Found, call: _Call, index: int) -> None:
        """``docker run``: medium; host namespaces, privileges, or ``/``, the docker socket or
        system directories mounted into the container escape it (destructive)."""
        words = call.words
        count = len(words)
        found.add(M, "subcommand.table", "docker run starts a container")
        while index < count:
            word = words[index]
            static = call.static[index]
            if word == "--" or word[:1] != "-" or len(word) < 2:
                break  # the image: what runs after it runs inside the container
            name, eq, value = word.partition("=")
            if not eq and name in _DOCKER_RUN_VALUES and index + 1 < count:
                index += 1
                value, static = words[index], call.static[index]
            if name == "--privileged":
                found.add(D, "docker.host-escape", "a privileged container controls the host")
            elif name in ("--pid", "--ipc", "--uts", "--userns", "--cgroupns") and value == "host":
                found.add(D, "docker.host-escape", f"{name}=host shares the host's namespace")
            elif name in ("--network", "--net") and value == "host":
                found.add(H, "docker.host-access", "the container uses the host's network")
            elif name == "--cap-add" and value.upper().removeprefix("CAP_") in ESCAPE_CAPS:
                found.add(D, "docker.host-escape", f"--cap-add {value} lets it escape")
            elif name == "--security-opt" and ("unconfined" in value or value == "label=disable"
                                               or value.startswith("label:disable")):
                found.add(D, "docker.host-escape", f"--security-opt {value} removes confinement")
            elif name == "--device":
                found.add(H, "docker.host-access", f"--device {value} exposes a host device")
            elif name in ("-v", "--volume", "--mount"):
                self.docker_mount(found, value, static)
            elif name == "--env-file" and _is_secret(value, static):
                found.add(H, "secret.read", f"--env-file {value} passes secrets in")
            elif name in ("-e", "--env") and not static and SECRET_EXPANSION.search(value):
                found.add(H, "secret.env-var", "passes a variable named like a secret")
            index += 1

    def docker_mount(self, found: _Found, spec: str, static: bool) -> None:
        if spec.startswith(("type=", "source=", "src=")) or ",src" in spec or ",source" in spec:
            fields = dict(part.partition("=")[::2] for part in spec.split(","))
            source = fields.get("source") or fields.get("src") or ""
        else:
            source = spec.split(":", 1)[0]
        if not source or source[0] not in "/~$.`":
            return  # a named volume
        if (not static and source[0] in "$`" and _HOME_VAR.match(source) is None
                and _PWD_VAR.match(source) is None):
            found.add(H, "docker.host-access", f"mounts {source!r}, only known at run time")
            return
        kind = self.danger(source, static) or (
            "system" if source.rstrip("/") in ESCAPE_MOUNTS else None)
        if kind is not None:
            found.add(D, "docker.host-escape", f"mounts {_DANGER_NAMES[kind]} into a container")
        elif _is_secret(source, static):
            found.add(H, "secret.read", f"mounts {source!r}, which looks like a secret")
        elif self.path_class(source, static) in (_P_ABS, _P_HOME, _P_DEVICE):
            found.add(H, "docker.host-access", f"mounts {source!r} from outside the project")

    def gh_api(self, found: _Found, call: _Call, index: int) -> None:
        """``gh api``: GET is read-only; another method or fields (which make a POST) high."""
        method = ""
        fields = False
        words = call.words
        for position in range(index, len(words)):
            word = words[position]
            if word in ("-X", "--method") and position + 1 < len(words):
                method = words[position + 1].upper()
            elif word.startswith("--method="):
                method = word.partition("=")[2].upper()
            elif word.startswith("-X") and len(word) > 2:
                method = word[2:].upper()
            elif word in ("-f", "-F", "--field", "--raw-field", "--input") or word.startswith(
                    ("--field=", "--raw-field=", "--input=")):
                fields = True
        if method in ("", "GET", "HEAD") and not (fields and method == ""):
            found.add(R, "gh.api", "gh api GET only reads")
        else:
            found.add(H, "gh.api", f"gh api {method or 'POST'} changes things on GitHub")
        self.secret_arguments(found, call)

    # -- git -------------------------------------------------------------------------------

    def git(self, found: _Found, call: _Call, key: str) -> None:
        """git: global options (``-C``, ``-c k=v``, ``--git-dir``…), then the subcommand."""
        words = call.words
        count = len(words)
        config: list[str] = []
        index = 1
        while index < count:
            word = words[index]
            if word[:1] != "-" or len(word) < 2:
                break
            name, eq, value = word.partition("=")
            if name in ("-c", "--config-env"):
                setting, static = (value, call.static[index]) if eq else (
                    (words[index + 1], call.static[index + 1]) if index + 1 < count
                    else ("", True))
                config.append(setting.partition("=")[0].lower())
                self.git_setting(found, setting, static and name == "-c", f"git {name}")
                index += 1 if eq else 2
                continue
            if name == "--exec-path" and eq:
                found.add(D, "git.exec-option", "git --exec-path= runs git programs from there")
                return
            if name in _GIT_INFO_OPTIONS:
                found.add(R, "program.version", f"git {word} only prints information")
                return
            index += 2 if name in GIT_GLOBAL_VALUE_OPTIONS and not eq else 1
        if index >= count:
            found.add(R, "git.subcommand", "git without a subcommand prints help")
            return
        if not call.static[index]:
            found.add(D, "subcommand.dynamic", "git: subcommand only known at run time")
            return
        sub = words[index]
        args = words[index + 1 :]
        args_static = call.static[index + 1 :]
        handler = _GIT_HANDLERS.get(sub)
        if handler is not None:
            handler(self, found, call, args, args_static, config)
        elif sub in GIT_SUBCOMMANDS:
            tier = GIT_SUBCOMMANDS[sub]
            found.add(tier, "git.subcommand", f"git {sub} is {tier.label}")
        else:
            found.add(D, "git.unknown-subcommand", f"git {sub}: not a known subcommand (may be "
                      "an alias or a git-* program)")
        for word, static in zip(args, args_static, strict=False):
            name = word.partition("=")[0]
            if name in GIT_EXEC_OPTIONS.get(sub, ()) or word.startswith(("ext::", "fd::")):
                found.add(D, "git.exec-option", f"git {sub} {word} runs a program")
            elif name == "--template" and sub in ("clone", "init"):
                found.add(H, "write.protected", "a template directory installs hooks")
            elif name in ("--config", "-c") and sub == "clone":
                pass  # handled with the value below
            if static and (word.startswith(("-c", "--config")) is False) and _is_secret(
                    word.partition("=")[2] if word[:1] == "-" else word, static):
                found.add(H, "secret.read", f"git {sub} touches {word!r}, which looks like a "
                          "secret")
        if sub == "clone":
            for position, word in enumerate(args[:-1]):
                if word in ("-c", "--config"):
                    self.git_setting(found, args[position + 1], args_static[position + 1],
                                     "git clone --config")
                elif word.startswith("--config="):
                    self.git_setting(found, word.partition("=")[2], args_static[position],
                                     "git clone --config")

    def git_setting(self, found: _Found, setting: str, static: bool, what: str) -> None:
        """A ``key=value`` git setting: keys that run programs are destructive."""
        name, _, value = setting.partition("=")
        name = name.lower()
        if (name == "core.pager" or name.startswith("pager.")) and static and (
                value.strip() in SAFE_PAGERS or value.strip() in ("false", "true", "0", "1")):
            return  # `git -c core.pager=cat log`: a harmless pager
        if GIT_EXEC_KEYS.match(name) is not None:
            if name.startswith("alias.") and "!" not in value and static:
                return  # an alias to a git subcommand; using it fails closed as unknown
            found.add(D, "git.exec-config", f"{what} {name}: a setting that runs programs")
        elif not static:
            found.add(D, "git.exec-config", f"{what}: setting only known at run time")

    def git_push(self, found: _Found, call: _Call, args: Words, statics: Statics,
                 config: list[str]) -> None:
        shorts, longs, operands = _git_flags(args, statics, "o", _GIT_PUSH_VALUES)
        if "n" in shorts or "--dry-run" in longs:
            found.add(L, "git.push", "git push --dry-run only shows what would happen")
            return
        if "f" in shorts or longs & {"--force", "--force-with-lease"}:
            found.add(D, "git.push-force", "force push overwrites the remote history")
        if any(word[:1] == "+" or (not static and word[:1] in "$`") for word, static in
               operands):
            found.add(D, "git.push-force", "a +refspec (or one only known at run time) forces")
        if "d" in shorts or longs & {"--delete", "--mirror", "--prune"} or any(
                word[:1] == ":" for word, _ in operands):
            found.add(D, "git.push-delete", "the push deletes remote branches or tags")
        if any(name.startswith(("remote.", "push.", "branch.")) for name in config):
            found.add(D, "git.push-force", "a -c setting changes what push sends")
        found.add(H, "git.push", "git push publishes commits")

    def git_reset(self, found: _Found, call: _Call, args: Words, statics: Statics,
                  config: list[str]) -> None:
        _, longs, operands = _git_flags(args, statics, "", frozenset())
        if "--hard" in longs:
            found.add(D, "git.reset-hard", "git reset --hard discards uncommitted changes")
        elif longs & {"--keep", "--merge", "--soft"} or (
                operands and operands[0][0] not in ("HEAD", "@") and "--" not in args):
            found.add(M, "git.subcommand", "git reset moves the branch (recoverable via reflog)")
        else:
            found.add(L, "git.subcommand", "git reset unstages changes")

    def git_clean(self, found: _Found, call: _Call, args: Words, statics: Statics,
                  config: list[str]) -> None:
        shorts, longs, _ = _git_flags(args, statics, "e", frozenset({"--exclude"}))
        if "n" in shorts or "--dry-run" in longs:
            found.add(R, "git.subcommand", "git clean -n only lists what would be deleted")
        else:
            found.add(D, "git.clean-force", "git clean deletes untracked files")

    def git_branch(self, found: _Found, call: _Call, args: Words, statics: Statics,
                   config: list[str]) -> None:
        shorts, longs, operands = _git_flags(args, statics, "u", _GIT_BRANCH_VALUES)
        if shorts & {"d", "D"} or "--delete" in longs:
            found.add(D, "git.branch-delete", "deleting a branch can lose commits")
        elif "M" in shorts or ("f" in shorts and operands) or "--force" in longs:
            found.add(H, "git.subcommand", "git branch -M/-f overwrites a branch")
        elif "m" in shorts or "--move" in longs:
            found.add(M, "git.subcommand", "git branch -m renames a branch")
        elif shorts & {"c", "C"} or "--copy" in longs or (operands and not (
                shorts & set("alrv") or longs & _GIT_BRANCH_LISTING)):
            found.add(L, "git.subcommand", "git branch creates a branch")
        elif "u" in shorts or longs & {"--set-upstream-to", "--unset-upstream", "--track",
                                        "--no-track", "--edit-description"}:
            found.add(L, "git.subcommand", "git branch sets upstream/description")
        else:
            found.add(R, "git.subcommand", "git branch lists branches")

    def git_tag(self, found: _Found, call: _Call, args: Words, statics: Statics,
                config: list[str]) -> None:
        shorts, longs, operands = _git_flags(args, statics, "mFuO", _GIT_TAG_VALUES)
        if "d" in shorts or "--delete" in longs:
            found.add(H, "git.subcommand", "git tag -d deletes a tag")
        elif "v" in shorts or "--verify" in longs:
            found.add(R, "git.subcommand", "git tag -v verifies a tag")
        elif "l" in shorts or "n" in shorts or longs & _GIT_TAG_LISTING or not operands:
            found.add(R, "git.subcommand", "git tag lists tags")
        elif "f" in shorts or "--force" in longs:
            found.add(M, "git.subcommand", "git tag -f moves a tag")
        else:
            found.add(L, "git.subcommand", "git tag creates a tag")

    def git_checkout(self, found: _Found, call: _Call, args: Words, statics: Statics,
                     config: list[str]) -> None:
        """``git checkout BRANCH`` switches; ``git checkout PATH``/``-- PATH``/``.``/``-f``
        discards edits. Which one a bare name is cannot be known, so only names that look
        like branches (``main``, ``feature/x``, ``v1.2``, a hash) are low."""
        shorts, longs, operands = _git_flags(args, statics, "bBU", _GIT_CHECKOUT_VALUES)
        if "f" in shorts or longs & {"--force", "--ours", "--theirs", "--patch",
                                      "--pathspec-from-file"} or "p" in shorts:
            found.add(D, "git.discard-changes", "git checkout -f/--ours/--patch overwrites edits")
        elif "--" in args and args.index("--") < len(args) - 1:
            found.add(D, "git.discard-changes", "git checkout -- PATH discards edits")
        elif shorts & {"b", "B"} or longs & {"--orphan", "--detach"}:
            found.add(L if "B" not in shorts else M, "git.subcommand",
                      "git checkout -b creates and switches to a branch")
        elif not operands:
            found.add(R, "git.subcommand", "git checkout without arguments shows tracking info")
        elif len(operands) == 1 and operands[0][1] and _looks_like_branch(operands[0][0]):
            found.add(L, "git.subcommand", f"git checkout {operands[0][0]} switches branches")
        else:
            found.add(D, "git.discard-changes", "git checkout PATH discards edits (a branch "
                      "name that looks like a path is treated as one; use `git switch`)")

    def git_switch(self, found: _Found, call: _Call, args: Words, statics: Statics,
                   config: list[str]) -> None:
        shorts, longs, _ = _git_flags(args, statics, "cC", _GIT_SWITCH_VALUES)
        if "f" in shorts or longs & {"--force", "--discard-changes"}:
            found.add(D, "git.discard-changes", "git switch --discard-changes drops edits")
        elif "C" in shorts or "--force-create" in longs:
            found.add(M, "git.subcommand", "git switch -C resets a branch")
        else:
            found.add(L, "git.subcommand", "git switch changes branches")

    def git_restore(self, found: _Found, call: _Call, args: Words, statics: Statics,
                    config: list[str]) -> None:
        shorts, longs, _ = _git_flags(args, statics, "s", frozenset({"--source"}))
        staged = "S" in shorts or "--staged" in longs
        worktree = "W" in shorts or "--worktree" in longs
        if staged and not worktree and "s" not in shorts and "--source" not in longs:
            found.add(L, "git.subcommand", "git restore --staged unstages changes")
        else:
            found.add(D, "git.discard-changes", "git restore discards edits in the work tree")

    def git_stash(self, found: _Found, call: _Call, args: Words, statics: Statics,
                  config: list[str]) -> None:
        sub = args[0] if args and args[0][:1] != "-" else "push"
        tier, rule = GIT_STASH.get(sub, (D, "git.unknown-subcommand"))
        found.add(tier, rule, f"git stash {sub} is {tier.label}")

    def git_config(self, found: _Found, call: _Call, args: Words, statics: Statics,
                   config: list[str]) -> None:
        shorts, longs, operands = _git_flags(args, statics, "f", _GIT_CONFIG_VALUES)
        names = [word for word, _ in operands]
        if names and names[0] in ("get", "list"):
            found.add(R, "git.subcommand", f"git config {names[0]} reads settings")
            return
        if names and names[0] in ("set", "unset", "rename-section", "remove-section", "edit"):
            names = names[1:]
            writing = True
        else:
            writing = bool(longs & _GIT_CONFIG_WRITES) or "e" in shorts or len(names) >= 2
        if not writing:
            found.add(R, "git.subcommand", "git config reads settings")
            return
        scope = H if longs & {"--global", "--system", "--file"} or "f" in shorts else M
        found.add(scope, "git.config-write", "git config changes settings")
        if names:
            self.git_setting(found, names[0] + "=" + (names[1] if len(names) > 1 else ""),
                             all(static for _, static in operands), "git config")
            if names[0].lower().startswith("alias.") and len(names) > 1 and "!" in names[1]:
                found.add(D, "git.exec-config", "a git alias that runs a shell command")

    def git_remote(self, found: _Found, call: _Call, args: Words, statics: Statics,
                   config: list[str]) -> None:
        sub = next((w for w in args if w[:1] != "-"), "")
        tier = R if sub in ("", "show", "get-url") else M
        found.add(tier, "git.subcommand", f"git remote {sub} is {tier.label}".replace("  ", " "))

    def git_worktree(self, found: _Found, call: _Call, args: Words, statics: Statics,
                     config: list[str]) -> None:
        sub = next((w for w in args if w[:1] != "-"), "list")
        if sub == "remove" and any(w in ("-f", "--force") for w in args):
            found.add(D, "git.discard-changes", "git worktree remove --force drops its edits")
            return
        tier = {"list": R, "add": L, "remove": H, "prune": M}.get(sub, L)
        found.add(tier, "git.subcommand", f"git worktree {sub} is {tier.label}")

    def git_submodule(self, found: _Found, call: _Call, args: Words, statics: Statics,
                      config: list[str]) -> None:
        sub = next((w for w in args if w[:1] != "-"), "status")
        if sub == "foreach":
            found.add(D, "git.exec-option", "git submodule foreach runs a shell command")
            position = args.index("foreach") + 1
            code = [w for w in args[position:] if w[:1] != "-"]
            if code and all(statics[position:]):
                self.nested(found, call, " ".join(code), "git.exec-option", "foreach command")
            return
        tier = R if sub in ("status", "summary") else H if sub == "deinit" and "-f" in args \
            else M
        found.add(tier, "git.subcommand", f"git submodule {sub} is {tier.label}")

    def git_rebase(self, found: _Found, call: _Call, args: Words, statics: Statics,
                   config: list[str]) -> None:
        for position, word in enumerate(args):
            code: str | None = None
            if word in ("-x", "--exec") and position + 1 < len(args):
                code, static = args[position + 1], statics[position + 1]
            elif word.startswith("--exec="):
                code, static = word.partition("=")[2], statics[position]
            elif word.startswith("-x") and len(word) > 2:
                code, static = word[2:], statics[position]
            if code is not None:
                found.add(D, "git.exec-option", "git rebase --exec runs a shell command")
                if static:
                    self.nested(found, call, code, "git.exec-option", "rebase --exec command")
        self.git_sequencer(found, call, args, statics, config, "rebase")

    def git_sequencer(self, found: _Found, call: _Call, args: Words, statics: Statics,
                      config: list[str], name: str = "merge") -> None:
        """merge/cherry-pick/revert/am/rebase: ``--abort``/``--quit`` are low."""
        if any(w in ("--abort", "--quit") for w in args):
            found.add(L, "git.subcommand", f"git {name} --abort restores the previous state")
        else:
            found.add(M, "git.subcommand", f"git {name} is medium")

    def git_bisect(self, found: _Found, call: _Call, args: Words, statics: Statics,
                   config: list[str]) -> None:
        sub = args[0] if args else ""
        if sub == "run":
            found.add(L, "git.subcommand", "git bisect run runs a command per step")
            offset = len(call.words) - len(args) + 1
            self.wrapped(found, call, offset, L, "git bisect run")
        else:
            tier = R if sub in ("", "log", "view", "visualize", "terms", "help") else L
            found.add(tier, "git.subcommand", f"git bisect {sub} is {tier.label}")

    def git_reflog(self, found: _Found, call: _Call, args: Words, statics: Statics,
                   config: list[str]) -> None:
        if args and args[0] in ("expire", "delete", "drop"):
            found.add(D, "git.history-rewrite", f"git reflog {args[0]} destroys the safety net")
        else:
            found.add(R, "git.subcommand", "git reflog shows history")

    def git_update_ref(self, found: _Found, call: _Call, args: Words, statics: Statics,
                       config: list[str]) -> None:
        if "-d" in args or "--stdin" in args:
            found.add(D, "git.branch-delete", "git update-ref -d/--stdin can delete refs")
        else:
            found.add(H, "git.subcommand", "git update-ref moves a ref")

    def git_rm(self, found: _Found, call: _Call, args: Words, statics: Statics,
               config: list[str]) -> None:
        shorts, longs, _ = _git_flags(args, statics, "", frozenset({"--pathspec-from-file"}))
        if "--cached" in longs:
            found.add(L, "git.subcommand", "git rm --cached only untracks files")
        elif "f" in shorts or "--force" in longs:
            found.add(H, "git.subcommand", "git rm -f deletes files with unsaved changes")
        else:
            found.add(M, "git.subcommand", "git rm deletes committed files")

    def git_gc(self, found: _Found, call: _Call, args: Words, statics: Statics,
               config: list[str]) -> None:
        if any(w.startswith("--prune=") and w != "--prune=2.weeks.ago" for w in args):
            found.add(H, "git.subcommand", "git gc --prune drops unreachable commits")
        else:
            found.add(M, "git.subcommand", "git gc repacks the repository")

    def git_notes(self, found: _Found, call: _Call, args: Words, statics: Statics,
                  config: list[str]) -> None:
        sub = next((w for w in args if w[:1] != "-"), "list")
        tier = R if sub in ("list", "show", "get-ref") else M if sub in ("remove", "prune") \
            else L
        found.add(tier, "git.subcommand", f"git notes {sub} is {tier.label}")

    def git_grep(self, found: _Found, call: _Call, args: Words, statics: Statics,
                 config: list[str]) -> None:
        if any(w == "-O" or w.startswith(("-O", "--open-files-in-pager")) for w in args):
            found.add(D, "git.exec-option", "git grep -O runs a pager program")
        else:
            found.add(R, "git.subcommand", "git grep searches tracked files")

    def git_reader(self, found: _Found, call: _Call, args: Words, statics: Statics,
                   config: list[str]) -> None:
        """log/diff/show/format-patch: read-only, but ``--output=FILE`` writes."""
        found.add(R, "git.subcommand", "git reads history")
        for position, word in enumerate(args):
            if word.startswith("--output=") or (word == "--output" and position + 1 <
                                                len(args)):
                target = word[9:] if "=" in word else args[position + 1]
                found.add(L, "git.subcommand", "git --output writes a file")
                self.write_target(found, target, statics[position], "redirect")

    def git_apply(self, found: _Found, call: _Call, args: Words, statics: Statics,
                  config: list[str]) -> None:
        checks = {"--check", "--stat", "--numstat", "--summary"}
        if any(w in checks for w in args) and "--apply" not in args:
            found.add(R, "git.subcommand", "git apply --check/--stat only inspects the patch")
        else:
            found.add(M, "git.subcommand", "git apply changes files")

    def git_listing(self, found: _Found, call: _Call, args: Words, statics: Statics,
                    config: list[str]) -> None:
        """sparse-checkout/lfs: listing forms are read-only, the rest medium."""
        sub = next((w for w in args if w[:1] != "-"), "")
        if sub in ("list", "ls-files", "status", "env", "version", "logs", "track", ""):
            found.add(R, "git.subcommand", f"git … {sub} only lists")
        else:
            found.add(M, "git.subcommand", f"git … {sub} changes the work tree")

    def git_difftool(self, found: _Found, call: _Call, args: Words, statics: Statics,
                     config: list[str]) -> None:
        if any(w in ("-x", "--extcmd") or w.startswith(("--extcmd=", "-x")) for w in args):
            found.add(D, "git.exec-option", "git difftool -x runs a program")
        else:
            found.add(M, "git.subcommand", "git difftool opens a diff tool")


# =============================================================================================
# Helpers.
# =============================================================================================

Words: TypeAlias = tuple[str, ...]
Statics: TypeAlias = tuple[bool, ...]

_VERSION_FLAGS = frozenset({"--version", "-V", "--help", "-h"})
#: grep/rg options whose value follows as the next word (a pattern, a count, a glob).
_SEARCH_VALUE_OPTIONS = frozenset(
    "--regexp --file --max-count --context --after-context --before-context --glob --type "
    "--type-not --iglob --encoding --max-depth --include --exclude --exclude-dir".split()
)
_SEARCH_VALUE_CHARS = frozenset("efmABCdDgtT")
_FIND_NAME_TESTS = frozenset("-name -iname -path -ipath -wholename -iwholename -lname".split())
_NO_OPTIONS: frozenset[str] = frozenset()
_NO_NAMES: frozenset[str] = frozenset()
_NO_RUNNER_OPTIONS = _Options("", "")
_STDIN_PATHS = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
#: Pipe feeders looked at for downloads; a longer pipeline counts as fed by one.
_MAX_FEEDERS = 256
_EXPANDS_IN_HEREDOC = re.compile(r"[$`\\]")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\+?=")
_PRIVILEGE_VALUE_OPTIONS = frozenset(
    "-u -g -h -p -C -D -r -t -U -T -c --user --group --host --prompt --close-from --chdir "
    "--role --type --other-user --command-timeout -w --whitelist-environment -s --shell".split()
)
_XARGS_LONG_VALUES = frozenset(
    "--arg-file --delimiter --eof --max-lines --max-args --max-procs --max-chars "
    "--process-slot-var".split()
)
_XARGS_LONG_FLAGS = frozenset(
    "--null --no-run-if-empty --verbose --interactive --exit --open-tty --show-limits".split()
)
_WATCH_FLAGS = frozenset(
    "b beep c color d differences e errexit g chgexit t no-title p precise w no-wrap "
    "no-linewrap r no-rerun C no-color h help v version".split()
)
_DANGER_ORDER = {"root": 0, "home": 1, "system": 2}
_DANGER_NAMES = {"root": "/", "home": "~ (a home directory)", "system": "a system directory"}
_ARITH_OPERATOR = re.compile(r"(?:^|\s)-(?:eq|ne|lt|le|gt|ge)(?:\s|$)")
_ARITH_CODE = re.compile(r"\[[^\]]*(?:\$\(|`)")
_TAR_LETTERS = frozenset("ctxruAdvzjJaf kpPOmSwWhilCTXgKLNVbMRsBGo".replace(" ", ""))
_TAR_SHORT_MODES = {"c": "create", "t": "list", "x": "extract", "r": "append",
                    "u": "update", "A": "catenate", "d": "diff"}
_TAR_LONG_MODES = {"--create": "create", "--list": "list", "--extract": "extract",
                   "--get": "extract", "--append": "append", "--update": "update",
                   "--catenate": "catenate", "--concatenate": "catenate", "--diff": "diff",
                   "--compare": "diff", "--delete": "delete"}
_TAR_LONG_VALUES = frozenset(
    "--file --directory --to-command --use-compress-program --rsh-command --rmt-command "
    "--info-script --new-volume-script --files-from --exclude-from --exclude --owner "
    "--group --mode --mtime --transform --xform --label --index-file --checkpoint-action "
    "--format --blocking-factor --tape-length --newer --after-date --newer-mtime".split()
)
_RSYNC_LONG_VALUES = frozenset(
    "--rsh --rsync-path --filter --exclude --include --exclude-from --include-from "
    "--files-from --temp-dir --partial-dir --log-file --backup-dir --suffix --block-size "
    "--chmod --chown --timeout --port --password-file --remote-option --compare-dest "
    "--copy-dest --link-dest --max-size --min-size --bwlimit --out-format --info --debug "
    "--iconv --usermap --groupmap --max-delete --modify-window --contimeout --address".split()
)
_REMOTE_PATH = re.compile(r"^(?:[\w.@-]+:(?!//)|rsync://|[\w.-]+::)")
_SSH_VALUE_OPTIONS = frozenset("BbcDEeFIiJLlmOoPpQRSWw")
_DOCKER_RUN_VALUES = frozenset(
    "-v --volume --mount -e --env --env-file -p --publish -w --workdir --name -u --user "
    "--network --net --pid --ipc --uts --userns --cgroupns --cap-add --cap-drop "
    "--security-opt --device -l --label --entrypoint --platform -m --memory --cpus "
    "--restart --hostname -h --add-host --dns --tmpfs --ulimit --log-driver --log-opt "
    "--gpus --shm-size --stop-signal --health-cmd --pull --cidfile --runtime --group-add "
    "--volumes-from --link --expose --label-file --stop-timeout --memory-swap "
    "--cpu-shares --cpuset-cpus --network-alias --ip --mac-address --sysctl --annotation "
    "-a --attach --isolation --domainname --oom-score-adj".split()
)
_SYSTEMD_RUN_VALUES = frozenset(
    "-p --property -u --unit -E --setenv -M --machine -H --host --description --slice "
    "--uid --gid --nice --working-directory -d --on-active --on-boot --on-startup "
    "--on-unit-active --on-unit-inactive --on-calendar --on-timezone-change "
    "--on-clock-change --path-property --socket-property --timer-property -t".split()
)
_GIT_INFO_OPTIONS = frozenset(
    "--version -v --help -h --html-path --man-path --info-path --exec-path --list-cmds".split()
)
_GIT_PUSH_VALUES = frozenset({"--push-option", "--repo", "--receive-pack", "--exec", "-o"})
_GIT_BRANCH_VALUES = frozenset(
    "--set-upstream-to --contains --no-contains --merged --no-merged --points-at --sort "
    "--format --column --abbrev -u -t --track".split()
)
_GIT_BRANCH_LISTING = frozenset(
    "--list --all --remotes --verbose --merged --no-merged --contains --no-contains "
    "--points-at --show-current --format --sort --column".split()
)
_GIT_TAG_VALUES = frozenset(
    "-m --message -F --file -u --local-user --contains --no-contains --merged --no-merged "
    "--points-at --sort --format --column --cleanup".split()
)
_GIT_TAG_LISTING = frozenset(
    "--list --contains --no-contains --merged --no-merged --points-at --sort --format "
    "--column".split()
)
_GIT_CHECKOUT_VALUES = frozenset({"-b", "-B", "--orphan", "--conflict", "-U"})
_GIT_SWITCH_VALUES = frozenset({"-c", "-C", "--create", "--force-create", "--orphan",
                                "--conflict"})
_GIT_CONFIG_VALUES = frozenset(
    "--file -f --blob --type --default --comment --value --url".split()
)
_GIT_CONFIG_WRITES = frozenset(
    "--unset --unset-all --add --replace-all --rename-section --remove-section --edit".split()
)
#: Rules an override cannot remove: they are about the arguments, not the program.
_NEVER_OVERRIDDEN = (
    "secret.", "read.", "write.", "pipe.", "download.", "privilege.", "env.",
)
#: Destructive rules an override does replace: they only say the program is not known.
_OVERRIDABLE = frozenset({"program.unknown", "subcommand.unknown", "git.unknown-subcommand",
                          "command.dynamic"})
_BRANCH_LIKE = re.compile(
    r"^(?:-|@\{-\d+\}|HEAD(?:[~^]\d*)*|[0-9a-f]{7,40}|v?\d+(?:\.\d+)+[\w.-]*|"
    r"[A-Za-z0-9_][\w-]*(?:[~^]\d*)*)$"
)


def _absolute_class(path: str) -> int:
    if path.startswith("/dev/"):
        if path in HARMLESS_DEVICES or path.startswith(("/dev/fd/", "/dev/shm/")):
            return _P_HARMLESS
        if path.startswith(("/dev/tcp/", "/dev/udp/")):
            return _P_ABS
        return _P_DEVICE
    if path.startswith(TMP_PREFIXES) or path in ("/tmp", "/var/tmp"):
        return _P_TMP
    return _P_ABS


def _is_secret(word: str, static: bool) -> bool:
    last = word
    for separator in "/=@:":
        if separator in last:
            last = last.rpartition(separator)[2]
    if last and (
        last[0] == "."
        or "_" in last
        or last in SECRET_NAMES
        or last.rpartition(".")[2] in SECRET_EXTENSIONS
        or not static
    ) and SECRET_FILE.fullmatch(last.rstrip("/")) is not None:
        return True
    if "/" in word and "." in word and SECRET_DIR.search(word) is not None:
        return True
    return not static and DOT_GLOB.search(word) is not None


def _known_names() -> frozenset[str]:
    return frozenset({*_PROGRAMS, *_NAMED, *_HANDLERS, *SUBCOMMANDS, *TOP_LEVEL_RUNNERS})


def _known(name: str) -> bool:
    """Is ``name`` a program the tables know (so a function of that name may be shadowing
    it, and both are classified)?"""
    return (name in _PROGRAMS or name in _NAMED or name in _HANDLERS or name in SUBCOMMANDS
            or name in TOP_LEVEL_RUNNERS)


def _modified(tier: Tier, modifiers: tuple[tuple[str, Tier], ...], words: Words,
              start: int) -> Tier:
    for flag, flagged in modifiers:
        for word in words[start:]:
            if word == flag or (word.startswith(flag) and word[len(flag) : len(flag) + 1] == "="):
                return flagged
    return tier


def _has_pattern_option(words: Words) -> bool:
    """grep-like: is the pattern given by ``-e``/``-f`` (so the first operand is a file)?"""
    for word in words[1:]:
        if word in ("--regexp", "--file") or word.startswith(("--regexp=", "--file=")):
            return True
        if word[:1] == "-" and word[1:2] != "-" and ("e" in word or "f" in word):
            return True
    return False


def _skip_options(words: Words, start: int, options: _Options, operands: int) -> int:
    """Index of the command a wrapper runs, or -1 if an option is not in its spec."""
    index = start
    count = len(words)
    while index < count:
        word = words[index]
        if word == "--":
            index += 1
            break
        if word[:1] != "-" or len(word) < 2:
            break
        if word.startswith("--"):
            name, eq, _ = word.partition("=")
            if name in options.long_values:
                index += 1 if eq else 2
            elif name in options.long_flags and not eq:
                index += 1
            else:
                return -1
            continue
        if word[1:].isdigit():  # `nice -5`
            index += 1
            continue
        takes_next = False
        for position, char in enumerate(word[1:], 1):
            if char in options.short_values:
                takes_next = position == len(word) - 1
                break
            if char not in options.short_flags:
                return -1
        index += 2 if takes_next else 1
    return index + operands


def _first_operand(words: Words, start: int) -> int:
    index = start
    while index < len(words) and words[index][:1] == "-" and len(words[index]) > 1:
        if words[index] == "--":
            return index + 1
        index += 1
    return index


def _base_name(word: str) -> str:
    return word.rpartition("/")[2]


_PASS_THROUGH = frozenset(
    "sudo doas env nice timeout nohup time stdbuf command exec builtin setsid chronic ionice "
    "xargs unbuffer proxychains proxychains4 torsocks busybox".split()
)


def _innermost(words: Words) -> str:
    """The program a (possibly wrapped) command line finally runs, roughly: wrappers, their
    options and assignments are skipped (used only to spot downloads feeding a shell)."""
    index = 0
    while index < len(words):
        name = _base_name(words[index])
        if name not in _PASS_THROUGH:
            return name
        index += 1
        while index < len(words) and (words[index][:1] == "-" or "=" in words[index] or
                                      (name == "timeout" and words[index][:1].isdigit())):
            index += 1
    return ""


def _has_download(seg: Segment) -> bool:
    if seg.words and _innermost(seg.words) in DOWNLOADERS:
        return True
    return any(_tree_has_download(sub.segments) for sub in seg.substitutions)


def _tree_has_download(segments: tuple[Segment, ...]) -> bool:
    return any(_has_download(seg) for seg in segments)


_OCTAL_MODE = re.compile(r"^0*[0-7]{1,4}$")
_SYMBOLIC_CLAUSE = re.compile(r"^([ugoa]*)((?:[-+=][rwxXstugo]*)+)$")


def _world_writable(mode: str) -> bool:
    """``777``, ``0666``, ``o+w``, ``a+rwx``, ``ugo=rwx``, ``o=u``… (others may write)."""
    if _OCTAL_MODE.match(mode):
        return int(mode[-1]) & 2 == 2
    for clause in mode.split(","):
        match = _SYMBOLIC_CLAUSE.match(clause)
        if match is None:
            continue
        who, actions = match.groups()
        if "o" not in who and "a" not in who:
            continue
        for action in re.findall(r"[-+=][rwxXstugo]*", actions):
            if action[0] in "+=" and ("w" in action or "u" in action or "g" in action):
                return True
    return False


def _setuid(mode: str) -> bool:
    if _OCTAL_MODE.match(mode):
        digits = mode.lstrip("0")
        return len(digits) == 4 and int(digits[0]) & 6 != 0
    return any(
        "s" in action and action[0] in "+="
        for clause in mode.split(",")
        for action in re.findall(r"[-+=][rwxXstugo]*", clause)
    )


def _sed_scan(script: str) -> tuple[bool, list[str], list[str]] | None:
    """Scan a sed script: (runs commands, files written, files read), or None when it does
    not parse (the caller fails closed)."""
    executes = False
    writes: list[str] = []
    reads: list[str] = []
    text = script
    length = len(text)
    index = 0

    def rest_of_line(start: int) -> tuple[str, int]:
        end = text.find("\n", start)
        end = length if end < 0 else end
        return text[start:end].strip(), end

    def delimited(start: int, delimiter: str) -> int:
        """Index just past the closing delimiter of a regex/replacement part, or -1."""
        position = start
        while position < length:
            char = text[position]
            if char == "\\":
                position += 2
                continue
            if char == delimiter:
                return position + 1
            if char == "\n" and delimiter != "\n":
                return -1
            position += 1
        return -1

    def address(start: int) -> int:
        position = start
        if position < length and text[position].isdigit():
            while position < length and (text[position].isdigit() or text[position] == "~"):
                position += 1
        elif position < length and text[position] == "$":
            position += 1
        elif position < length and text[position] in "/\\":
            if text[position] == "\\":
                if position + 1 >= length:
                    return -1
                delimiter = text[position + 1]
                position += 2
            else:
                delimiter = "/"
                position += 1
            position = delimited(position, delimiter)
            if position < 0:
                return -1
            while position < length and text[position] in "IM":
                position += 1
        return position

    while index < length:
        char = text[index]
        if char in " \t\n;":
            index += 1
            continue
        if char == "#":
            index = rest_of_line(index)[1]
            continue
        start = index
        index = address(index)
        if index < 0:
            return None
        if index > start and index < length and text[index] == ",":
            index += 1
            if index < length and text[index] in "+~":
                index += 1
                while index < length and text[index].isdigit():
                    index += 1
            else:
                index = address(index)
                if index < 0:
                    return None
        while index < length and text[index] in " \t!":
            index += 1
        if index >= length:
            return None if index > start else (executes, writes, reads)
        command = text[index]
        index += 1
        if command in "{}=dDgGhHlnNpPxzF":
            pass
        elif command in "qQLl":
            while index < length and (text[index].isdigit() or text[index] in " \t"):
                index += 1
        elif command in ":btTv":
            while index < length and text[index] not in ";\n}":
                index += 1
        elif command in "aic":
            line, index = rest_of_line(index)
            while line.endswith("\\") and index < length:
                line, index = rest_of_line(index + 1)
        elif command in "rRwW":
            name, index = rest_of_line(index)
            (reads if command in "rR" else writes).append(name)
        elif command == "e":
            executes = True
            index = rest_of_line(index)[1]
        elif command in "sy":
            if index >= length or text[index] in "\\\n":
                return None
            delimiter = text[index]
            index = delimited(index + 1, delimiter)
            if index < 0:
                return None
            index = delimited(index, delimiter)
            if index < 0:
                return None
            if command == "s":
                while index < length and (text[index] in "gpiImMe" or text[index].isdigit()):
                    executes = executes or text[index] == "e"
                    index += 1
                if index < length and text[index] in "wW":
                    name, index = rest_of_line(index + 1)
                    writes.append(name)
        else:
            return None
        while index < length and text[index] in " \t":
            index += 1
        if index < length and text[index] not in ";\n}#":
            return None
    return executes, writes, reads


def _git_flags(
    args: Words, statics: Statics, value_shorts: str, value_longs: frozenset[str]
) -> tuple[set[str], set[str], list[tuple[str, bool]]]:
    """Split git subcommand arguments into short flags (bundles expanded), long flags (without
    ``=value``) and operands; options that take a value consume it."""
    shorts: set[str] = set()
    longs: set[str] = set()
    operands: list[tuple[str, bool]] = []
    index = 0
    options_done = False
    while index < len(args):
        word = args[index]
        if options_done or word[:1] != "-" or len(word) < 2:
            operands.append((word, statics[index]))
        elif word == "--":
            options_done = True
        elif word.startswith("--"):
            name, eq, _ = word.partition("=")
            longs.add(name)
            if name in value_longs and not eq:
                index += 1
        else:
            for position, char in enumerate(word[1:], 1):
                shorts.add(char)
                if char in value_shorts or "-" + char in value_longs:
                    if position == len(word) - 1:
                        index += 1
                    break
        index += 1
    return shorts, longs, operands


def _looks_like_branch(name: str) -> bool:
    """A ref name rather than a path: ``main``, ``feature/x``, ``origin/main``, ``v1.2``,
    ``HEAD~2``, a hash, ``-``; not ``src``, ``README.md``, ``.``, ``a/b.py``."""
    if name in LIKELY_PATHS or name in (".", "..") or name.startswith(("./", "../", ":")):
        return False
    head, slash, tail = name.partition("/")
    if slash:
        return head in BRANCH_PREFIXES and _BRANCH_LIKE.match(tail.replace("/", "-")) is not None
    if "." in name and _BRANCH_LIKE.match(name) is None:
        return False
    return _BRANCH_LIKE.match(name) is not None


# =============================================================================================
# Handler registries: programs whose arguments decide their tier.
# =============================================================================================

Handler: TypeAlias = Callable[[_Context, _Found, _Call, str], None]
GitHandler: TypeAlias = Callable[[_Context, _Found, _Call, Words, Statics, list[str]], None]


def _repl(context: _Context, found: _Found, call: _Call, key: str) -> None:
    if len(call.words) == 2 and call.words[1] in _VERSION_FLAGS:
        found.add(R, "program.version", f"{key} {call.words[1]} only prints information")
    else:
        found.add(D, "interpreter.stdin", f"{key} runs code it reads (a REPL or debugger)")


def _history(context: _Context, found: _Found, call: _Call, key: str) -> None:
    if any(word in ("-l", "-ln", "-nl") for word in call.words[1:]):
        found.add(R, "shell.lookup", "fc -l lists history")
    else:
        found.add(D, "interpreter.eval", "fc re-runs commands from the history")


def _git_rewrite(context: _Context, found: _Found, call: _Call, args: Words,
                 statics: Statics, config: list[str]) -> None:
    found.add(D, "git.history-rewrite", "rewrites history; the old commits become unreachable")


def _sequencer(name: str) -> GitHandler:
    def handler(context: _Context, found: _Found, call: _Call, args: Words, statics: Statics,
                config: list[str]) -> None:
        context.git_sequencer(found, call, args, statics, config, name)

    return handler


_HANDLERS: dict[str, Handler] = {
    **{name: _Context.shell for name in SHELLS},
    **{name: _Context.interpreter for name in INTERPRETERS},
    **{name: _repl for name in REPLS},
    **{name: _Context.wrapper for name in WRAPPERS},
    **{name: _Context.privileged for name in
       "sudo doas su pkexec run0 runuser chroot sg newgrp nsenter".split()},
    **{name: _Context.awk for name in ("awk", "gawk", "mawk", "nawk")},
    **{name: _Context.reads_or_sets for name in
       ("hostname", "date", "ifconfig", "ip", "service", "journalctl", "dmesg")},
    "sed": _Context.sed, "gsed": _Context.sed, "find": _Context.find, "gfind": _Context.find,
    "fd": _Context.fd, "fdfind": _Context.fd, "xargs": _Context.xargs, "env": _Context.env,
    "command": _Context.command_builtin, "exec": _Context.exec_, "type": _Context.lookup,
    "hash": _Context.lookup, "busybox": _Context.busybox, "watch": _Context.watch,
    "flock": _Context.flock, "cd": _Context.cd, "pushd": _Context.cd, "let": _Context.let,
    "alias": _Context.alias, "trap": _Context.trap, "printenv": _Context.printenv,
    "set": _Context.set_, "crontab": _Context.crontab, "kill": _Context.kill,
    "tee": _Context.tee, "sort": _Context.sort, "uniq": _Context.uniq,
    "make": _Context.make, "gmake": _Context.make, "bmake": _Context.make,
    "rm": _Context.rm, "unlink": _Context.rm, "chmod": _Context.chmod,
    "chown": _Context.chmod, "chgrp": _Context.chmod, "tar": _Context.tar,
    "gtar": _Context.tar, "bsdtar": _Context.tar, "rsync": _Context.rsync,
    "ssh": _Context.ssh, "scp": _Context.ssh, "sftp": _Context.ssh, "git": _Context.git,
    "eval": _Context.eval_, "source": _Context.source, ".": _Context.source, "fc": _history,
    "at": _Context.at, "batch": _Context.at, "systemd-run": _Context.systemd_run,
}

#: Every program name some table knows (versioned names like python3.12 are resolved
#: only when a name is not known as it is).
_KNOWN = _known_names()
#: Program-table entries no handler overrides (looked up first: the commonest case).
_PLAIN_PROGRAMS = {
    name: entry for name, entry in _PROGRAMS.items() if name not in _HANDLERS
    and name not in _NAMED
}

_GIT_HANDLERS: dict[str, GitHandler] = {
    "push": _Context.git_push, "reset": _Context.git_reset, "clean": _Context.git_clean,
    "branch": _Context.git_branch, "tag": _Context.git_tag,
    "checkout": _Context.git_checkout, "switch": _Context.git_switch,
    "restore": _Context.git_restore, "stash": _Context.git_stash,
    "config": _Context.git_config, "remote": _Context.git_remote,
    "worktree": _Context.git_worktree, "submodule": _Context.git_submodule,
    "rebase": _Context.git_rebase, "merge": _sequencer("merge"),
    "cherry-pick": _sequencer("cherry-pick"), "revert": _sequencer("revert"),
    "am": _sequencer("am"), "bisect": _Context.git_bisect, "reflog": _Context.git_reflog,
    "update-ref": _Context.git_update_ref, "rm": _Context.git_rm, "gc": _Context.git_gc,
    "notes": _Context.git_notes, "grep": _Context.git_grep, "log": _Context.git_reader,
    "diff": _Context.git_reader, "show": _Context.git_reader,
    "format-patch": _Context.git_reader, "whatchanged": _Context.git_reader,
    "apply": _Context.git_apply, "sparse-checkout": _Context.git_listing,
    "lfs": _Context.git_listing, "difftool": _Context.git_difftool,
    "filter-branch": _git_rewrite, "filter-repo": _git_rewrite,
}
