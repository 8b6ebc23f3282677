"""stockade.shell: what bash would run, as segments (words unquoted, redirects, substitutions,
pipes)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stockade.shell import (
    MAX_INPUT_BYTES,
    ParsedCommand,
    Segment,
    ShellParser,
    decode_ansi_c,
    get_parser,
    parse,
)


def only(command: str) -> Segment:
    """The single segment of ``command`` (and no problems)."""
    result = parse(command)
    assert result.problems == (), result.problems
    assert len(result.segments) == 1, result.segments
    return result.segments[0]


def words(command: str) -> list[tuple[str, ...]]:
    result = parse(command)
    assert result.problems == (), result.problems
    return [segment.words for segment in result.segments]


def problem_codes(command: str) -> list[str]:
    return [problem.code for problem in parse(command).problems]


# --- unquoting -------------------------------------------------------------------------------

UNQUOTING = [
    ("ls -la", ("ls", "-la")),
    ("'r''m' -rf /", ("rm", "-rf", "/")),
    ('"rm" -rf x', ("rm", "-rf", "x")),
    ("\\rm -rf x", ("rm", "-rf", "x")),
    ("r\\m x", ("rm", "x")),
    ("/bin/rm x", ("/bin/rm", "x")),
    ("$'\\x72m' -rf /", ("rm", "-rf", "/")),
    ("$'\\162m' x", ("rm", "x")),
    ("$'\\u0072m' x", ("rm", "x")),
    ("$'r\\'m' x", ("r'm", "x")),
    ('echo "a\\"b" \'c\\d\'', ("echo", 'a"b', "c\\d")),
    ('echo "a\\nb"', ("echo", "a\\nb")),
    ("echo a\\ b", ("echo", "a b")),
    ('echo "$HOME"/x', ("echo", "$HOME/x")),
    ("echo 'it''s'", ("echo", "its")),
    ('r"m" -r"f" /', ("rm", "-rf", "/")),
    ('$"rm" x', ("rm", "x")),
    ("r\\\nm -rf /", ("rm", "-rf", "/")),
    ("echo a\\\nb", ("echo", "ab")),
    ("echo 'a;rm -rf /'", ("echo", "a;rm -rf /")),
    ("echo a#b", ("echo", "a#b")),
]


@pytest.mark.parametrize(("command", "expected"), UNQUOTING)
def test_words_are_unquoted_as_bash_does(command: str, expected: tuple[str, ...]) -> None:
    assert only(command).words == expected


@pytest.mark.parametrize(
    ("body", "decoded"),
    [
        ("\\x72m", "rm"),
        ("\\047", "'"),
        ("\\n\\t", "\n\t"),
        ("\\cA", "\x01"),
        ("\\U0001F600", "\U0001f600"),
        ("\\uD800", "\ufffd"),  # lone surrogate escapes never produce invalid text
        ("\\q", "\\q"),
        ("plain", "plain"),
    ],
)
def test_decode_ansi_c(body: str, decoded: str) -> None:
    assert decode_ansi_c(body) == decoded


# --- static vs dynamic words ---------------------------------------------------------------

STATIC = [
    ("echo plain", (True, True)),
    ("echo $HOME", (True, False)),
    ("echo ${x}", (True, False)),
    ('echo "$x"', (True, False)),
    ("echo $(date)", (True, False)),
    ("echo `date`", (True, False)),
    ("echo *.py", (True, False)),
    ("echo a?c", (True, False)),
    ("echo [ab]", (True, False)),
    ("echo {a,b}", (True, False)),
    ("echo x{1..3}", (True, False)),
    ("rm -{r,f} /", (True, False, True)),
    ("r{m,} x", (False, True)),
    ("echo '*.py'", (True, True)),
    ("echo '{a,b}'", (True, True)),
    ("echo {a','b}", (True, True)),
    ("echo \\*", (True, True)),
    ("$cmd arg", (False, True)),
    ("${cmd} arg", (False, True)),
    ("`which rm` x", (False, True)),
    ("$(which rm) x", (False, True)),
]


@pytest.mark.parametrize(("command", "expected"), STATIC)
def test_dynamic_words_are_detectable(command: str, expected: tuple[bool, ...]) -> None:
    assert only(command).static == expected


# --- assignments and env_stripped ----------------------------------------------------------


def test_leading_assignments_are_split_off() -> None:
    segment = only("FOO=bar BAZ='a b' npm run build")
    assert segment.words == ("npm", "run", "build")
    assert [(a.name, a.value, a.static) for a in segment.assignments] == [
        ("FOO", "bar", True),
        ("BAZ", "a b", True),
    ]
    assert segment.env_stripped == "npm run build"
    assert segment.text == "FOO=bar BAZ='a b' npm run build"


def test_env_stripped_keeps_trailing_redirects() -> None:
    segment = only("FOO=1 ls -la > out.txt 2>&1")
    assert segment.env_stripped == "ls -la > out.txt 2>&1"
    assert segment.text == "FOO=1 ls -la > out.txt 2>&1"


def test_bare_assignment_is_its_own_kind() -> None:
    segment = only("FOO=bar")
    assert segment.kind == "assignment"
    assert segment.words == ()
    assert segment.assignments[0].name == "FOO"


def test_assignment_with_substitution_is_dynamic_and_the_substitution_is_kept() -> None:
    segment = only("X=$(id -u)")
    assert segment.assignments[0].static is False
    assert segment.substitutions[0].segments[0].words == ("id", "-u")


def test_declaration() -> None:
    segment = only("export A=1 B")
    assert segment.kind == "declaration"
    assert segment.words == ("export", "B")
    assert segment.assignments[0].value == "1"


# --- redirects -----------------------------------------------------------------------------

REDIRECTS = [
    ("ls > out", [(">", "out", None)]),
    ("ls >> 'my log'", [(">>", "my log", None)]),
    ("ls 2>/dev/null", [(">", "/dev/null", 2)]),
    ("ls &>/dev/sda", [("&>", "/dev/sda", None)]),
    ("cat < in.txt", [("<", "in.txt", None)]),
    ("echo hi >&2", [(">&", "2", None)]),
    ("ls >| f", [(">|", "f", None)]),
    ("cmd 3>&1 1>&2 2>&3", [(">&", "1", 3), (">&", "2", 1), (">&", "3", 2)]),
    ("sh <<< 'rm -rf /'", [("<<<", "rm -rf /", None)]),
]


@pytest.mark.parametrize(("command", "expected"), REDIRECTS)
def test_redirects(command: str, expected: list[tuple[str, str, int | None]]) -> None:
    segment = only(command)
    assert [(r.op, r.target, r.fd) for r in segment.redirects] == expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("echo >&2 hi", ("echo", "hi")),
        ("echo 2>&1 hi there", ("echo", "hi", "there")),
        ("ls > f x", ("ls", "x")),
        (">&2 echo hi", ("echo", "hi")),
        ("> f x y", ("x", "y")),
    ],
)
def test_words_after_a_redirect_target_are_arguments(
    command: str, expected: tuple[str, ...]
) -> None:
    """bash: ``ls > f x`` runs ``ls x`` with stdout to f (the grammar hangs x on the redirect)."""
    assert only(command).words == expected


def test_redirect_after_a_list_applies_to_the_last_command() -> None:
    segments = parse("a && b > f x").segments
    assert segments[0].redirects == ()
    assert segments[1].words == ("b", "x")
    assert segments[1].redirects[0].target == "f"
    assert segments[1].text == "b > f x"


@pytest.mark.parametrize(
    ("command", "text", "env_stripped"),
    [
        ("a | b > f", "b > f", "b > f"),
        ("a && X=1 b 2>&1", "X=1 b 2>&1", "b 2>&1"),
        ("a | b | c > f 2>&1", "c > f 2>&1", "c > f 2>&1"),
    ],
)
def test_a_redirect_after_a_pipeline_is_part_of_the_last_segment_text(
    command: str, text: str, env_stripped: str
) -> None:
    last = parse(command).segments[-1]
    assert (last.text, last.env_stripped) == (text, env_stripped)


def test_words_after_a_redirected_group_are_a_problem() -> None:
    assert "parse.error" in problem_codes("{ ls; } > f x")


def test_heredoc_body_and_delimiter() -> None:
    segment = only("cat <<'EOF'\nhello $x\nEOF")
    (redirect,) = segment.redirects
    assert (redirect.op, redirect.target, redirect.body) == ("<<", "'EOF'", "hello $x\n")


def test_redirect_only_statement() -> None:
    segment = only("> file")
    assert segment.kind == "command" or segment.kind == "redirect"
    assert segment.redirects[0].target == "file"


# --- lists, pipelines, substitutions -------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    ["a; b", "a && b", "a || b", "a & b", "a\nb", "a;b", "a&&b", "a\n\nb", "(a; b)", "{ a; b; }"],
)
def test_separators_split_segments(command: str) -> None:
    assert words(command) == [("a",), ("b",)]


def test_comments_are_not_commands() -> None:
    assert words("ls # rm -rf /") == [("ls",)]
    assert words("# rm -rf /") == []


def test_hash_inside_a_word_is_not_a_comment_and_its_substitution_runs() -> None:
    segment = only("echo hi#$(rm -rf /)")
    assert segment.substitutions[0].segments[0].words == ("rm", "-rf", "/")


def test_pipeline_stages_and_feeders() -> None:
    segments = parse("curl -s x | tee f | sh").segments
    assert [(s.pipeline, s.stage) for s in segments] == [(1, 0), (1, 1), (1, 2)]
    assert segments[0].fed_by == ()
    assert [i for r in segments[2].fed_by for i in r] == [0, 1]


def test_spaceless_pipe() -> None:
    segments = parse("curl x|sh").segments
    assert [s.words for s in segments] == [("curl", "x"), ("sh",)]
    assert segments[1].stage == 1


def test_pipe_into_a_group_feeds_the_commands_inside() -> None:
    segments = parse("curl x | (cd /tmp && sh)").segments
    sh = segments[-1]
    assert sh.words == ("sh",)
    assert 0 in sh.fed_by[0]


def test_heredoc_piped_to_a_shell() -> None:
    segments = parse("cat <<EOF | sh\nrm -rf /\nEOF").segments
    assert segments[0].redirects[0].body == "rm -rf /\n"
    assert segments[1].words == ("sh",)
    assert segments[1].stage == 1


@pytest.mark.parametrize(
    ("command", "kind", "inner"),
    [
        ("echo $(rm -rf /)", "$(", ("rm", "-rf", "/")),
        ("echo `rm -rf /`", "`", ("rm", "-rf", "/")),
        ('echo "$(rm x)"', "$(", ("rm", "x")),
        ("diff <(ls a) b", "<(", ("ls", "a")),
        ("tee >(sh) < f", ">(", ("sh",)),
        ("echo ${x:-$(rm y)}", "$(", ("rm", "y")),
        ("echo $((1 + $(id -u)))", "$(", ("id", "-u")),
        ("[[ $(id) ]]", "$(", ("id",)),
        ("cat < <(ls)", "<(", ("ls",)),
        ("a[$(id)]=1", "$(", ("id",)),
    ],
)
def test_substitutions_are_nested_segment_lists(
    command: str, kind: str, inner: tuple[str, ...]
) -> None:
    segment = only(command)
    substitution = segment.substitutions[0]
    assert substitution.kind == kind
    assert substitution.segments[0].words == inner


def test_substitution_in_the_command_word() -> None:
    segment = only("$(echo rm) -rf /")
    assert segment.static[0] is False
    assert segment.substitutions[0].segments[0].words == ("echo", "rm")


def test_control_structures_expose_their_bodies() -> None:
    found = words("for f in *.txt; do rm $f; done")
    assert ("rm", "$f") in found
    found = words("if true; then rm x; fi")
    assert found == [("true",), ("rm", "x")]
    found = words("while read l; do echo $l; done < f")
    assert ("read", "l") in found
    found = words("case $x in a) rm -rf /;; esac")
    assert ("rm", "-rf", "/") in found


def test_function_bodies_are_segments_and_recorded() -> None:
    result = parse("f() { rm -rf /; }; f")
    assert result.functions == {"f": ("rm",)}
    assert [s.words for s in result.segments] == [("rm", "-rf", "/"), ("f",)]
    assert result.segments[0].in_function == "f"


# --- grammar disagreements that are repaired or fail closed --------------------------------


def test_swallowed_newline_after_a_pipeline_is_repaired() -> None:
    """tree-sitter-bash #347: the next line's command must not become arguments."""
    result = parse("d | l | m\nn && o")
    assert result.problems == ()
    assert [s.words for s in result.segments] == [("d",), ("l",), ("m",), ("n",), ("o",)]


