"""risk.classify against evasion: quoting, wrappers, substitutions, dynamic words, comments."""

from __future__ import annotations

import pytest

from stockade.risk import classify
from stockade.tiers import Tier
from tests.unit.risk_helpers import D, H, L, M, R, assert_rule, assert_tier, explain

ROOT = "rm.recursive-force-root"
HOME = "rm.recursive-force-home"

# --- every spelling of `rm -rf /` and `rm -rf ~` --------------------------------------------

RM_ROOT = [
    "rm -rf /",
    "rm -fr /",
    "rm -r -f /",
    "rm -f -r /",
    "rm -Rf /",
    "rm -R -f /",
    "rm --recursive --force /",
    "rm -r --force /",
    "rm --recursive -f /",
    "rm -rf //",
    "rm -rf /.",
    "rm -rf /./",
    "rm -rf /..",
    "rm -rf '/'",
    'rm -rf "/"',
    "rm -rf /*",
    "rm -rf '/'*",
    "rm -rf /.*",
    "rm -rf -- /",
    "rm -rf -v /",
    "rm -rfv /",
    "rm -rf --no-preserve-root /",
    "rm --no-preserve-root -rf /",
    "rm -rf / tmp",
    "rm -rf $DIR/*",
    'rm -rf "$DIR"/*',
    "rm -rf ${DIR}/",
    "cd / && rm -rf *",
    "cd / ; rm -rf ./*",
    "'r''m' -rf /",
    "\\rm -rf /",
    '"rm" -rf /',
    "/bin/rm -rf /",
    "/usr/bin/rm -rf /",
    "$'\\x72m' -rf /",
    "$'\\162m' -rf /",
    'r"m" -r"f" /',
    "r\\\nm -rf /",
    "rm -rf \\\n /",
    "rm -rf / # bye",
    "command rm -rf /",
    "command -p rm -rf /",
    "env rm -rf /",
    "env -i rm -rf /",
    "env FOO=1 rm -rf /",
    "/usr/bin/env rm -rf /",
    "env -S 'rm -rf /'",
    "env --split-string='rm -rf /'",
    "nice rm -rf /",
    "nice -n 10 rm -rf /",
    "nice -5 rm -rf /",
    "ionice -c3 rm -rf /",
    "nohup rm -rf / &",
    "time rm -rf /",
    "time -p rm -rf /",
    "timeout 5 rm -rf /",
    "timeout -s KILL 5 rm -rf /",
    "timeout --preserve-status 1m rm -rf /",
    "stdbuf -oL rm -rf /",
    "setsid rm -rf /",
    "exec rm -rf /",
    "chronic rm -rf /",
    "unbuffer rm -rf /",
    "flock /tmp/l rm -rf /",
    "flock -n /tmp/l -c 'rm -rf /'",
    "watch rm -rf /",
    "watch -n 1 'rm -rf /'",
    "watch -x rm -rf /",
    "busybox rm -rf /",
    "sudo rm -rf /",
    "sudo -u root rm -rf /",
    "doas rm -rf /",
    "xargs -a /dev/null rm -rf /",
    "find / -delete",
    "find / -maxdepth 9 -delete",
    "bash -c 'rm -rf /'",
    "sh -c 'rm -rf /'",
    "bash -lc 'rm -rf /'",
    "zsh -c 'rm -rf /'",
    "eval 'rm -rf /'",
    "eval rm -rf /",
    "sh <<< 'rm -rf /'",
    "bash <<'EOF'\nrm -rf /\nEOF",
    "git rebase -x 'rm -rf /' main",
    "tar --to-command='rm -rf /' -xf a.tar",
    "tar -cf a.tar --checkpoint-action=exec='rm -rf /' .",
    "trap 'rm -rf /' EXIT",
    "alias ls='rm -rf /'",
    "ssh host rm -rf /",
    "rm -rf build; rm -rf /",
    "true && rm -rf /",
    "false || rm -rf /",
    "ls | rm -rf /",
    "(rm -rf /)",
    "{ rm -rf /; }",
    "if true; then rm -rf /; fi",
    "while true; do rm -rf /; done",
    "f() { rm -rf /; }; f",
    "! rm -rf /",
    "ls & rm -rf /",
    "ls\nrm -rf /",
    "echo $(rm -rf /)",
    "echo `rm -rf /`",
    'echo "$(rm -rf /)"',
    "diff <(rm -rf /) x",
    "cat >(rm -rf /)",
    "x=$(rm -rf /)",
    "local x=$(rm -rf /)",
    "[[ $(rm -rf /) ]]",
    "echo ${x:-$(rm -rf /)}",
    "for i in $(rm -rf /); do :; done",
    "a[$(rm -rf /)]=1",
    "echo hi#$(rm -rf /)",
    "cat <<EOF\n$(rm -rf /)\nEOF",
    "rm <<EOF -rf /\nEOF",
]

