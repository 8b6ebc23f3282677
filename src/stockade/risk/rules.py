"""Every rule id a decision can carry, with its tier and when it applies: the one table.

The classifier's module docstring (``stockade.risk.__doc__``), :data:`RULE_IDS` and the
built-in hard denies (:data:`HARD_DENIES`, which the permissions gate applies: nothing can
allow them) are generated from :data:`RULES`. Rule ids are stable; a tier of None means the
rule's tier depends on the command (it comes from a table).

This module imports nothing heavy, so the gate can read the hard denies without loading the
classifier.
"""

from __future__ import annotations

import textwrap
from typing import NamedTuple

from stockade.tiers import Tier

R = Tier.READ_ONLY
L = Tier.LOW
M = Tier.MEDIUM
H = Tier.HIGH
D = Tier.DESTRUCTIVE


class Rule(NamedTuple):
    """One rule id: its tier (None: it depends), when it applies, and, for a built-in hard
    deny, what that deny is (as the gate names it)."""

    id: str
    tier: Tier | None
    when: str
    hard: str = ""


RULES: tuple[Rule, ...] = (
    Rule("parse.error", D, "the command does not parse as bash (ERROR/MISSING node)"),
    Rule("parse.too-long", D, "input over 64 KiB"),
    Rule("parse.too-deep", D, "substitutions/inline code nested deeper than 8"),
    Rule("parse.control-char", D, "raw control characters bash may split differently"),
    Rule("parse.invalid-text", D, "not valid UTF-8 text"),
    Rule("parse.not-text", D, "not a string"),
    Rule("parse.dropped-text", D, "the grammar skipped text, so what runs is unknown"),
    Rule("parse.misparse", D, "the grammar merged lines or tokens unreliably"),
    Rule("parse.unsupported", D, "a shell construct the parser does not model"),
    Rule("parse.internal", D, "the parser failed (bug; fail closed)"),
    Rule("parse.unavailable", D, "tree-sitter-bash is not installed"),
    Rule("internal.error", D, "the classifier failed (bug; fail closed)"),
    Rule("command.dynamic", D, "command word built from ``$…``, backticks, globs, braces"),
    Rule("program.unknown", D, "program not in the tables (the fail-closed default)"),
    Rule("program.table", None, "tier from the program table"),
    Rule("program.version", R, "``--version``/``--help``-only invocation of a known program"),
    Rule("program.override", None, "tier set by settings (``[risk] programs``)"),
    Rule("command.project-executable", M, "``./script``, ``bin/tool``: project code"),
    Rule(
        "command.outside-executable", H, "an executable outside the project (``/opt/x``, ``~/x``)"
    ),
    Rule("subcommand.table", None, "tier from a program's subcommand table (npm, cargo, …)"),
    Rule("subcommand.unknown", D, "subcommand not in the program's table"),
    Rule("subcommand.dynamic", D, "subcommand word is not static"),
    Rule(
        "wrapper.unknown-option",
        D,
        "a wrapper option we cannot parse (the wrapped command could not be found reliably)",
    ),
    Rule("wrapper.no-command", R, "a wrapper with nothing to run (``nice``, ``time``)"),
    Rule("shell.assignment", L, "bare ``NAME=value``"),
    Rule("shell.declaration", L, "``export``/``declare``/``local``/``readonly``/``unset``"),
    Rule("shell.test", R, "``[[ … ]]``, ``[ … ]``, ``test``"),
    Rule("shell.arithmetic", R, "``(( … ))``, ``let``"),
    Rule("shell.arith-injection", D, "array subscript with code in an arithmetic context"),
    Rule("shell.control", R, "``for``/``case``/``select`` word lists"),
    Rule("shell.function-call", R, "call of a function defined earlier (its body is classified)"),
    Rule("shell.fork-bomb", D, "a function that calls itself (``:(){ :|:& };:``)"),
    Rule("shell.lookup", R, "``command -v``, ``type``, ``hash`` lookups"),
    Rule("shell.redirect-only", R, "redirects without a command (targets are classified)"),
    Rule(
        "env.dump", H, "bare ``env``/``printenv``/``export -p``/``set``, ``jq env``: dumps secrets"
    ),
    Rule(
        "env.exec-hook",
        D,
        "assignment that makes programs run code (``LD_PRELOAD``, ``GIT_SSH_COMMAND``, "
        "``PAGER=…``, ``BASH_ENV``, …)",
    ),
    Rule("env.path", H, "``PATH`` changed: later program names may resolve elsewhere"),
    Rule("secret.env-var", H, "expands a variable named like a secret (``$API_TOKEN``)"),
    Rule("secret.read", H, "reads/copies a secret file (``.env``, ``~/.ssh``, ``*.pem``…)"),
    Rule("read.outside-project", H, "reads an absolute or home path with a content reader"),
    Rule("write.device", D, "writes to a raw ``/dev/*`` device (redirect, tee, cp, …)"),
    Rule("write.protected", H, "writes ``.git/hooks``, ``.git/config``, ``.stockade/``, …"),
    Rule("write.home", H, "writes a ``~``/``$HOME`` path"),
    Rule("write.outside-project", H, "writes an absolute path outside ``/tmp``"),
    Rule("write.dynamic", H, "write target is not static"),
    Rule("write.tmp", L, "writes under ``/tmp`` or ``/var/tmp``"),
    Rule("redirect.overwrite", M, "``>`` to a project file"),
    Rule("redirect.append", L, "``>>`` to a project file"),
    Rule(
        "privilege.sudo",
        D,
        "``sudo``/``doas`` anywhere",
        hard="privilege escalation (sudo *, doas *)",
    ),
    Rule(
        "privilege.switch-user", D, "``su``, ``pkexec``, ``run0``, ``runuser``, ``chroot``, ``sg``"
    ),
    Rule("system.power", D, "shutdown, reboot, halt, poweroff"),
    Rule("system.accounts", D, "useradd, userdel, passwd, visudo, …"),
    Rule("system.persistence", H, "crontab, at, systemd units: runs later, outside the session"),
    Rule("process.kill-all", D, "``kill -1``/``kill -9 -1``, ``killall5``"),
    Rule("disk.dd", D, "``dd``", hard="raw disk copy (dd *)"),
    Rule(
        "disk.mkfs",
        D,
        "``mkfs``, ``mkfs.*``, ``mke2fs``, ``mkswap``",
        hard="filesystem creation (mkfs *)",
    ),
    Rule("disk.partition", D, "fdisk, parted, wipefs, blkdiscard, cryptsetup, …"),
    Rule("fs.shred", D, "shred, wipe, srm"),
    Rule(
        "fs.recursive-system", D, "``chmod``/``chown``/``chgrp -R`` on ``/``, ``~`` or a system dir"
    ),
    Rule(
        "rm.recursive-force-root",
        D,
        "``rm`` recursive+force of ``/`` (``/``, ``/*``, ``//``, ``/.``, ``--no-preserve-root``, "
        "``$UNSET/*``, ``cd / && rm -rf *``)",
        hard="recursive force delete of / (rm -rf /)",
    ),
    Rule(
        "rm.recursive-force-home",
        D,
        "``rm`` recursive+force of ``~`` (``~``, ``~/``, ``~/*``, ``$HOME``, ``${HOME}``, "
        '``"$HOME"/*``, ``~user``)',
        hard="recursive force delete of the home directory (rm -rf ~)",
    ),
    Rule("rm.recursive-force-system", D, "``rm`` recursive+force of a top-level system directory"),
    Rule("rm.recursive-force", D, "``rm`` with recursive and force flags in any spelling"),
    Rule("rm.dynamic-flags", D, "``rm`` argument that may expand to flags (``rm $X``)"),
    Rule("rm.delete", H, "any other ``rm``/``unlink``"),
    Rule(
        "chmod.world-writable",
        D,
        "``chmod 777``, ``o+w``, ``a+rwx`` and equivalents",
        hard="world-writable permissions (chmod 777 *)",
    ),
    Rule("chmod.setuid", H, "``chmod u+s``/``4755``"),
    Rule(
        "interpreter.inline-code",
        D,
        "``python -c``, ``node -e``, ``perl -e``, …; shell code only known at run time, or in a "
        "shell language the parser does not read (``zsh -c``, ``fish -c``)",
    ),
    Rule(
        "interpreter.stdin",
        D,
        "an interpreter reading code from stdin/heredoc/terminal (static shell code in a heredoc "
        "is classified instead)",
    ),
    Rule("interpreter.script", M, "an interpreter running a project script file"),
    Rule("interpreter.outside-script", H, "… a script outside the project"),
    Rule("interpreter.dynamic-script", D, "… a script path that is not static (``bash <(…)``)"),
    Rule("interpreter.eval", D, "``eval`` of code only known at run time, ``${x@P}``, ``fc``"),
    Rule("interpreter.source", D, "``source``/``.``"),
    Rule("interpreter.source-venv", M, "``source .venv/bin/activate``"),
    Rule("pipe.to-interpreter", D, "a pipe feeding a shell or interpreter (``… | sh``)"),
    Rule(
        "download.run-downloaded",
        D,
        "a file downloaded earlier in the same command is run (``curl -o f …; sh f``, ``wget …; "
        "chmod +x f; ./f``)",
        hard="downloaded code run (curl -o f ...; sh f)",
    ),
    Rule(
        "download.pipe-to-shell",
        D,
        'downloaded content run by a shell/interpreter (``curl … | sh``, ``sh -c "$(curl …)"``, '
        "``bash <(wget …)``)",
        hard="downloaded code run by a shell (curl|wget ... | sh)",
    ),
    Rule("python.module", None, "``python -m`` module table"),
    Rule("python.unknown-module", H, "``python -m`` of an unlisted module"),
    Rule("awk.program", R, "awk program without system/getline/pipes/redirects"),
    Rule(
        "awk.exec",
        D,
        "awk program that can run commands or write files, or that is not seen (``-f``/``-E`` "
        "file, ``-i`` library, ``-l`` extension)",
    ),
    Rule("awk.in-place", M, "``gawk -i inplace``"),
    Rule("sed.exec", D, "sed ``e`` command or ``s///e`` flag"),
    Rule("sed.write", None, "sed ``w``/``W`` file (tier of the target)"),
    Rule("sed.in-place", M, "``sed -i``"),
    Rule("sed.unparsed", D, "sed script we cannot parse, or that is not seen (``-f`` file)"),
    Rule("find.delete", H, "``find … -delete``"),
    Rule("find.delete-wide", D, "``find -delete`` under ``/``, ``~`` or a system directory"),
    Rule(
        "shell.nested-code",
        None,
        "static shell code a command runs, classified like any command: ``bash -c 'ls'``, a "
        "heredoc into ``sh``, ``eval ls``, ``watch CMD``, ``trap CODE``, ``alias x=CODE``, ``ssh "
        "host CMD``, tar's ``--to-command``, rsync ``-e``, a pager option",
    ),
    Rule("archive.extract", M, "extracting an archive"),
    Rule(
        "compiler.exec-option",
        D,
        "a compiler option that runs or loads other code (``-wrapper``, ``-fplugin``, ``-B``)",
    ),
    Rule("rsync.remote", H, "rsync to/from another host"),
    Rule("rsync.delete", H, "rsync ``--delete*``/``--remove-source-files``"),
    Rule(
        "docker.host-escape",
        D,
        "``--privileged``, host namespaces, ``/`` or the docker socket mounted into a container",
    ),
    Rule(
        "docker.host-access",
        H,
        "host network, a host device, or a path outside the project mounted into a container",
    ),
    Rule("gh.api", None, "``gh api``: read-only for GET, high otherwise"),
    Rule("npm.script", None, "``npm run X``: low; deploy/publish/release scripts high"),
    Rule("git.subcommand", None, "tier from the git subcommand table"),
    Rule("git.unknown-subcommand", D, "git subcommand not in the table (alias, ``git-foo``)"),
    Rule("git.push", H, "``git push``"),
    Rule(
        "git.push-force",
        D,
        "``--force``, ``--force-with-lease``, ``-f`` in a bundle, ``+refspec``, push config "
        "overrides",
    ),
    Rule("git.push-delete", D, "``--delete``, ``:branch``, ``--mirror``, ``--prune``"),
    Rule("git.reset-hard", D, "``git reset --hard``"),
    Rule("git.clean-force", D, "``git clean`` (anything but ``-n``/``--dry-run``)"),
    Rule("git.branch-delete", D, "``git branch -d/-D/--delete``, ``update-ref -d``"),
    Rule(
        "git.discard-changes",
        D,
        "``git checkout NAME`` unless provably a branch switch (``-b``, ``NAME --``, ``-``), "
        "``git checkout -- PATH``/``-f``, ``git restore``, ``git switch --discard-changes``, "
        "``stash drop``",
    ),
    Rule("git.stash-clear", D, "``git stash clear``"),
    Rule("git.history-rewrite", D, "``filter-branch``, ``filter-repo``, ``reflog expire/delete``"),
    Rule(
        "git.exec-config",
        D,
        "``-c``/``config`` key that runs programs (``core.pager``, ``core.sshCommand``, "
        "``alias.*=!…``, ``filter.*``, …)",
    ),
    Rule(
        "git.exec-option",
        D,
        "``--upload-pack``, ``--receive-pack``, ``--exec``, ``rebase -x``, ``submodule foreach``, "
        "``ext::`` URLs",
    ),
    Rule("git.config-write", None, "``git config`` setting a key: M local, H global/system"),
)

