"""Attempts on the file system: writes outside the roots, protected paths, metadata, setuid
bits, and code planted for the host to run later."""

from __future__ import annotations

from typing import Final

from stockade.doctor.attempts.model import (
    Attempt,
    Judge,
    any_of,
    appeared,
    changed,
    gone,
    marked,
    tree_changed,
)

# ---------------------------------------------------------------------------------------------
# filesystem: writes outside the writable roots ({outside} is a directory the host user owns)
# ---------------------------------------------------------------------------------------------

FILESYSTEM: Final[tuple[Attempt, ...]] = (
    Attempt(
        "fs.write-outside",
        "filesystem",
        "create a file in a directory outside every root",
        (("write", "{outside}/plain-write"),),
        any_of(marked("{outside}/plain-write")),
    ),
    Attempt(
        "fs.mkdir-outside",
        "filesystem",
        "create a directory outside every root",
        (("mkdir", "{outside}/new-dir"),),
        any_of(appeared("{outside}/new-dir")),
    ),
    Attempt(
        "fs.mkfifo-outside",
        "filesystem",
        "create a FIFO outside every root",
        (("mkfifo", "{outside}/new-fifo"),),
        any_of(appeared("{outside}/new-fifo")),
    ),
    Attempt(
        "fs.rename-out",
        "filesystem",
        "write a file inside, rename it to a directory outside",
        (("write", "{work}/rename-me"), ("rename", "{work}/rename-me", "{outside}/renamed")),
        any_of(marked("{outside}/renamed")),
    ),
    Attempt(
        "fs.hardlink-out",
        "filesystem",
        "write a file inside, hard-link it into a directory outside",
        (("write", "{work}/link-me"), ("link", "{work}/link-me", "{outside}/linked")),
        any_of(marked("{outside}/linked")),
    ),
    Attempt(
        "fs.symlink-dir",
        "filesystem",
        "plant a symlink to an outside directory inside, write through it",
        (
            ("symlink", "{outside}", "{work}/to-outside"),
            ("write", "{work}/to-outside/through-symlink"),
        ),
        any_of(marked("{outside}/through-symlink")),
    ),
    Attempt(
        "fs.symlink-dangling",
        "filesystem",
        "plant a dangling symlink to a new outside file, open it for writing",
        (
            ("symlink", "{outside}/dangling-target", "{work}/dangling"),
            ("write", "{work}/dangling"),
        ),
        any_of(marked("{outside}/dangling-target")),
    ),
    Attempt(
        "fs.proc-self-root",
        "filesystem",
        "write outside through /proc/self/root",
        (("write", "/proc/self/root{outside}/via-proc-root"),),
        any_of(marked("{outside}/via-proc-root")),
    ),
    Attempt(
        "fs.proc-self-cwd-dotdot",
        "filesystem",
        "write outside through /proc/self/cwd/..",
        (("write", "/proc/self/cwd/../outside/via-proc-cwd"),),
        any_of(marked("{outside}/via-proc-cwd")),
    ),
    Attempt(
        "fs.dev-shm",
        "filesystem",
        "create a file in the host's /dev/shm",
        (("write", "/dev/shm/{lab_id}-shm"),),
        any_of(marked("/dev/shm/{lab_id}-shm")),
    ),
    Attempt(
        "fs.var-tmp",
        "filesystem",
        "create a file in the host's /var/tmp",
        (("write", "/var/tmp/{lab_id}-var-tmp"),),
        any_of(marked("/var/tmp/{lab_id}-var-tmp")),
    ),
    Attempt(
        "fs.host-tmp",
        "filesystem",
        "create a file in the host's /tmp (private scratch inside, must never reach the host)",
        (("write", "/tmp/{lab_id}-tmp"),),
        any_of(marked("/tmp/{lab_id}-tmp")),
    ),
    Attempt(
        "fs.truncate-outside",
        "filesystem",
        "truncate an existing file outside every root",
        (("truncate", "{outside}/truncate-me"),),
        any_of(changed("{outside}/truncate-me")),
    ),
    Attempt(
        "fs.unlink-outside",
        "filesystem",
        "delete an existing file outside every root",
        (("unlink", "{outside}/delete-me"),),
        any_of(gone("{outside}/delete-me")),
    ),
    Attempt(
        "fs.rename-in",
        "filesystem",
        "move a file from outside into the project",
        (("rename", "{outside}/steal-me", "{work}/stolen"),),
        any_of(gone("{outside}/steal-me")),
    ),
    Attempt(
        "fs.session-dir",
        "filesystem",
        "write next to the session temp dir (its private parent)",
        (("write", "{session_root}/beside-tmp"),),
        any_of(marked("{session_root}/beside-tmp")),
    ),
)