def test_dropped_text_is_a_problem() -> None:
    assert "parse.dropped-text" in problem_codes("! - x=1")


# --- fail closed, never raise ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "code"),
    [
        ("a\x00b", "parse.control-char"),
        ("ls\r\n", "parse.control-char"),
        ("\ud800", "parse.invalid-text"),
        ("x" * (MAX_INPUT_BYTES + 1), "parse.too-long"),
        ("echo 'unterminated", "parse.error"),
        ("if true; then", "parse.error"),
        ("ls )", "parse.error"),
        ("{rm,-rf,/}", "parse.error"),
        ("$(" * 9 + "ls" + ")" * 9, "parse.too-deep"),
        ("( " * 150 + "ls" + " )" * 150, "parse.too-deep"),
    ],
)
def test_unanalysable_input_is_reported_as_a_problem(command: str, code: str) -> None:
    assert code in problem_codes(command)


def test_depth_eight_is_still_analysed() -> None:
    assert parse("$(" * 8 + "ls" + ")" * 8).problems == ()


def test_non_string_input_is_a_problem() -> None:
    assert problem_codes(b"ls")  # type: ignore[arg-type]


def test_huge_pipeline_stays_linear() -> None:
    result = parse("a|" * 20000 + "a")
    assert len(result.segments) == 20001
    assert result.segments[-1].fed_by == (range(0, 20000),)