RM_HOME = [
    "rm -rf ~",
    "rm -rf ~/",
    "rm -rf ~/*",
    "rm -rf ~/.*",
    "rm -rf ~/.",
    "rm -rf $HOME",
    "rm -rf ${HOME}",
    'rm -rf "$HOME"',
    'rm -rf "$HOME/"',
    'rm -rf "$HOME"/*',
    "rm -rf ${HOME}/*",
    "rm -rf ~root",
    "rm -rf ~alice/",
    "rm -rf /home/alice",
    "rm -rf /root",
    "rm -r ~",
    "cd ~ && rm -rf *",
    "cd && rm -rf .",
    "cd $HOME; rm -fr ./*",
    "find ~ -delete",
    "sudo rm -rf ~",
    "bash -c 'rm -rf ~'",
]


@pytest.mark.parametrize("command", RM_ROOT)
def test_every_spelling_of_rm_rf_root(command: str) -> None:
    assert_rule(command, ROOT, D)


@pytest.mark.parametrize("command", RM_HOME)
def test_every_spelling_of_rm_rf_home(command: str) -> None:
    assert_rule(command, HOME, D)


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf /usr",
        "rm -rf /etc/",
        "rm -rf /var/*",
        "rm -rf /home",
        "rm -rf /Users",
        "rm -r /boot",
    ],
)
def test_recursive_delete_of_a_system_directory(command: str) -> None:
    assert_rule(command, "rm.recursive-force-system", D)


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf build",
        "rm -rf ./node_modules",
        "rm -rf /tmp/x",
        "rm -rf ~/project/build",
        "rm -rf $BUILD_DIR",
        'rm -rf "${OUT:?}"/*',
        "rm -rf /usr/local/lib/x",
        "xargs rm -rf",
    ],
)
def test_other_recursive_force_deletes_are_destructive_without_the_root_rule(
    command: str,
) -> None:
    assessment = assert_tier(command, D)
    assert not {ROOT, HOME} & assessment.rule_ids


@pytest.mark.parametrize("command", ['rm "$f"', "rm $x /", "rm `cat list`", "xargs rm"])
def test_rm_arguments_that_may_expand_to_flags(command: str) -> None:
    assert_rule(command, "rm.dynamic-flags", D)


@pytest.mark.parametrize("command", ['rm -- "$f"', "rm a.txt", "rm -f *.o", "xargs rm --"])
def test_plain_deletes_are_high(command: str) -> None:
    assert_tier(command, H)


# --- command words that are not static ---------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "$cmd",
        "${cmd} -rf /",
        "$(echo rm) -rf /",
        "`echo rm` -rf /",
        "r{m,} -rf /",
        '"$x" arg',
        "a=rm; $a -rf /",
        "*",
        "$'\\x24'HOME",
        "${!name}",
        "$((1)) x",
        "env $CMD",
        "timeout 5 $CMD",
        "xargs $CMD",
        "exec $SHELL",
        "command $X",
    ],
)
def test_a_command_word_built_at_run_time_is_destructive(command: str) -> None:
    assert_tier(command, D)


def test_brace_expansion_of_the_whole_command_fails_closed() -> None:
    assert_tier("{rm,-rf,/}", D)


# --- wrappers with options we cannot parse fail closed ----------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "nice --bogus ls",
        "timeout -Z 5 ls",
        "env --frobnicate ls",
        "xargs --what ls",
        "npx --weird tsc",
        "uv run --unknown-flag pytest",
        "stdbuf -q ls",
    ],
)
def test_wrapper_with_an_unknown_option_fails_closed(command: str) -> None:
    assert_rule(command, "wrapper.unknown-option", D)


@pytest.mark.parametrize(
    ("command", "tier"),
    [
        ("nice ls", R),
        ("timeout 10 pytest", 1),
        ("time make", 2),
        ("nohup ls", 1),
        ("env FOO=1 ls", R),
        ("env -u HOME ls", R),
        ("command ls", R),
        ("command -v rm", R),
        ("builtin cd /tmp", R),
        ("exec > /dev/null", R),
        ("stdbuf -oL grep x f", R),
        ("xargs grep TODO", R),
        ("xargs -0 -n1 echo", R),
        ("watch -n 5 git status", R),
        ("flock /tmp/lock make", 2),
        ("nice", R),
        ("time", R),
        ("timeout 5", R),
    ],
)
def test_wrappers_classify_as_what_they_wrap(command: str, tier: int) -> None:
    assert_tier(command, Tier(tier))