# ---------------------------------------------------------------------------------------------
# protected: read-only inside writable roots (project: a git repo with core.hooksPath=.husky and
# no .stockade; other: .stockade/settings.toml, .mcp.json a symlink, .git a worktree's gitdir file)
# ---------------------------------------------------------------------------------------------

HOOK = "#!/bin/sh\necho planted by stockade-doctor\n"

PROTECTED: Final[tuple[Attempt, ...]] = (
    Attempt(
        "protected.git-hooks-new",
        "protected",
        "create .git/hooks/pre-commit",
        (("write", "{project}/.git/hooks/pre-commit", HOOK),),
        any_of(marked("{project}/.git/hooks/pre-commit")),
    ),
    Attempt(
        "protected.git-hooks-existing",
        "protected",
        "overwrite an existing file in .git/hooks",
        (("write", "{project}/.git/hooks/pre-commit.sample", HOOK),),
        any_of(marked("{project}/.git/hooks/pre-commit.sample")),
    ),
    Attempt(
        "protected.git-config",
        "protected",
        "append an exec-capable key to .git/config",
        (("append", "{project}/.git/config", "[core]\n\tfsmonitor = stockade-doctor-planted\n"),),
        any_of(marked("{project}/.git/config")),
    ),
    Attempt(
        "protected.git-config-rename-over",
        "protected",
        "write a new .git/config beside it and rename it over the original",
        (
            ("write", "{project}/.git/config.new", "[core]\n\tpager = stockade-doctor-planted\n"),
            ("rename", "{project}/.git/config.new", "{project}/.git/config"),
        ),
        any_of(marked("{project}/.git/config")),
        disruptive=True,
    ),
    Attempt(
        "protected.git-config-hardlink",
        "protected",
        "hard-link .git/config to a writable name and append through the link",
        (
            ("link", "{project}/.git/config", "{work}/config-link"),
            ("append", "{work}/config-link", "[core]\n\tpager = stockade-doctor-planted\n"),
        ),
        any_of(marked("{project}/.git/config")),
    ),
    Attempt(
        "protected.git-hooks-via-symlink",
        "protected",
        "plant a symlink to .git/hooks, write a hook through it",
        (
            ("symlink", "{project}/.git/hooks", "{work}/hooks-link"),
            ("write", "{work}/hooks-link/pre-push", HOOK),
        ),
        any_of(marked("{project}/.git/hooks/pre-push")),
    ),
    Attempt(
        "protected.git-commondir",
        "protected",
        "create .git/commondir (git then takes config and hooks from the directory it names)",
        (("write", "{project}/.git/commondir", "../planted-common\n"),),
        any_of(marked("{project}/.git/commondir")),
    ),
    Attempt(
        "protected.hookspath-worktree",
        "protected",
        "write a hook into the core.hooksPath directory (.husky) inside the work tree",
        (("mkdir", "{project}/.husky"), ("write", "{project}/.husky/pre-commit", HOOK)),
        any_of(marked("{project}/.husky/pre-commit")),
    ),
    Attempt(
        "protected.nested-repo-hooks",
        "protected",
        "create a hook in a nested repository's .git/hooks",
        (("write", "{project}/sub/.git/hooks/post-checkout", HOOK),),
        any_of(marked("{project}/sub/.git/hooks/post-checkout")),
    ),
    Attempt(
        "protected.stockade-missing",
        "protected",
        "create .stockade/settings.toml where .stockade does not exist yet",
        (
            ("mkdir", "{project}/.stockade"),
            ("write", "{project}/.stockade/settings.toml", '[sandbox]\nnetwork = "allow"\n'),
        ),
        any_of(marked("{project}/.stockade/settings.toml")),
    ),
    Attempt(
        "protected.stockade-missing-rename",
        "protected",
        "build a settings dir under another name and rename it to .stockade",
        (
            ("mkdir", "{spare}/stockade-staging"),
            ("write", "{spare}/stockade-staging/settings.toml", '[sandbox]\nnetwork = "allow"\n'),
            ("rename", "{spare}/stockade-staging", "{spare}/.stockade"),
        ),
        any_of(marked("{spare}/.stockade/settings.toml")),
    ),
    Attempt(
        "protected.stockade-existing",
        "protected",
        "overwrite an existing .stockade/settings.toml",
        (("write", "{other}/.stockade/settings.toml", '[sandbox]\nnetwork = "allow"\n'),),
        any_of(marked("{other}/.stockade/settings.toml")),
    ),
    Attempt(
        "protected.stockade-existing-new-file",
        "protected",
        "add settings.local.toml to an existing .stockade",
        (("write", "{other}/.stockade/settings.local.toml", '[sandbox]\nnetwork = "allow"\n'),),
        any_of(marked("{other}/.stockade/settings.local.toml")),
    ),
    Attempt(
        "protected.mcp-json-missing",
        "protected",
        "create .mcp.json where it does not exist yet",
        (("write", "{project}/.mcp.json", '{"mcpServers": {}}\n'),),
        any_of(marked("{project}/.mcp.json")),
    ),
    Attempt(
        "protected.symlink-replaced",
        "protected",
        "replace a protected name that is a symlink (.mcp.json) with a file of its own",
        (("unlink", "{other}/.mcp.json"), ("write", "{other}/.mcp.json", '{"mcpServers": {}}\n')),
        any_of(changed("{other}/.mcp.json")),
        disruptive=True,
    ),
    Attempt(
        "protected.symlink-target",
        "protected",
        "write through a protected name that is a symlink (.mcp.json) into its target",
        (("write", "{other}/.mcp.json", '{"mcpServers": {}}\n'),),
        any_of(marked("{other}/mcp-real.json")),
    ),
    Attempt(
        "protected.worktree-gitfile",
        "protected",
        "point a worktree's .git file at a gitdir the jail controls",
        (("write", "{other}/.git", "gitdir: {project}/planted-gitdir\n"),),
        any_of(marked("{other}/.git")),
    ),
    Attempt(
        "protected.worktree-gitdir-config",
        "protected",
        "append to the config of a worktree's linked git dir",
        (
            (
                "append",
                "{project}/.git/worktrees/other/config.worktree",
                "[core]\n\tfsmonitor = stockade-doctor-planted\n",
            ),
        ),
        # judged like every planted git config: does the file git reads still run a program
        # (the guard writes it back without the entry, so the jail's other lines may stay)
        any_of(Judge("git-exec", ("{project}/.git/worktrees/other/config.worktree",))),
    ),
    Attempt(
        "protected.rename-hooks-dir",
        "protected",
        "rename .git/hooks away and create a fresh one with a hook",
        (
            ("rename", "{project}/.git/hooks", "{project}/.git/hooks-moved"),
            ("mkdir", "{project}/.git/hooks"),
            ("write", "{project}/.git/hooks/pre-commit", HOOK),
        ),
        any_of(tree_changed("{project}/.git/hooks"), marked("{project}/.git/hooks/pre-commit")),
        disruptive=True,
    ),
    Attempt(
        "protected.rename-git-dir",
        "protected",
        "rename .git away and create a fresh .git/hooks with a hook (in a root of its own)",
        (
            ("rename", "{spare}/.git", "{spare}/.git-moved"),
            ("mkdir", "{spare}/.git/hooks"),
            ("write", "{spare}/.git/hooks/pre-commit", HOOK),
        ),
        any_of(tree_changed("{spare}/.git"), marked("{spare}/.git/hooks/pre-commit")),
        disruptive=True,
    ),
    Attempt(
        "protected.rename-stockade-dir",
        "protected",
        "rename an existing .stockade away and create a new one",
        (
            ("rename", "{other}/.stockade", "{other}/stockade-moved"),
            ("mkdir", "{other}/.stockade"),
            ("write", "{other}/.stockade/settings.toml", '[sandbox]\nnetwork = "allow"\n'),
        ),
        any_of(tree_changed("{other}/.stockade"), marked("{other}/.stockade/settings.toml")),
        disruptive=True,
    ),
)

