"""When ``bash -c STRING`` only execs one program (``sandbox/bash_direct.py``): which strings
and environments qualify, and bash's own answer for what the program gets."""

from __future__ import annotations

import subprocess

import pytest

from stockade.sandbox import spawner
from stockade.sandbox.bash_direct import (
    BASH_BUILTINS,
    SYSTEM_BASH,
    DirectExec,
    direct_exec,
    plain_words,
)

BASH = SYSTEM_BASH[-1]
ENV = {"PATH": "/usr/bin:/bin", "PWD": "/work", "HOME": "/root", "LANG": "C.UTF-8"}


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("/bin/true", ("/bin/true",)),
        ("  git   status\t-s ", ("git", "status", "-s")),
        ("ls -la src/x.py", ("ls", "-la", "src/x.py")),
        ("pytest -q -k=a,b tests/unit", ("pytest", "-q", "-k=a,b", "tests/unit")),
        ("dd if=/dev/zero of=out bs=1M", ("dd", "if=/dev/zero", "of=out", "bs=1M")),
        ("./run.sh --port=8000", ("./run.sh", "--port=8000")),
    ],
)  # fmt: skip
def test_plain_commands_are_split_as_bash_splits_them(command: str, words: tuple[str, ...]) -> None:
    assert plain_words(command) == words


@pytest.mark.parametrize(
    "command",
    [
        "", "   ", "echo hi", "true", "cd src", "exec ls", "[ -f x ]", "time ls", "if",
        "A=1 env", "ls *.py", "ls file?", "ls [ab]", "ls {a,b}", "ls ~", "ls ~/x",
        "make prefix=~/x", "echo $HOME", "ls $(pwd)", "ls `pwd`", "ls 'a b'", 'ls "a"',
        "ls a\\ b", "ls > out", "ls < in", "ls | wc", "ls; ls", "ls && ls", "ls &",
        "ls # comment", "(ls)", "ls\nls", "! ls", "ls !x", "ls a^b",
    ],
)  # fmt: skip
def test_anything_bash_would_do_more_with_is_left_to_bash(command: str) -> None:
    assert plain_words(command) is None


def test_every_builtin_of_this_bash_is_known() -> None:
    """The table is bash 5.2's; a newer bash with more builtins must not have them exec'd."""
    listed = subprocess.run([BASH, "-c", "compgen -b"], capture_output=True, text=True, check=True)
    assert set(listed.stdout.split()) <= BASH_BUILTINS


def test_only_a_system_bash_with_exactly_one_command_string() -> None:
    assert direct_exec([BASH, "-c", "ls"], ENV) == DirectExec(("ls",), "0")
    assert direct_exec(["/bin/sh", "-c", "ls"], ENV) is None
    assert direct_exec(["/tmp/bash", "-c", "ls"], ENV) is None  # merely named bash
    assert direct_exec([BASH, "-c", "ls", "name"], ENV) is None  # $0 given
    assert direct_exec([BASH, "-e", "ls"], ENV) is None
    assert direct_exec([BASH, "-c", "echo hi"], ENV) is None


@pytest.mark.parametrize(
    "change",
    [
        {"BASH_ENV": "/x"}, {"ENV": "/x"}, {"SHELLOPTS": "xtrace"}, {"BASHOPTS": "extglob"},
        {"POSIXLY_CORRECT": "1"}, {"IFS": ":"}, {"EXECIGNORE": "*"}, {"OLDPWD": "/"},
        {"BASH_FUNC_ls%%": "() { echo; }"}, {"SHLVL": "x"}, {"SHLVL": "-1"}, {"SHLVL": "999"},
        {"PWD": "/work/./x"}, {"PWD": "/work/../x"}, {"PWD": "work"}, {"PWD": "/work/"},
    ],
)  # fmt: skip
def test_an_environment_bash_treats_specially_is_left_to_bash(change: dict[str, str]) -> None:
    assert direct_exec([BASH, "-c", "ls"], {**ENV, **change}) is None


def test_without_path_or_pwd_bash_decides() -> None:
    assert direct_exec([BASH, "-c", "ls"], {"PWD": "/"}) is None
    assert direct_exec([BASH, "-c", "ls"], {"PATH": "/bin"}) is None


@pytest.mark.parametrize("inherited", [None, "0", "1", "7", "998"])
def test_shlvl_is_what_bash_gives_the_program(inherited: str | None) -> None:
    env = {"PATH": "/usr/bin:/bin", "PWD": "/"}
    if inherited is not None:
        env["SHLVL"] = inherited
    chosen = direct_exec([BASH, "-c", "/usr/bin/printenv SHLVL"], env)
    assert chosen is not None
    bash = subprocess.run(
        [BASH, "-c", "/usr/bin/printenv SHLVL"], env=env, cwd="/", capture_output=True,
        text=True, check=True,
    )  # fmt: skip
    assert chosen.shlvl == bash.stdout.strip()


def test_the_request_carries_the_direct_program_and_its_shlvl() -> None:
    message = spawner.request(
        [BASH.encode(), b"-c", b"ls -l"], [b"PATH=/bin"], b"/", [], "",
        direct=[b"ls", b"-l"], shlvl=b"3",
    )  # fmt: skip
    parsed = spawner.Request(message[8:])
    assert (parsed.direct, parsed.shlvl) == ([b"ls", b"-l"], b"3")
    plain = spawner.Request(spawner.request([b"ls"], [], b"/", [], "")[8:])
    assert (plain.direct, plain.shlvl) == ([], b"")
