"""The smaller promises of the command line (issue 18, item 6), each through the real CLI."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.integration


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, **extra}


def one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert "Traceback" not in stderr
    assert len(lines) <= 2, stderr  # the message and, indented, its fix
    return lines[0]


# --- bad input ---------------------------------------------------------------------------------


def test_check_of_an_empty_command_is_bad_input(project: Path) -> None:
    for command in ("", "   "):
        result = run_cli("check", command, cwd=project)
        assert result.returncode == 2, result
        assert one_line(result.stderr) == "stockade: empty command"


# --- flags that contradict each other, or say more than they mean ------------------------------


def status(project: Path, *flags: str, **variables: str) -> dict:  # type: ignore[type-arg]
    result = run_cli("status", "--json", *flags, cwd=project, env=env(**variables))
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_allow_domain_implies_allowlist(project: Path) -> None:
    data = status(project, "--allow-domain", "example.com")
    assert data["network"] == "allowlist"
    assert data["proxy"]["allowed_domains"] == ["example.com"]


def test_allow_domain_with_another_network_mode_is_one_clear_error(project: Path) -> None:
    result = run_cli("run", "--network", "deny", "--allow-domain", "example.com", "--", "true")
    assert result.returncode == 2
    assert one_line(result.stderr) == (
        "stockade: --allow-domain needs --network allowlist, not --network deny"
    )


def test_a_pasted_url_is_taken_as_its_host(project: Path) -> None:
    data = status(project, "--allow-domain", "https://api.example.com/", "--allow-domain",
                  "http://example.org:8080")  # fmt: skip
    assert data["proxy"]["allowed_domains"] == ["api.example.com", "example.org:8080"]
    path = run_cli("status", "--allow-domain", "https://example.com/v1/x", cwd=project)
    assert path.returncode == 2
    assert "takes a host, not a URL with a path" in one_line(path.stderr)


def test_an_explicit_backend_beats_the_sandbox_off_variable(project: Path) -> None:
    data = status(project, "--backend", "bwrap", STOCKADE_SANDBOX="off")
    assert data["posture"]["backend"] == "bwrap" and data["posture"]["confined"]
    off = status(project, STOCKADE_SANDBOX="off")
    assert not off["posture"]["confined"]  # without the flag the variable still decides
    both = run_cli("run", "--unsafe", "--backend", "bwrap", "--", "true", cwd=project)
    assert both.returncode == 2 and "--unsafe contradicts --backend bwrap" in both.stderr


def test_the_fix_for_a_denied_fetch_names_settings_that_validate(
    project: Path, visible_dir: Path
) -> None:
    from stockade.errors import PermissionDenied
    from stockade.session import Session

    with Session(project, autonomy="yolo") as s, pytest.raises(PermissionDenied) as refused:
        s.fetch("https://example.com/")
    fix = refused.value.fix or ""
    keys = re.findall(r"\[(\w+)\] (\w+)", fix)
    assert ("sandbox", "network") in keys and ("network", "allowed_domains") in keys
    values = {"network": '"allowlist"', "allowed_domains": '["example.com"]'}
    text = "".join(f"[{section}]\n{key} = {values[key]}\n" for section, key in keys)
    config = visible_dir / "fix.toml"
    config.write_text(text)
    checked = run_cli("config", "validate", cwd=project, env=env(STOCKADE_CONFIG=str(config)))
    assert checked.returncode == 0, checked.stdout + checked.stderr


# --- permission rules a careful user would not want stored silently ----------------------------


def test_rules_that_allow_everything_or_nothing_are_refused(project: Path) -> None:
    everything = run_cli("permissions", "add", "allow", "*", cwd=project)
    assert everything.returncode == 2
    assert "would allow every command" in one_line(everything.stderr)
    never = run_cli("permissions", "add", "allow", "sudo *", cwd=project)
    assert never.returncode == 2
    assert "can never apply" in never.stderr and "privilege.sudo" in never.stderr
    broad = run_cli("permissions", "add", "allow", "rm *", cwd=project)
    assert broad.returncode == 0
    assert "also matches built-in hard denies (`rm -rf /`" in broad.stderr
    listed = json.loads(run_cli("permissions", "list", "--json", cwd=project).stdout)
    assert [r["pattern"] for r in listed["rules"]] == ["rm *"]


@pytest.mark.parametrize("namespace", ["hook", "workspace_trust"])
def test_retired_namespaces_are_refused_with_the_reason(project: Path, namespace: str) -> None:
    result = run_cli("permissions", "add", "allow", "--namespace", namespace, "x", cwd=project)
    assert result.returncode == 2
    assert one_line(result.stderr).startswith(f"stockade: {namespace} rules are not supported")


def test_json_on_permissions_add_and_remove(project: Path) -> None:
    added = json.loads(
        run_cli("permissions", "add", "allow", "npm test *", "--json", cwd=project).stdout
    )
    rule = added["added"]
    assert (rule["pattern"], rule["decision"], added["warnings"]) == ("npm test *", "allow", [])
    removed = json.loads(run_cli("permissions", "remove", rule["id"], "--json").stdout)
    assert removed["removed"]["id"] == rule["id"]


# --- output: --json, long commands, escapes, wrapping -------------------------------------------


def test_json_on_run_and_exec(project: Path) -> None:
    ran = run_cli("run", "--json", "--", "sh", "-c", "echo out; echo err >&2; exit 3", cwd=project)
    data = json.loads(ran.stdout)
    assert ran.returncode == 3
    assert (data["exit_code"], data["stdout"], data["stderr"]) == (3, "out\n", "err\n")
    assert data["posture"]["backend"] == "bwrap" and data["posture"]["summary"]
    done = run_cli("exec", "--yolo", "--json", "echo hi", cwd=project)
    result = json.loads(done.stdout)
    assert done.returncode == 0 and result["allowed"] and result["result"]["stdout"] == "hi\n"
    assert result["shell"].endswith("bash") and result["tier"] == "read-only"
    denied = run_cli("exec", "--json", "rm -rf /", cwd=project)
    refusal = json.loads(denied.stdout)
    assert denied.returncode == 126 and not refusal["allowed"] and refusal["result"] is None


def test_long_commands_are_clipped_for_display_and_whole_in_json(project: Path) -> None:
    long = "echo " + "x" * 5000
    assert run_cli("exec", "--yolo", long, cwd=project).returncode == 0
    shown = run_cli("ledger", cwd=project).stdout
    assert max(len(line) for line in shown.splitlines()) < 400
    assert "more characters; --json shows all" in shown
    whole = json.loads(run_cli("ledger", "--json").stdout)["entries"]
    assert whole[-1]["action"] == long
    listed = run_cli("permissions", "list", cwd=project).stdout
    assert "more characters; --json shows all" in listed and long not in listed


def test_ledger_takes_a_project(project: Path, visible_dir: Path) -> None:
    other = visible_dir / "other"
    other.mkdir()
    run_cli("exec", "--yolo", "echo here", cwd=project)
    run_cli("exec", "--yolo", "echo there", cwd=other)
    mine = json.loads(run_cli("ledger", "--project", str(project), "--json").stdout)["entries"]
    assert [e["action"] for e in mine] == ["echo here"]


def test_control_and_bidi_characters_are_escaped_when_printed(project: Path) -> None:
    tricky = "echo safe \u202e\u2066 # \x1b[2J\x07done"
    run_cli("exec", "--yolo", tricky, cwd=project)
    for output in (
        run_cli("ledger", cwd=project).stdout,
        run_cli("permissions", "list", cwd=project).stdout,
        run_cli("check", tricky, cwd=project).stdout,
    ):
        assert "\\u202e\\u2066" in output and "\\x1b[2J\\x07" in output, output
        assert not any(c in output for c in "\u202e\u2066\x1b\x07")


def test_piped_status_and_doctor_are_not_wrapped_at_80_columns(project: Path) -> None:
    for command in ("status", "doctor"):
        out = run_cli(command, cwd=project).stdout
        posture = next(line for line in out.splitlines() if "bwrap (proven)" in line)
        assert len(posture) > 80 and "seccomp" in posture, out


def test_no_help_text_offers_a_container_backend() -> None:
    commands = [[], ["run"], ["status"], ["doctor"], ["exec"], ["check"], ["mcp"], ["classify"],
                ["permissions"], ["permissions", "add"], ["permissions", "list"], ["ledger"],
                ["config"], ["config", "show"], ["trust"]]  # fmt: skip
    for words in commands:
        shown = run_cli(*words, "--help").stdout
        assert "Usage:" in shown and "container" not in shown.lower(), words


# --- a damaged ledger or rules database ---------------------------------------------------------


def data_dir(tmp: Path) -> Path:
    path = Path(os.environ["XDG_DATA_HOME"]) / "stockade"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.mark.parametrize("damage", [b"\x8f" * 8192, b"SQLite format 3\x00" + b"\xff" * 8000])
def test_an_unreadable_ledger_is_moved_aside_in_one_line(
    project: Path, damage: bytes, tmp_path: Path
) -> None:
    ledger = data_dir(tmp_path) / "ledger.db"
    ledger.write_bytes(damage)
    result = run_cli("run", "--", "echo", "ran", cwd=project)
    assert (result.returncode, result.stdout) == (0, "ran\n")
    line = one_line(result.stderr)
    assert line.startswith(f"stockade: warning: the ledger {ledger} was unreadable (")
    moved = re.search(r"moved it to (\S+) and started a new ledger", line)
    assert moved and Path(moved.group(1)).read_bytes() == damage
    again = run_cli("run", "--", "true", cwd=project)
    assert again.returncode == 0 and again.stderr == ""  # said once
    entries = json.loads(run_cli("ledger", "--json").stdout)["entries"]
    assert [e["action"] for e in entries] == ["echo ran", "true"]


def test_an_unreadable_rules_database_is_refused_not_replaced(
    project: Path, tmp_path: Path
) -> None:
    rules = data_dir(tmp_path) / "permissions.db"
    rules.write_bytes(b"\x8f" * 8192)
    result = run_cli("exec", "--yolo", "true", cwd=project)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert f"the permission rules database {rules} is unreadable" in result.stderr
    assert rules.read_bytes() == b"\x8f" * 8192  # never silently replaced: its denies matter


def test_permissions_list_shows_workspace_trust_as_stockade_trust_records_it(
    project: Path,
) -> None:
    (project / ".stockade").mkdir()
    (project / ".stockade" / "settings.toml").write_text('[sandbox]\nnetwork = "allow"\n')

    def trust() -> dict:  # type: ignore[type-arg]
        listed = run_cli("permissions", "list", "--json", cwd=project)
        return json.loads(listed.stdout)["workspace_trust"]  # type: ignore[no-any-return]

    assert (trust()["needed"], trust()["trusted"]) == (True, False)
    assert run_cli("trust", "--yes", cwd=project).returncode == 0
    assert trust()["trusted"] and trust()["since"]
    assert "workspace trust: trusted since" in run_cli("permissions", "list", cwd=project).stdout


def test_old_rows_of_retired_namespaces_are_listed_as_ignored(project: Path) -> None:
    import sqlite3

    from stockade.permissions.rules import Namespace, RuleDecision, RuleStore

    store = RuleStore()
    store.add(project, Namespace.BASH, "npm test *", RuleDecision.ALLOW)  # creates the db
    with sqlite3.connect(store.path) as db:
        db.execute(
            "INSERT INTO rules VALUES ('p-old', ?, 'hook', 'allow', 'hook.x:1', 0, '')",
            (str(project),),
        )
    shown = run_cli("permissions", "list", cwd=project)
    assert shown.returncode == 0, shown.stderr
    assert "ignored: p-old  hook:hook.x:1 (retired namespace" in shown.stdout
    assert run_cli("permissions", "remove", "p-old").returncode == 0