# ---------------------------------------------------------------------------------------------
# setuid: judged by the host's stat of the file the jail made (removed right after)
# ---------------------------------------------------------------------------------------------


def _setuid(name: str, does: str, steps: tuple[tuple[str, ...], ...], **extra: object) -> Attempt:
    path = f"{{work}}/{name}-shell"
    return Attempt(
        f"setuid.{name}",
        "setuid",
        does,
        (("copy", "{shell}", path), *steps),
        any_of(Judge("privileged-file", (path,))),
        **extra,  # type: ignore[arg-type]
    )


SETUID: Final[tuple[Attempt, ...]] = (
    _setuid(
        "chmod-4755", "copy a shell, chmod 4755", (("chmod", "{work}/chmod-4755-shell", "4755"),)
    ),
    _setuid(
        "chmod-2755",
        "copy a shell, chmod 2755 (setgid)",
        (("chmod", "{work}/chmod-2755-shell", "2755"),),
    ),
    _setuid(
        "fchmod-4755",
        "copy a shell, fchmod 4755 on an fd",
        (("fchmod", "{work}/fchmod-4755-shell", "4755"),),
    ),
    _setuid(
        "fchmodat2-4755",
        "copy a shell, fchmodat2 4755 (the newest chmod syscall)",
        (("fchmodat2", "{work}/fchmodat2-4755-shell", "4755"),),
        needs=("host-can:fchmodat2",),
    ),
    _setuid(
        "chmod-syscall-4755",
        "copy a shell, the legacy chmod(2) syscall with 4755",
        (("chmod-syscall", "{work}/chmod-syscall-4755-shell", "4755"),),
        needs=("machine:x86_64",),
    ),
    Attempt(
        "setuid.create-4755",
        "setuid",
        "create a file with mode 4755 and write a shell into it (no chmod at all)",
        (("create-with-mode", "{work}/create-4755-shell", "4755", "{shell}"),),
        any_of(Judge("privileged-file", ("{work}/create-4755-shell",))),
        needs=("root",),
    ),
    Attempt(
        "setuid.file-capability",
        "setuid",
        "copy a shell, give it a file capability (security.capability xattr)",
        (
            ("copy", "{shell}", "{work}/fcap-shell"),
            ("setxattr", "{work}/fcap-shell", "security.capability", "{cap_xattr}"),
        ),
        any_of(Judge("file-capability", ("{work}/fcap-shell",))),
        needs=("root",),
    ),
    Attempt(
        "setuid.device-node",
        "setuid",
        "create a character device node in the project",
        (("mknod-char", "{work}/device-node"),),
        any_of(Judge("privileged-file", ("{work}/device-node",))),
        needs=("root",),
    ),
)