def test_empty_input() -> None:
    assert parse("") == ParsedCommand("", ())
    assert parse("   \n ").segments == ()


def test_parser_is_reusable_and_shared_per_thread() -> None:
    assert get_parser() is get_parser()
    parser = ShellParser()
    assert parser.parse("ls").segments[0].words == ("ls",)
    assert parser.parse("cat x").segments[0].words == ("cat", "x")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_parse_never_raises_on_arbitrary_text(text: str) -> None:
    result = parse(text)
    assert isinstance(result, ParsedCommand)


# --- tree-sitter-bash #337: the C scanner must never see non-ASCII bytes ---------------------

CRASHERS = [
    "{\U00067876\U000b4050",
    "{\U00031860",
    "{\U000b4050",
    "echo {\U0001f600",
    "x?\U00031860",
]


def test_inputs_that_crash_the_c_scanner_are_parsed_safely() -> None:
    """Run in a child process: before the fix this was a SIGSEGV about one run in three."""
    import subprocess
    import sys

    code = (
        "from stockade.shell import parse\n"
        f"for text in {CRASHERS!r} * 40:\n"
        "    parse(text)\n"
        "print('ok')\n"
    )
    for _ in range(3):
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
        )
        assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr[-2000:]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ('git commit -m "naïve café ✓"', ("git", "commit", "-m", "naïve café ✓")),
        ("ls ~/Téléchargements", ("ls", "~/Téléchargements")),
        ("echo a\u2003b", ("echo", "a\u2003b")),  # bash does not split on Unicode spaces
        ("é=1 ls", ("é=1", "ls")),  # not an identifier, so bash runs `é=1` as the command
    ],
)
def test_non_ascii_text_is_sliced_from_the_original(
    command: str, expected: tuple[str, ...]
) -> None:
    assert only(command).words == expected


