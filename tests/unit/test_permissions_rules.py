"""Rules: the glob language, namespaces that never cross, stable ids, the SQLite store."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from stockade.errors import ConfigError, StockadeError, UsageError
from stockade.permissions.rules import (
    Namespace,
    Rule,
    RuleBook,
    RuleDecision,
    RuleStore,
    Scope,
    SessionRules,
    canonical_project,
    config_rules,
    escape_glob,
    first_match,
    parse_rule_text,
    priority,
)


def matches(namespace: Namespace, pattern: str, subject: str) -> bool:
    rule = Rule.create(namespace, pattern, RuleDecision.ALLOW, Scope.SESSION, project="/p")
    return rule.matches(namespace, subject)


@pytest.mark.parametrize(
    ("pattern", "subject", "expected"),
    [
        ("npm test", "npm test", True),
        ("npm test", "npm test --watch", False),
        ("npm test *", "npm test", True),  # trailing " *" also covers the bare command
        ("npm test *", "npm test --watch", True),
        ("npm test *", "npm tests", False),
        ("git push *", "git push origin main", True),
        ("docker*", "docker-compose up", True),
        ("docker*", "docker", True),
        ("*install*", "npm install left-pad", True),
        ("ls [*].py", "ls *.py", True),  # [*] is a literal star
        ("ls [*].py", "ls a.py", False),
        ("ls ?", "ls a", False),  # no other glob syntax: ? and [a] are literal
        ("ls [a]", "ls a", False),
        ("ls [a]", "ls [a]", True),
        ("echo *", "echo a\nb", True),  # * crosses newlines inside quoted words
    ],
)
def test_bash_glob_language(pattern: str, subject: str, expected: bool) -> None:
    assert matches(Namespace.BASH, pattern, subject) is expected


def test_escape_glob_matches_exactly_the_text() -> None:
    text = "ls *.py && echo *"
    assert matches(Namespace.BASH, escape_glob(text), text)
    assert not matches(Namespace.BASH, escape_glob(text), "ls a.py && echo b")


@pytest.mark.parametrize(
    ("pattern", "subject", "expected"),
    [
        ("example.com", "example.com", True),
        ("example.com", "EXAMPLE.com.", True),
        ("example.com", "example.com:443", True),
        ("example.com:443", "example.com:80", False),
        ("example.com:443", "example.com", False),
        ("*.github.com", "api.github.com", True),
        ("*.github.com", "github.com", False),  # subdomains, not the apex
        ("*.github.com", "evilgithub.com", False),
        ("example.com", "not a host", False),
    ],
)
def test_domain_patterns_use_the_proxy_host_language(
    pattern: str, subject: str, expected: bool
) -> None:
    assert matches(Namespace.DOMAIN, pattern, subject) is expected


@pytest.mark.parametrize(
    ("namespace", "pattern", "subject", "expected"),
    [
        (Namespace.MCP, "mcp.github.*", "mcp.github.create_issue", True),
        (Namespace.MCP, "mcp.github.*", "mcp.gitlab.create_issue", False),
    ],
)
def test_other_namespaces(namespace: Namespace, pattern: str, subject: str, expected: bool) -> None:
    assert matches(namespace, pattern, subject) is expected


# (namespace, a pattern valid there, a subject it matches in its own namespace)
SAMPLES = [
    (Namespace.BASH, "*", "example.com"),
    (Namespace.DOMAIN, "example.com", "example.com"),
    (Namespace.MCP, "mcp.*", "mcp.example.com"),
]


@pytest.mark.parametrize(("own", "pattern", "subject"), SAMPLES)
@pytest.mark.parametrize("other", list(Namespace))
def test_a_rule_never_matches_in_another_namespace(
    own: Namespace, pattern: str, subject: str, other: Namespace
) -> None:
    rule = Rule.create(own, pattern, RuleDecision.ALLOW, Scope.SESSION, project="/p")
    assert rule.matches(other, subject) is (other is own)
    assert (first_match([rule], other, RuleDecision.ALLOW, [subject]) is not None) is (other is own)


@pytest.mark.parametrize(
    ("namespace", "pattern"),
    [
        (Namespace.BASH, "  "),
        (Namespace.DOMAIN, "*"),
        (Namespace.DOMAIN, "http://example.com/"),
        (Namespace.MCP, "github.*"),
    ],
)
def test_invalid_patterns_are_refused_with_a_fix(namespace: Namespace, pattern: str) -> None:
    with pytest.raises(UsageError) as caught:
        Rule.create(namespace, pattern, RuleDecision.ALLOW, Scope.SESSION)
    assert caught.value.fix


@pytest.mark.parametrize(
    ("text", "namespace", "pattern"),
    [
        ("npm test *", Namespace.BASH, "npm test *"),
        ("npm run test:unit", Namespace.BASH, "npm run test:unit"),
        ("domain:*.GitHub.com", Namespace.DOMAIN, "*.github.com"),
        ("mcp:mcp.github.*", Namespace.MCP, "mcp.github.*"),
        ("bash:echo a:b", Namespace.BASH, "echo a:b"),
    ],
)
def test_settings_entries_name_their_namespace(
    text: str, namespace: Namespace, pattern: str
) -> None:
    assert parse_rule_text(text) == (namespace, pattern)


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ("workspace_trust:/srv/app", "stockade trust"),
        ("hook:hook.pre-commit:3fa9c2d1", "runs no hooks of its own"),
    ],
)
def test_retired_namespaces_are_refused_with_the_reason(entry: str, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        config_rules(allow=[entry])
    assert says in caught.value.message + (caught.value.fix or "")


def test_bad_settings_entry_is_a_config_error_naming_the_list() -> None:
    with pytest.raises(ConfigError) as caught:
        config_rules(deny=["domain:*"])
    assert "[permissions] deny" in caught.value.message


def test_rule_ids_are_stable_and_distinguish_what_matters() -> None:
    def make(**kw: object) -> Rule:
        args: dict[str, object] = {
            "namespace": Namespace.BASH,
            "pattern": "npm test",
            "decision": RuleDecision.ALLOW,
            "scope": Scope.PROJECT,
            "project": "/p",
        }
        args.update(kw)
        return Rule.create(
            args["namespace"],  # type: ignore[arg-type]
            args["pattern"],  # type: ignore[arg-type]
            args["decision"],  # type: ignore[arg-type]
            args["scope"],  # type: ignore[arg-type]
            project=args["project"],  # type: ignore[arg-type]
        )

    base = make()
    assert make().id == base.id and base.id.startswith("p-")
    for change in (
        {"pattern": "npm test *"},
        {"decision": RuleDecision.DENY},
        {"project": "/q"},
        {"namespace": Namespace.MCP, "pattern": "mcp.npm"},
    ):
        assert make(**change).id != base.id
    assert make(scope=Scope.SESSION).id.startswith("s-")


def test_priority_is_deny_then_ask_then_allow_then_scope() -> None:
    def rule(decision: RuleDecision, scope: Scope) -> Rule:
        return Rule.create(Namespace.BASH, f"{decision} {scope}", decision, scope, project="/p")

    rules = [rule(d, s) for d in RuleDecision for s in Scope]
    ordered = priority(reversed(rules))
    assert [(r.decision, r.scope) for r in ordered] == [
        (d, s)
        for d in (RuleDecision.DENY, RuleDecision.ASK, RuleDecision.ALLOW)
        for s in (Scope.CONFIG, Scope.SESSION, Scope.PROJECT)
    ]


# --- the store ----------------------------------------------------------------------------


def test_store_add_list_remove_and_idempotence(tmp_path: Path) -> None:
    store = RuleStore(tmp_path / "rules.db")
    project = tmp_path / "app"
    project.mkdir()
    first = store.add(project, Namespace.BASH, "npm test *", RuleDecision.ALLOW)
    again = store.add(project, Namespace.BASH, "npm test *", RuleDecision.ALLOW)
    assert again == first
    store.add(project, Namespace.DOMAIN, "pypi.org", RuleDecision.ALLOW)
    assert [r.pattern for r in store.rules(project)] == ["npm test *", "pypi.org"]
    assert store.remove(first.id) == first
    assert store.remove(first.id) is None
    assert [r.pattern for r in store.rules(project)] == ["pypi.org"]


def test_store_is_keyed_by_the_canonical_project_path(tmp_path: Path) -> None:
    store = RuleStore(tmp_path / "rules.db")
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    other = tmp_path / "other"
    other.mkdir()
    rule = store.add(link, Namespace.BASH, "make *", RuleDecision.ALLOW)
    assert rule.project == str(real) == canonical_project(link)
    assert store.rules(real) == [rule]
    assert store.rules(f"{real}/.") == [rule]
    assert store.rules(other) == []


def test_default_store_lives_in_the_user_data_dir_not_the_project(
    tmp_path: Path, isolated_user_dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "app"
    project.mkdir()
    monkeypatch.chdir(project)
    store = RuleStore()
    store.add(project, Namespace.BASH, "ls", RuleDecision.ALLOW)
    assert store.path.is_relative_to(isolated_user_dirs / "XDG_DATA_HOME")
    assert list(project.iterdir()) == []
    assert (store.path.stat().st_mode & 0o777) == 0o600
    assert (store.path.parent.stat().st_mode & 0o777) == 0o700


def test_rules_persist_across_processes(tmp_path: Path) -> None:
    path = tmp_path / "rules.db"
    project = tmp_path / "app"
    project.mkdir()
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from stockade.permissions.rules import RuleStore, Namespace, RuleDecision\n"
        "r = RuleStore(Path(sys.argv[1])).add(sys.argv[2], Namespace.BASH, 'cargo test *',"
        " RuleDecision.DENY)\n"
        "print(r.id)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(path), str(project)],
        capture_output=True,
        text=True,
        check=True,
    )
    [rule] = RuleStore(path).rules(project)
    assert rule.id == out.stdout.strip()
    assert (rule.pattern, rule.decision) == ("cargo test *", RuleDecision.DENY)


def test_concurrent_writers_lose_no_rule(tmp_path: Path) -> None:
    path = tmp_path / "rules.db"
    project = tmp_path / "app"
    project.mkdir()
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from stockade.permissions.rules import RuleStore, Namespace, RuleDecision\n"
        "store = RuleStore(Path(sys.argv[1]))\n"
        "for i in range(40):\n"
        "    store.add(sys.argv[2], Namespace.BASH, f'job {sys.argv[3]} {i}', RuleDecision.ALLOW)\n"
    )
    processes = [
        subprocess.Popen([sys.executable, "-c", script, str(path), str(project), str(n)])
        for n in range(4)
    ]
    errors: list[BaseException] = []

    def thread_writer(n: int) -> None:
        try:
            for i in range(40):
                RuleStore(path).add(project, Namespace.BASH, f"thread {n} {i}", RuleDecision.ASK)
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=thread_writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [p.wait(timeout=120) for p in processes] == [0] * 4
    assert errors == []
    assert len(RuleStore(path).rules(project)) == 8 * 40


def test_session_rules_are_memory_only(tmp_path: Path) -> None:
    session = SessionRules("/p")
    rule = session.add(Namespace.BASH, "npm test", RuleDecision.ALLOW)
    assert rule.scope is Scope.SESSION and session.rules() == [rule]
    assert SessionRules("/p").rules() == []
    assert session.remove(rule.id) == rule and session.rules() == []


def test_session_escape_approvals_are_exact_pairs() -> None:
    session = SessionRules("/p")
    session.approve_escape("/p/src", "make deploy")
    assert session.escape_approved("/p/src", "make deploy")
    assert not session.escape_approved("/p", "make deploy")
    assert not session.escape_approved("/p/src", "make deploy ")


def test_rulebook_reads_project_rules_fresh(tmp_path: Path) -> None:
    store = RuleStore(tmp_path / "rules.db")
    book = RuleBook(str(tmp_path), config_rules(allow=["ls"]), SessionRules(str(tmp_path)), store)
    assert [r.pattern for r in book.snapshot()] == ["ls"]
    RuleStore(store.path).add(tmp_path, Namespace.BASH, "rm *", RuleDecision.DENY)
    assert [r.pattern for r in book.snapshot()] == ["rm *", "ls"]


def test_unusable_store_path_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    with pytest.raises(StockadeError) as caught:
        RuleStore(blocker / "rules.db").add(tmp_path, Namespace.BASH, "ls", RuleDecision.ALLOW)
    assert "cannot open" in caught.value.message
    assert caught.value.fix


def test_cached_reads_see_every_change(tmp_path: Path) -> None:
    path = tmp_path / "rules.db"
    mine, other = RuleStore(path), RuleStore(path)
    mine.add(tmp_path, Namespace.BASH, "a", RuleDecision.ALLOW)
    assert [r.pattern for r in mine.rules(tmp_path)] == ["a"]
    other.add(tmp_path, Namespace.BASH, "b", RuleDecision.DENY)  # another connection
    assert [r.pattern for r in mine.rules(tmp_path)] == ["a", "b"]
    rule_b = other.rules(tmp_path)[1]
    assert mine.remove(rule_b.id) == rule_b  # our own write
    assert [r.pattern for r in mine.rules(tmp_path)] == ["a"]
    assert [r.pattern for r in other.rules(tmp_path)] == ["a"]
    for suffix in ("", "-wal", "-shm"):  # the user deletes the database to start over
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    assert mine.rules(tmp_path) == []
    RuleStore(path).add(tmp_path, Namespace.BASH, "c", RuleDecision.ALLOW)
    assert [r.pattern for r in mine.rules(tmp_path)] == ["c"]


def test_a_stored_rule_this_version_cannot_evaluate_is_refused_not_skipped(
    tmp_path: Path,
) -> None:
    import sqlite3

    path = tmp_path / "rules.db"
    store = RuleStore(path)
    rule = store.add(tmp_path, Namespace.DOMAIN, "example.com", RuleDecision.DENY)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE rules SET pattern = '*' WHERE id = ?", (rule.id,))
        db.execute(
            "INSERT INTO rules VALUES ('p-future', ?, 'future_ns', 'allow', 'x', 0, '')",
            (str(tmp_path),),
        )
    with pytest.raises(ConfigError) as caught:
        RuleStore(path).rules(tmp_path)
    assert rule.id in caught.value.message and rule.id in (caught.value.fix or "")
    assert RuleStore(path).remove(rule.id) is not None  # removable all the same
    assert RuleStore(path).rules(tmp_path) == []  # the unknown namespace has no subjects here