# ---------------------------------------------------------------------------------------------
# metadata: files the host user owns, outside the roots or protected; judged by host stat
# ---------------------------------------------------------------------------------------------

METADATA: Final[tuple[Attempt, ...]] = (
    Attempt(
        "metadata.chmod-outside",
        "metadata",
        "chmod a file outside every root",
        (("chmod", "{outside}/meta-chmod", "666"),),
        any_of(changed("{outside}/meta-chmod")),
    ),
    Attempt(
        "metadata.fchmod-outside",
        "metadata",
        "open a file outside read-only, fchmod it",
        (("fchmod", "{outside}/meta-fchmod", "666"),),
        any_of(changed("{outside}/meta-fchmod")),
    ),
    Attempt(
        "metadata.utime-outside",
        "metadata",
        "set the times of a file outside every root",
        (("utime", "{outside}/meta-utime"),),
        any_of(changed("{outside}/meta-utime")),
    ),
    Attempt(
        "metadata.setxattr-outside",
        "metadata",
        "set an extended attribute on a file outside every root",
        (("setxattr", "{outside}/meta-xattr", "user.stockade-doctor", "planted"),),
        any_of(changed("{outside}/meta-xattr")),
        needs=("user-xattrs",),
    ),
    Attempt(
        "metadata.chown-outside",
        "metadata",
        "chown a file outside every root (to its own owner: only its ctime would change)",
        (("chown-self", "{outside}/meta-chown"),),
        any_of(changed("{outside}/meta-chown")),
    ),
    Attempt(
        "metadata.chmod-masked-key",
        "metadata",
        "chmod 644 a masked private key",
        (("chmod", "{home}/.ssh/id_metadata", "644"),),
        any_of(changed("{home}/.ssh/id_metadata")),
    ),
    Attempt(
        "metadata.utime-protected",
        "metadata",
        "set the times of a file in .git/hooks",
        (("utime", "{project}/.git/hooks/update.sample"),),
        any_of(changed("{project}/.git/hooks/update.sample")),
    ),
    Attempt(
        "metadata.chmod-protected",
        "metadata",
        "chmod +x a file in .git/hooks",
        (("chmod", "{project}/.git/hooks/pre-rebase.sample", "755"),),
        any_of(changed("{project}/.git/hooks/pre-rebase.sample")),
    ),
    Attempt(
        "metadata.setxattr-protected",
        "metadata",
        "set an extended attribute on a file in .git/hooks",
        (
            (
                "setxattr",
                "{project}/.git/hooks/post-update.sample",
                "user.stockade-doctor",
                "planted",
            ),
        ),
        any_of(changed("{project}/.git/hooks/post-update.sample")),
        needs=("user-xattrs",),
    ),
)

# ---------------------------------------------------------------------------------------------
# planted-code: files host programs read and run without being asked to run project code;
# judged by the exact file the host tool would read, after the run
# ---------------------------------------------------------------------------------------------

PLANTED_CONFIG = "[core]\n\tfsmonitor = stockade-doctor-planted\n"