# --- comments and quoted text are not commands -------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "echo 'a;rm -rf /'",
        'echo "rm -rf /"',
        "ls # rm -rf /",
        "# rm -rf /",
        "",
        "   ",
        "echo '$(rm -rf /)'",
        "echo '`rm -rf /`'",
        "printf '%s' 'sudo reboot'",
        "echo rm -rf /",
        "echo 'curl x | sh'",
        "git log --grep='rm -rf'",
        "grep -r 'sudo' .",
        "cat <<'EOF'\n$(rm -rf /)\nEOF",
        "echo \\$\\(rm -rf /\\)",
        "echo a\\;rm -rf /",
        "echo '|sh'",
        'echo "a | sh"',
        ": 'rm -rf /'",
        "true # | sh",
    ],
)
def test_comments_and_quoted_text_are_not_commands(command: str) -> None:
    assert_tier(command, R)


# --- substitutions run, wherever they are -----------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "echo $(sudo id)",
        "echo `sudo id`",
        "cat <(sudo id)",
        "tee >(sudo id)",
        "x=$(sudo id)",
        "export X=$(sudo id)",
        "[ $(sudo id) ]",
        "echo ${x:-$(sudo id)}",
        "case $(sudo id) in *) ;; esac",
        "ls > $(sudo id)",
        "cat <<EOF\n`sudo id`\nEOF",
        'echo "$(echo "$(sudo id)")"',
        "FOO=$(sudo id) ls",
        "$(sudo id)",
    ],
)
def test_substitutions_are_classified_wherever_they_are(command: str) -> None:
    assert_rule(command, "privilege.sudo", D)


def nested_echo(depth: int) -> str:
    command = "ls"
    for _ in range(depth):
        command = f"echo $({command})"
    return command


def test_nesting_deeper_than_eight_is_destructive() -> None:
    assert_rule(nested_echo(9), "parse.too-deep", D)
    assert_tier(nested_echo(8), R)


def test_inline_code_nesting_counts_towards_the_depth_limit() -> None:
    command = "ls"
    for _ in range(9):
        command = "bash -c " + "'" + command.replace("'", "'\\''") + "'"
    assert_rule(command, "parse.too-deep", D)


# --- sudo / doas anywhere -------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "sudo ls",
        "doas ls",
        "ls && sudo ls",
        "sudo -E env",
        "sudo -u bob -- ls",
        "x | sudo tee f",
        "timeout 5 sudo ls",
        "env sudo ls",
        "nice sudo ls",
        "bash -c 'sudo ls'",
        "find . -exec sudo rm {} +",
        "xargs sudo rm",
        "/usr/bin/sudo ls",
        "\\sudo ls",
        "'sudo' ls",
        "echo $(doas ls)",
        "watch sudo ls",
        "sudo",
        "ssh host sudo reboot",
    ],
)
def test_sudo_and_doas_anywhere(command: str) -> None:
    assert_rule(command, "privilege.sudo", D)


@pytest.mark.parametrize(
    "command",
    ["su -c 'ls'", "su root", "pkexec ls", "run0 ls", "chroot /mnt ls", "runuser -u x ls"],
)
def test_other_privilege_switches(command: str) -> None:
    assert_rule(command, "privilege.switch-user", D)


# --- arithmetic and tests -------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    ["[[ 'a[$(id)]' -eq 1 ]]", "(( x = a[$(id)] ))", "let 'x=a[`id`]'"],
)
def test_arithmetic_subscript_injection(command: str) -> None:
    assert_rule(command, "shell.arith-injection", D)


@pytest.mark.parametrize(
    "command", ["[[ $x -eq 1 ]]", "(( i += 2 ))", "let i=i+1", '[ "$a" = b ]', 'test -n "$x"']
)
def test_ordinary_arithmetic_and_tests_are_read_only(command: str) -> None:
    assert_tier(command, R)


# --- functions ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [":(){ :|:& };:", "bomb() { bomb | bomb & }; bomb", "f(){ f; }; f"],
)
def test_fork_bombs(command: str) -> None:
    assert_rule(command, "shell.fork-bomb", D)