# --- heredoc spellings agents use to write files and feed interpreters -------------------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cat <<'EOF' > f.txt\nhi\nEOF", [("<<", "'EOF'"), (">", "f.txt")]),
        ("cat > f.txt <<'EOF'\nhi\nEOF", [(">", "f.txt"), ("<<", "'EOF'")]),
        ("cat <<EOF >> ~/.bashrc\nx\nEOF", [("<<", "EOF"), (">>", "~/.bashrc")]),
        ("cat <<EOF 2>/dev/null\nx\nEOF", [("<<", "EOF"), (">", "/dev/null")]),
    ],
)
def test_redirects_the_grammar_nests_in_a_heredoc_belong_to_the_command(
    command: str, expected: list[tuple[str, str]]
) -> None:
    segment = only(command)
    assert [(r.op, r.target) for r in segment.redirects] == expected


@pytest.mark.parametrize(
    "command",
    [
        "python3 - <<'EOF'\nprint(1)\nEOF",
        "python3 -<<EOF\nprint(1)\nEOF",
        "a | python3 - <<EOF\nx\nEOF",
        "a && python3 -<<EOF\nx\nEOF",
        "python3 - \\\n <<EOF\nx\nEOF",
        "python3 - 2>&1 <<EOF\nx\nEOF",
    ],
)
def test_a_dash_before_a_redirect_is_an_argument(command: str) -> None:
    """The grammar drops (or glues onto `<<`) the `-` that tells an interpreter to read stdin."""
    result = parse(command)
    assert result.problems == ()
    assert result.segments[-1].words == ("python3", "-")
    assert "<<" in [r.op for r in result.segments[-1].redirects]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("sh <<EOF -c 'rm -rf /'\nx\nEOF", ("sh", "-c", "rm -rf /")),
        ("rm <<EOF -rf /\nEOF", ("rm", "-rf", "/")),
        ('cat <<EOF a"b"c d\nx\nEOF', ("cat", "abc", "d")),
        ("cat - 2>&1", ("cat", "-")),
    ],
)
def test_words_after_a_heredoc_delimiter_are_arguments(
    command: str, expected: tuple[str, ...]
) -> None:
    """bash: ``rm <<EOF -rf /`` runs ``rm -rf /``; the grammar hangs the words on the heredoc."""
    assert only(command).words == expected


