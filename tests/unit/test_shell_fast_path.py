"""shell.fast_parse: for the commands it accepts it must build exactly what tree-sitter builds."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stockade.shell import ShellParser, fast_parse, parse

SLOW = ShellParser(fast_path=False)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from corpus import corpus  # noqa: E402

WORDS = [
    "ls",
    "git",
    "status",
    "-la",
    "--x=y",
    "a.txt",
    "src/x.py",
    "~",
    "~/x",
    "-",
    "--",
    "'a b'",
    "'a|b;c'",
    '"x && y"',
    "''",
    '""',
    "a'b'\"c\"",
    "CC=gcc",
    "if=x",
    "@a",
    "%h:%s",
    "1",
    "22",
    "x,y",
    "+x",
    "a=b=c",
    "=",
    "./run.sh",
    "/etc/hosts",
    "'",
    '"',
    "if",
    "then",
    "export",
    "time",
    "a+=1",
    "a>f",
    "2>/dev/null",
    ">out",
    "<in",
    "&>x",
    "x;y",
    "a|b",
    "a&&b",
    "if''",
    "git@a",
    "$X",
    "${X}",
    "$(ls)",
    '"$X y"',
    "$X.y",
    '"$(date +%s)"',
    "a$(pwd)b",
    "'$(x)'",
    "$(a | b)",
    "$(ls; pwd)",
    "$1",
    '"$"',
    "${X:-y}",
    "$(",
    "$((1))",
    '"a $(echo x) b"',
    "X=$(pwd)",
    "(x)",
    "{a,b}",
    "*.py",
    "a?c",
    "'*.pyc'",
    '"*"',
    "*",
    "?",
    "src/*",
    "x*y'z'",
    "[ab]",
]
ASSIGNMENTS = ["FOO=1", "A=", "B='x y'", 'C="z"', "D=a'b'"]
REDIRECTS = [
    ">",
    ">>",
    "<",
    "2>",
    "2>&1",
    ">&2",
    "&>",
    "&>>",
    "1>&2",
    ">&",
    "2>>",
    "<<",
    ">|",
    "<>",
]
OPERATORS = ["|", "&&", "||", ";", "&", "|&", ";;"]


def token() -> st.SearchStrategy[str]:
    return st.sampled_from(WORDS + ASSIGNMENTS + REDIRECTS + OPERATORS)


def check_same(command: str) -> bool:
    """True if the fast path took the command (and then it must match tree-sitter)."""
    fast = fast_parse(command)
    if fast is None:
        return False
    assert fast == SLOW.parse(command), command
    return True


@settings(max_examples=1500, deadline=None)
@given(st.lists(token(), min_size=1, max_size=12), st.sampled_from([" ", ""]))
def test_generated_commands_parse_the_same_on_both_paths(tokens: list[str], sep: str) -> None:
    check_same(sep.join(tokens) if sep else " ".join(tokens).replace(" | ", "|"))


@settings(max_examples=1500, deadline=None)
@given(
    st.lists(token(), min_size=1, max_size=6),
    st.lists(token(), min_size=1, max_size=6),
    st.one_of(st.none(), st.lists(token(), min_size=1, max_size=6)),
)
def test_generated_if_statements_parse_the_same_on_both_paths(
    condition: list[str], then: list[str], otherwise: list[str] | None
) -> None:
    """``if A; then B; [else C;] fi`` on one line takes the fast path as ``A; B; C``."""
    command = f"if {' '.join(condition)}; then {' '.join(then)}; "
    if otherwise is not None:
        command += f"else {' '.join(otherwise)}; "
    check_same(command + "fi")


def test_the_benchmark_corpus_parses_the_same_on_both_paths() -> None:
    taken = sum(check_same(command) for command in corpus(1500))
    assert taken > 1000  # the fast path is worth having only if it takes most commands


@pytest.mark.parametrize(
    "command",
    [
        "git status",
        "ls -la > out 2>&1",
        "a | b > f",
        "a && b || c | d",
        "FOO=1 a > f",
        "A=1 B='x y'",
        "echo a'b'\"c\"",
        "x | FOO=1 y",
        "ls >&2",
        "echo >&2 hi",
        "a;",
        "  ls  ",
        "a | b 2>&1 | c",
        "git commit -m 'fix: a | b; c'",
        "cd ~ && ls ~/x",
        "a=b=c cmd",
        "echo $HOME",
        'echo "built at $(date +%s)" >> log',
        'cd "$(git rev-parse --show-toplevel)"',
        "kill $(pgrep -f x)",
        "X=$(pwd) make",
        "if true; then ls; fi",
        "if git diff --quiet; then echo clean; else echo dirty; fi",
        "if pytest -x 2>&1 | tail -5; then echo ok; fi",
    ],
)
def test_everyday_shapes_take_the_fast_path(command: str) -> None:
    assert check_same(command)


@pytest.mark.parametrize(
    "command",
    [
        "echo $1",
        "ls [ab].py",
        "echo {a,b}",
        "a & b",
        "a\nb",
        "ls # x",
        "echo \\x",
        "a\tb",
        "if a; then if b; then c; fi; fi",
        "if a; then echo then; fi",
        "if a; then b;; fi",
        "if ! a; then b; fi",
        "if a; then b; elif c; then d; fi",
        "if a; then b; fi > out",
        "export A=1",
        "a | - 2>&1",
        "(ls)",
        "ls>out",
        "a 22>f",
        "echo 'unterminated",
        "cat <<EOF\nx\nEOF",
        "a |& b",
        "a &&",
        "| a",
        "; a",
        "> f",
        "FOO=1 | cat",
        'echo "$(a $(b))"',
        "echo `id`",
        "é",
        "[ -f x ]",
        "a >& file",
        "a+=1 b",
        "--x=y",
        "- 2>&1",
    ],
)
def test_everything_else_goes_to_tree_sitter(command: str) -> None:
    assert fast_parse(command) is None


def test_parse_uses_the_fast_path_and_the_result_is_the_same() -> None:
    assert parse("git log --oneline | head -5") == SLOW.parse("git log --oneline | head -5")


def test_one_pipeline_even_when_a_stage_has_a_redirect() -> None:
    """bash runs ``a | b 2>&1 | c`` as one three-stage pipeline (the grammar nests it)."""
    segments = SLOW.parse("a | b 2>&1 | c").segments
    assert [(s.pipeline, s.stage) for s in segments] == [(1, 0), (1, 1), (1, 2)]