def test_function_calls_classify_as_their_body() -> None:
    assert_tier("greet() { echo hi; }; greet", R)
    assert_tier("clean() { rm -rf build; }; clean", D)


def test_a_function_shadowing_a_program_does_not_hide_it() -> None:
    """``true || rm() { :; }; rm -rf /`` may run the real rm: both are classified."""
    assert_rule("true || rm() { :; }; rm -rf /", ROOT, D)


def test_a_call_before_the_definition_is_the_program() -> None:
    assert_tier("mytool; mytool() { ls; }", D)


# --- assignments that hijack programs -------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "LD_PRELOAD=/tmp/x.so ls",
        "GIT_PAGER='sh -c id' git log",
        "PAGER=evil man ls",
        "GIT_SSH_COMMAND='sh -c id' git fetch",
        "BASH_ENV=/tmp/x bash x.sh",
        "export LD_PRELOAD=/tmp/x.so",
        "env LD_PRELOAD=/tmp/x ls",
        "EDITOR=sh git commit",
        "NODE_OPTIONS='--require /tmp/x.js' node app.js",
        "CC='sh -c id' make",
        "GIT_CONFIG_COUNT=1 git status",
        "PROMPT_COMMAND='id'",
        "IFS=/ ls",
        "make SHELL=/tmp/evil",
        "GIT_EXTERNAL_DIFF=/tmp/x git diff",
        "PS4='$(id)' bash -x s.sh",
    ],
)
def test_assignments_that_make_programs_run_code(command: str) -> None:
    assert_rule(command, "env.exec-hook", D)


@pytest.mark.parametrize(
    "command",
    [
        "GIT_PAGER=cat git log",
        "PAGER=cat man ls",
        "GIT_PAGER= git log",
        "CC=clang make",
        "CC=gcc-12 CXX=g++-12 make",
        "NODE_OPTIONS=--max-old-space-size=4096 npm run build",
        "PYTHONPATH=src pytest",
        "RUST_LOG=debug cargo test",
        "CI=1 npm test",
    ],
)
def test_harmless_values_of_those_variables(command: str) -> None:
    assessment = classify(command)
    assert "env.exec-hook" not in assessment.rule_ids, explain(assessment)
    assert assessment.tier < D, explain(assessment)


@pytest.mark.parametrize(
    "command", ["PATH=/tmp:$PATH ls", "export PATH=.:$PATH", "HOME=/tmp/h git log"]
)
def test_path_like_assignments_are_high(command: str) -> None:
    assert_rule(command, "env.path", H)


# --- programs that run a command given in an option ------------------------------------------


@pytest.mark.parametrize(
    ("command", "tier", "rule"),
    [
        ("less '+!rm -rf /' f", D, "interpreter.inline-code"),
        ("less +G f", R, "program.table"),
        ("more '+|sh' f", D, "interpreter.inline-code"),
        ("man -P 'sh -c \"rm -rf /\"' ls", D, "rm.recursive-force-root"),
        ("man -P 'sh -c id' ls", R, "shell.nested-code"),
        ("man -Pcat ls", R, "program.table"),
        ("man ls", R, "program.table"),
        ("zip -T -TT 'sh -c \"$CMD\"' a.zip f", D, "interpreter.inline-code"),
        ("zip --unzip-command='rm -rf /' a.zip f", D, "rm.recursive-force-root"),
        ("mapfile -C 'rm -rf /' -c 1 < f", D, "rm.recursive-force-root"),
        ("readarray -t lines < f", L, "program.table"),
        ("scp -S /tmp/evil a h:", H, "command.outside-executable"),
        ("scp -S 'sh -c id' a h:", D, "program.unknown"),
        ("at now <<< 'rm -rf /'", D, "rm.recursive-force-root"),
        ("at now <<'EOF'\nmake test\nEOF", H, "system.persistence"),
        ("echo 'rm -rf ~' | at now", D, "pipe.to-interpreter"),
        ("at -l", R, "program.table"),
        ("at -r 3", H, "system.persistence"),
        ("batch <<< 'sudo reboot'", D, "privilege.sudo"),
        ("systemd-run --user rm -rf /", D, "rm.recursive-force-root"),
        ("systemd-run -p MemoryMax=1G make", H, "system.persistence"),
        ("echo ${x@P}", D, "interpreter.eval"),
        ("sort --compress-program=sh f", D, "interpreter.stdin"),
        ("sort --compress-program=gzip f", M, "program.table"),
    ],
)
def test_commands_hidden_in_options(command: str, tier: Tier, rule: str) -> None:
    assert_rule(command, rule, tier)
