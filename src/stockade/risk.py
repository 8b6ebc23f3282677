"""The risk classifier: every shell command gets one of five tiers, with the rules that decided it.

``classify("CMD")`` parses the command with :mod:`stockade.shell` and classifies every segment
(simple command), every command/process substitution and every redirect target; the command's
tier is the maximum. Everything that decides a tier is plain data near the top of this module
(program tables, subcommand tables, wrappers, interpreters, secret and path patterns) so a
reviewer can audit it in one sitting; the functions below only apply the tables.

Fail closed: whatever cannot be analysed is ``destructive`` with a reason — parse errors, a
command word that is not static, nesting deeper than 8, inputs over 64 KiB, unknown programs,
unknown git subcommands, interpreters running inline code. :func:`classify` never raises.

Rule ids are stable (the permissions layer maps some of them to built-in hard denies, marked
HARD below). Tiers: R read-only, L low, M medium, H high, D destructive, ``*`` depends.

==================================  ====  ==========================================================
rule id                             tier  when
==================================  ====  ==========================================================
parse.error                         D     the command does not parse as bash (ERROR/MISSING node)
parse.too-long                      D     input over 64 KiB
parse.too-deep                      D     substitutions/inline code nested deeper than 8
parse.control-char                  D     raw control characters bash may split differently
parse.invalid-text                  D     not valid UTF-8 text
parse.not-text                      D     not a string
parse.dropped-text                  D     the grammar skipped text, so what runs is unknown
parse.misparse                      D     the grammar merged lines or tokens unreliably
parse.unsupported                   D     a shell construct the parser does not model
parse.internal                      D     the parser failed (bug; fail closed)
parse.unavailable                   D     tree-sitter-bash is not installed
internal.error                      D     the classifier failed (bug; fail closed)
command.dynamic                     D     command word built from ``$…``, backticks, globs, braces
program.unknown                     D     program not in the tables (the fail-closed default)
program.table                       \*    tier from the program table
program.version                     R     ``--version``/``--help``-only invocation of a known program
program.override                    \*    tier set by settings (``[risk] programs``)
command.project-executable          M     ``./script``, ``bin/tool``: project code
command.outside-executable          H     an executable outside the project (``/opt/x``, ``~/x``)
subcommand.table                    \*    tier from a program's subcommand table (npm, cargo, …)
subcommand.unknown                  D     subcommand not in the program's table
subcommand.dynamic                  D     subcommand word is not static
wrapper.unknown-option              D     a wrapper option we cannot parse (the wrapped command
                                          could not be found reliably)
wrapper.no-command                  R     a wrapper with nothing to run (``nice``, ``time``)
shell.assignment                    L     bare ``NAME=value``
shell.declaration                   L     ``export``/``declare``/``local``/``readonly``/``unset``
shell.test                          R     ``[[ … ]]``, ``[ … ]``, ``test``
shell.arithmetic                    R     ``(( … ))``, ``let``
shell.arith-injection               D     array subscript with code in an arithmetic context
shell.control                       R     ``for``/``case``/``select`` word lists
shell.function-call                 R     call of a function defined earlier (its body is classified)
shell.fork-bomb                     D     a function that calls itself (``:(){ :|:& };:``)
shell.lookup                        R     ``command -v``, ``type``, ``hash`` lookups
shell.redirect-only                 R     redirects without a command (targets are classified)
env.dump                            H     bare ``env``/``printenv``/``export -p``/``set``: dumps secrets
env.exec-hook                       D     assignment that makes programs run code (``LD_PRELOAD``,
                                          ``GIT_SSH_COMMAND``, ``PAGER=…``, ``BASH_ENV``, …)
env.path                            H     ``PATH`` changed: later program names may resolve elsewhere
secret.env-var                      H     expands a variable named like a secret (``$API_TOKEN``)
secret.read                         H     reads/copies a secret file (``.env``, ``~/.ssh``, ``*.pem``…)
read.outside-project                H     reads an absolute or home path with a content reader
write.device                        D     writes to a raw ``/dev/*`` device (redirect, tee, cp, …)
write.protected                     H     writes ``.git/hooks``, ``.git/config``, ``.stockade/``, …
write.home                          H     writes a ``~``/``$HOME`` path
write.outside-project               H     writes an absolute path outside ``/tmp``
write.dynamic                       H     write target is not static
write.tmp                           L     writes under ``/tmp`` or ``/var/tmp``
redirect.overwrite                  M     ``>`` to a project file
redirect.append                     L     ``>>`` to a project file
privilege.sudo                      D     HARD ``sudo``/``doas`` anywhere
privilege.switch-user               D     ``su``, ``pkexec``, ``run0``, ``runuser``, ``chroot``, ``sg``
system.power                        D     shutdown, reboot, halt, poweroff
system.accounts                     D     useradd, userdel, passwd, visudo, …
system.persistence                  H     crontab, at, systemd units: runs later, outside the session
process.kill-all                    D     ``kill -1``/``kill -9 -1``, ``killall5``
disk.dd                             D     HARD ``dd``
disk.mkfs                           D     HARD ``mkfs``, ``mkfs.*``, ``mke2fs``, ``mkswap``
disk.partition                      D     fdisk, parted, wipefs, blkdiscard, cryptsetup, …
fs.shred                            D     shred, wipe, srm
fs.recursive-system                 D     ``chmod``/``chown``/``chgrp -R`` on ``/``, ``~`` or a system dir
rm.recursive-force-root             D     HARD ``rm`` recursive+force of ``/`` (``/``, ``/*``, ``//``,
                                          ``/.``, ``--no-preserve-root``, ``$UNSET/*``, ``cd / && rm -rf *``)
rm.recursive-force-home             D     HARD ``rm`` recursive+force of ``~`` (``~``, ``~/``, ``~/*``,
                                          ``$HOME``, ``${HOME}``, ``"$HOME"/*``, ``~user``)
rm.recursive-force-system           D     ``rm`` recursive+force of a top-level system directory
rm.recursive-force                  D     ``rm`` with recursive and force flags in any spelling
rm.dynamic-flags                    D     ``rm`` argument that may expand to flags (``rm $X``)
rm.delete                           H     any other ``rm``/``unlink``
chmod.world-writable                D     HARD ``chmod 777``, ``o+w``, ``a+rwx`` and equivalents
chmod.setuid                        H     ``chmod u+s``/``4755``
interpreter.inline-code             D     ``sh -c``, ``python -c``, ``node -e``, ``perl -e``, …
interpreter.stdin                   D     an interpreter reading code from stdin/heredoc/terminal
interpreter.script                  M     an interpreter running a project script file
interpreter.outside-script          H     … a script outside the project
interpreter.dynamic-script          D     … a script path that is not static (``bash <(…)``)
interpreter.eval                    D     ``eval``
interpreter.source                  D     ``source``/``.``
interpreter.source-venv             M     ``source .venv/bin/activate``
pipe.to-interpreter                 D     a pipe feeding a shell or interpreter (``… | sh``)
download.pipe-to-shell              D     HARD downloaded content run by a shell/interpreter
                                          (``curl … | sh``, ``sh -c "$(curl …)"``, ``bash <(wget …)``)
python.module                       \*    ``python -m`` module table
python.unknown-module               H     ``python -m`` of an unlisted module
awk.program                         R     awk program without system/getline/pipes/redirects
awk.exec                            D     awk program that can run commands or write files
sed.exec                            D     sed ``e`` command or ``s///e`` flag
sed.write                           \*    sed ``w``/``W`` file (tier of the target)
sed.in-place                        M     ``sed -i``
sed.unparsed                        D     sed script we cannot parse
find.delete                         H     ``find … -delete``
find.delete-wide                    D     ``find -delete`` under ``/``, ``~`` or a system directory
tar.exec                            D     ``--to-command``, ``--checkpoint-action=exec``, ``-I prog``
archive.extract                     M     extracting an archive
rsync.remote                        H     rsync to/from another host
rsync.delete                        H     rsync ``--delete*``/``--remove-source-files``
docker.host-escape                  D     ``--privileged``, host namespaces, ``/`` or the docker socket
                                          mounted into a container
gh.api                              \*    ``gh api``: read-only for GET, high otherwise
npm.script                          \*    ``npm run X``: low; deploy/publish/release scripts high
git.subcommand                      \*    tier from the git subcommand table
git.unknown-subcommand              D     git subcommand not in the table (alias, ``git-foo``)
git.push                            H     ``git push``
git.push-force                      D     ``--force``, ``--force-with-lease``, ``-f`` in a bundle,
                                          ``+refspec``, push config overrides
git.push-delete                     D     ``--delete``, ``:branch``, ``--mirror``, ``--prune``
git.reset-hard                      D     ``git reset --hard``
git.clean-force                     D     ``git clean`` (anything but ``-n``/``--dry-run``)
git.branch-delete                   D     ``git branch -d/-D/--delete``, ``update-ref -d``
git.discard-changes                 D     ``git checkout <path>``/``--``/``-f``, ``git restore``,
                                          ``git switch --discard-changes``, ``stash drop``
git.stash-clear                     D     ``git stash clear``
git.history-rewrite                 D     ``filter-branch``, ``filter-repo``, ``reflog expire/delete``
git.exec-config                     D     ``-c``/``config`` key that runs programs (``core.pager``,
                                          ``core.sshCommand``, ``alias.*=!…``, ``filter.*``, …)
git.exec-option                     D     ``--upload-pack``, ``--receive-pack``, ``--exec``,
                                          ``rebase -x``, ``submodule foreach``, ``ext::`` URLs
git.config-write                    \*    ``git config`` setting a key: M local, H global/system
==================================  ====  ==========================================================
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TypeAlias, Union

from stockade.shell import MAX_SUBSTITUTION_DEPTH, Redirect, Segment, parse
from stockade.tiers import Tier

__all__ = ["HARD_DENY_RULES", "RULE_IDS", "Assessment", "Reason", "classify"]

R = Tier.READ_ONLY
L = Tier.LOW
M = Tier.MEDIUM
H = Tier.HIGH
D = Tier.DESTRUCTIVE


@dataclass(frozen=True, slots=True)
class Reason:
    """Why one segment got its tier: a stable rule id, the segment text, the tier, a detail."""

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
    (R, "none", "compgen complete compopt logname bc ps pgrep pstree top htop btop"),
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
    (H, "none", "aws gcloud az doctl flyctl heroku vercel netlify wrangler firebase"),
    (H, "none", "ansible ansible-playbook pulumi vagrant packer"),
)

#: Programs that get their own rule id whatever their arguments: (rule id, tier, programs).
NAMED_PROGRAMS: tuple[tuple[str, Tier, str], ...] = (
    ("privilege.sudo", D, "sudo doas"),
    ("privilege.switch-user", D, "su pkexec run0 runuser chroot sg newgrp nsenter"),
    ("system.power", D, "shutdown reboot halt poweroff init telinit kexec"),
    ("system.accounts", D, "useradd userdel usermod adduser deluser passwd chpasswd chage"),
    ("system.accounts", D, "groupadd groupdel groupmod gpasswd visudo chsh chfn vipw vigr"),
    ("system.persistence", H, "at batch atrm systemd-run launchctl"),
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

SHELL_OPTIONS: tuple[str, str, str] = (
    "c -c --command",
    "o O -o -O +o +O --rcfile --init-file -C --init-command",
    "--version --help -h",
)

INTERPRETERS: dict[str, tuple[str, str, str]] = {
    "python": ("c", "W X --check-hash-based-pycs", "-V -VV --version -h --help -?"),
    "pypy": ("c", "W X", "-V --version -h --help"),
    "ipython": ("c", "m --profile --ipython-dir --config", "-V --version -h --help"),
    "node": ("e p --eval --print", "r --require --import --loader --experimental-loader "
             "--inspect-port --title --conditions C --input-type --env-file",
             "-v --version -h --help -c --check"),
    "ts-node": ("e p --eval --print", "r --require P --project O --compiler-options",
                "-v --version -h --help"),
    "tsx": ("e p --eval --print", "r --require --import --tsconfig", "-v --version -h --help"),
    "perl": ("e E", "I M m x C d D", "-v -V --version -h --help"),
    "ruby": ("e", "I r C E F K", "-v --version -h --help -c -y"),
    "php": ("r B R E F", "c d z t", "-v --version -h --help -l -i -m"),
    "lua": ("e", "l", "-v"),
    "luajit": ("e", "l b j", "-v"),
    "Rscript": ("e", "", "--version --help"),
    "R": ("e", "f --file", "--version --help"),
    "julia": ("e E", "p J L C O t --project", "-v --version -h --help"),
    "osascript": ("e", "l s", ""),
    "tclsh": ("", "encoding", ""),
    "wish": ("", "encoding", ""),
    "expect": ("c", "", "-v"),
    "groovy": ("e", "cp classpath", "-v --version -h --help"),
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

#: Secret files, matched against a whole argument (any directory prefix).
SECRET_PATH = re.compile(
    r"""(?x)(?:^|[/=@:])(?:
        \.env(?!\.(?:example|sample|template|dist|defaults)$)(?:[.\w*?-]*)   # .env, .env.local
      | \.envrc | \.netrc | _netrc | \.pgpass | \.npmrc | \.pypirc | \.git-credentials
      | \.dockercfg | \.vault-token | \.htpasswd | \.boto | \.s3cfg | \.my\.cnf
      | credentials(?:\.json|\.csv|\.xml|\.ya?ml)? | client_secrets?\.json
      | service[-_]account[\w.-]*\.json | secrets?\.(?:json|ya?ml|toml|env|txt)
      | id_(?:rsa|dsa|ecdsa|ed25519|xmss)(?:[\w.*-]*)?
      | [\w.*?-]*\.(?:pem|key|p12|pfx|jks|keystore|kdbx|ppk|asc|gpg|ovpn)
      | shadow | gshadow | sudoers | master\.key | kubeconfig
      | \.ssh(?:/.*)? | \.aws(?:/.*)? | \.gnupg(?:/.*)? | \.kube/config | \.docker/config\.json
      | \.config/gh(?:/.*)? | \.config/gcloud(?:/.*)? | \.azure(?:/.*)? | \.password-store(?:/.*)?
      | environ
    )/?$"""
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
    "info": R, "repl": D, "-e": "@code", "--eval": "@code", "-p": "@code", "--print": "@code",
}
_DENO: SubTable = {
    "": D, "*": "@file", "run": "@file", "eval": "@code", "repl": D, "test": L, "bench": L,
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
    "run": "@run", "shell": D, "show": R, "check": R, "version": R, "build": M,
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
    "": D, "*": "@file", "build": M, "test": L, "run": M, "repl": D, "package": {
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
                    "shell": D, "new": L, "clean": M, "status": R, "project": R,
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

#: Program → subcommand table. docker and podman share one; tools without a table but with
#: subcommand-like first words (``pdm``, ``rye``, ``pipenv``) use ``_RUN_ONLY``.
SUBCOMMANDS: dict[str, SubTable] = {
    "npm": _NPM, "pnpm": _PNPM, "yarn": _YARN, "bun": _BUN, "deno": _DENO,
    "pip": _PIP, "uv": _UV, "poetry": _POETRY, "pipx": _PIPX, "conda": _CONDA,
    "mamba": _CONDA, "micromamba": _CONDA, "hatch": _HATCH, "pdm": {**_RUN_ONLY,
    "install": H, "add": H, "sync": H, "lock": M, "build": M, "publish": D, "list": R,
    "show": R}, "rye": {**_RUN_ONLY, "sync": H, "add": H, "build": M, "publish": D,
    "test": L, "lint": R, "fmt": M}, "pipenv": {**_RUN_ONLY, "install": H, "sync": H,
    "lock": M, "graph": R, "shell": D, "check": R, "--venv": R, "--where": R},
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
    "bundle": _BUNDLE, "bundler": _BUNDLE, "tsc": {"": M, "*": M}, "eslint": {"": R, "*": R},
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
    # destructive
    "filter-branch": D, "filter-repo": D,
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
    python.module python.unknown-module awk.program awk.exec sed.exec sed.write sed.in-place
    sed.unparsed find.delete find.delete-wide tar.exec archive.extract rsync.remote
    rsync.delete docker.host-escape gh.api npm.script git.subcommand git.unknown-subcommand
    git.push git.push-force git.push-delete git.reset-hard git.clean-force git.branch-delete
    git.discard-changes git.stash-clear git.history-rewrite git.exec-config git.exec-option
    git.config-write
    """.split()
)