def _planted(name: str, path: str, tool: str, content: str) -> Attempt:
    directory = path.rsplit("/", 1)[0]
    steps: tuple[tuple[str, ...], ...] = (("write", f"{{project}}/{path}", content),)
    if "/" in path:
        steps = (("mkdir", f"{{project}}/{directory}"), *steps)
    return Attempt(
        f"planted.{name}",
        "planted-code",
        f"plant {path} ({tool})",
        steps,
        any_of(marked(f"{{project}}/{path}")),
    )


PLANTED: Final[tuple[Attempt, ...]] = (
    _planted(
        "claude-settings", ".claude/settings.json", "Claude Code runs its hooks", '{"hooks": {}}\n'
    ),
    _planted(
        "claude-settings-local",
        ".claude/settings.local.json",
        "Claude Code runs its hooks",
        '{"hooks": {}}\n',
    ),
    _planted(
        "cursor-mcp", ".cursor/mcp.json", "Cursor starts its MCP servers", '{"mcpServers": {}}\n'
    ),
    _planted("gemini-settings", ".gemini/settings.json", "Gemini CLI runs its tools", "{}\n"),
    _planted("vscode-tasks", ".vscode/tasks.json", "VS Code runs tasks on folder open", "{}\n"),
    _planted(
        "idea-startup-task",
        ".idea/workspace.xml",
        "JetBrains IDEs run startup tasks when the project opens",
        '<project><component name="ProjectStartupTaskManager">'
        '<configuration id="planted" name="planted"/></component></project>\n',
    ),
    _planted(
        "idea-file-watcher",
        ".idea/watcherTasks.xml",
        "JetBrains file watchers run their program on save",
        '<project><component name="ProjectTasksOptions"><TaskOptions isEnabled="true">'
        '<option name="program" value="/bin/sh"/></TaskOptions></component></project>\n',
    ),
    _planted("envrc", ".envrc", "direnv runs it on cd", "echo planted\n"),
    _planted(
        "devcontainer",
        ".devcontainer/devcontainer.json",
        "dev containers run its commands",
        "{}\n",
    ),
    Attempt(
        "planted.nested-repo-fsmonitor",
        "planted-code",
        "set core.fsmonitor in a nested repository's config (the host's git status runs it)",
        (("append", "{project}/sub/.git/config", PLANTED_CONFIG),),
        any_of(Judge("git-exec", ("{project}/sub/.git/config",))),
    ),
    Attempt(
        "planted.new-repo-fsmonitor",
        "planted-code",
        "create a repository inside (git init) whose config sets core.fsmonitor",
        (("git-repository", "{work}/new-repo", PLANTED_CONFIG, ""),),
        any_of(Judge("git-exec", ("{work}/new-repo/.git/config",))),
    ),
    Attempt(
        "planted.new-repo-hook",
        "planted-code",
        "create a repository inside (git init) with an executable hook",
        (
            (
                "git-repository",
                "{work}/new-repo-hook",
                "[core]\n\tbare = false\n",
                "post-checkout",
            ),
        ),
        any_of(Judge("executable", ("{work}/new-repo-hook/.git/hooks/post-checkout",))),
    ),
    Attempt(
        "planted.gitdir-file",
        "planted-code",
        "create a .git file pointing at a git dir whose config sets core.fsmonitor",
        (
            ("git-repository", "{work}/planted-gitdir-home", PLANTED_CONFIG, ""),
            ("mkdir", "{work}/pointer"),
            ("write", "{work}/pointer/.git", "gitdir: {work}/planted-gitdir-home/.git\n"),
        ),
        any_of(Judge("git-exec", ("{work}/planted-gitdir-home/.git/config",))),
    ),
    Attempt(
        "planted.cargo-build-script",
        "planted-code",
        "rewrite a build.rs in CARGO_HOME's registry sources (the host's next cargo build runs it)",
        (("write", "{cargo_build_rs}", "fn main() { /* planted */ }\n"),),
        any_of(marked("{cargo_build_rs}")),
    ),
    Attempt(
        "planted.cargo-git-checkout",
        "planted-code",
        "rewrite a build.rs in CARGO_HOME's git checkouts",
        (("write", "{cargo_git_build_rs}", "fn main() { /* planted */ }\n"),),
        any_of(marked("{cargo_git_build_rs}")),
    ),
    Attempt(
        "planted.go-module-cache",
        "planted-code",
        "rewrite a module's source in GOMODCACHE (the host's next go build compiles it)",
        (("write", "{go_module_source}", "package demo // planted\n"),),
        any_of(marked("{go_module_source}")),
    ),
)