@pytest.mark.parametrize(
    ("command", "inner"),
    [
        ("cat <<EOF\n`sudo id`\nEOF", [("sudo", "id")]),
        ("cat <<EOF\nuse `ls -la` and `rm -rf /`\nEOF", [("ls", "-la"), ("rm", "-rf", "/")]),
        ("cat <<EOF\n$(id) `whoami`\nEOF", [("id",), ("whoami",)]),
    ],
)
def test_backticks_in_an_unquoted_heredoc_are_substitutions(
    command: str, inner: list[tuple[str, ...]]
) -> None:
    """The grammar leaves them as text, but bash runs them."""
    segment = only(command)
    assert [s.words for sub in segment.substitutions for s in sub.segments] == inner


@pytest.mark.parametrize(
    "command", ["cat <<'EOF'\n`id`\nEOF", 'cat <<"EOF"\n`id`\nEOF', "cat <<EOF\n\\`id\\`\nEOF"]
)
def test_quoted_heredocs_and_escaped_backticks_are_text(command: str) -> None:
    assert only(command).substitutions == ()


def test_an_unterminated_backtick_in_a_heredoc_is_a_problem() -> None:
    assert "parse.error" in problem_codes("cat <<EOF\n`id\nEOF")


@pytest.mark.parametrize("command", ["--x=y", "--x=y ls"])
def test_an_assignment_to_an_invalid_name_is_a_problem(command: str) -> None:
    """The grammar calls ``--x=y`` an assignment; bash runs it as a command."""
    assert "parse.misparse" in problem_codes(command)


@pytest.mark.parametrize("command", ["a=1", "_x=2 ls", "a[1]=x", "a[$i]=x", "x+=1"])
def test_valid_assignments_are_not_a_problem(command: str) -> None:
    assert parse(command).problems == ()


@pytest.mark.parametrize(
    ("command", "word"),
    [
        ('echo " "', " "),
        ('echo "  " x', "  "),
        ('echo " $a "', " $a "),
        ('echo "$a $b"', "$a $b"),
        ('echo "a  $(id)  b"', "a  $(id)  b"),
        ('echo $" x "', " x "),
    ],
)
def test_whitespace_inside_double_quotes_is_kept(command: str, word: str) -> None:
    """The grammar makes no node for whitespace-only string parts; it is still text."""
    assert only(command).words[1] == word


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        # (words, pipeline, stage, feeders)
        (
            "a | b | c && d",
            [("a", 1, 0, []), ("b", 1, 1, [0]), ("c", 1, 2, [0, 1]), ("d", 0, 0, [])],
        ),
        ("a | b && c | d", [("a", 1, 0, []), ("b", 1, 1, [0]), ("c", 2, 0, []), ("d", 2, 1, [2])]),
        ("a && b 2>f | c", [("a", 0, 0, []), ("b", 1, 0, []), ("c", 1, 1, [1])]),
        (
            "x && a | b 2>&1 | c",
            [("x", 0, 0, []), ("a", 1, 0, []), ("b", 1, 1, [1]), ("c", 1, 2, [1, 2])],
        ),
        (
            "curl x | tee f | cat && sh",
            [("curl", 1, 0, []), ("tee", 1, 1, [0]), ("cat", 1, 2, [0, 1]), ("sh", 0, 0, [])],
        ),
    ],
)
def test_pipes_bind_tighter_than_and_or(
    command: str, expected: list[tuple[str, int, int, list[int]]]
) -> None:
    """The grammar reads ``a | b && c`` as ``a | (b && c)``; bash runs ``(a | b) && c``."""
    segments = ShellParser(fast_path=False).parse(command).segments
    assert [
        (s.words[0], s.pipeline, s.stage, [i for r in s.fed_by for i in r]) for s in segments
    ] == expected


@pytest.mark.parametrize("command", ["A=1'q'$X.y", "A=1'q'$py.test rm -rf /", "echo $X.y$X.y"])
def test_a_dollar_cut_from_its_name_is_a_problem(command: str) -> None:
    """The grammar reads ``A=1'q'$X.y`` as ``A=1q$`` followed by a command ``X.y``."""
    assert "parse.misparse" in problem_codes(command)


@pytest.mark.parametrize("command", ["export$X", "declare$(id) x"])
def test_a_declaration_keyword_glued_to_more_text_is_a_problem(command: str) -> None:
    """``export$X`` is one word to bash: a command named ``export…`` (``exportfs``…)."""
    assert "parse.misparse" in problem_codes(command)