#: Every rule id a Reason can carry.
RULE_IDS: frozenset[str] = frozenset(rule.id for rule in RULES)
#: Built-in hard denies: classifier rule id → what it is. Nothing can allow these: no rule, no
#: answer, no autonomy level (yolo included).
HARD_DENIES: dict[str, str] = {rule.id: rule.hard for rule in RULES if rule.hard}
#: The rule ids of the built-in hard denies.
HARD_DENY_RULES: frozenset[str] = frozenset(HARD_DENIES)

_LETTER = {R: "R", L: "L", M: "M", H: "H", D: "D"}


def rule_table() -> str:
    """:data:`RULES` as the reStructuredText table the classifier's docstring shows."""
    width = 65
    border = f"{'=' * 27}  {'=' * 4}  {'=' * width}"
    lines = [border, f"{'rule id':<27}  tier  when", border]
    for rule in RULES:
        letter = "\\*" if rule.tier is None else _LETTER[rule.tier]
        when = ("HARD " if rule.hard else "") + rule.when
        wrapped = textwrap.wrap(when, width) or [""]
        lines.append(f"{rule.id:<27}  {letter:<4}  {wrapped[0]}")
        lines.extend(f"{'':<27}  {'':<4}  {more}" for more in wrapped[1:])
    lines.append(border)
    return "\n".join(lines)
