"""Pure logic of the agent-facing tools: the bash tool's argument check, the MCP server's strict
JSON types, elicitation questions and answers."""

from __future__ import annotations

import mcp_types as types
import pytest

from stockade.elicitation import answer_schema, question_key
from stockade.errors import UsageError
from stockade.mcp import answer_from, json_type_ok
from stockade.permissions.prompt import Choice, PromptRequest
from stockade.session import TOOL_PROPERTIES, check_tool_arguments, tool_schema
from stockade.tiers import Tier


def test_the_schema_lists_exactly_the_checked_arguments() -> None:
    schema = tool_schema()["input_schema"]
    assert list(schema["properties"]) == list(TOOL_PROPERTIES)
    full = {
        "command": "ls",
        "cwd": "src",
        "timeout": 2.5,
        "description": "list",
        "escape_sandbox": False,
        "run_in_background": True,
    }
    assert check_tool_arguments(full) == full
    assert check_tool_arguments({"command": "ls", "cwd": None}) == {"command": "ls"}


@pytest.mark.parametrize(
    "arguments",
    [
        {"command": "ls", "mode": "none"},
        {"command": "ls", "writable": []},
        {},
        {"command": None},
        {"command": 1},
        {"command": "ls", "timeout": "1"},
        {"command": "ls", "timeout": False},
        {"command": "ls", "run_in_background": 1},
    ],
)
def test_bad_arguments_raise(arguments: dict[str, object]) -> None:
    with pytest.raises(UsageError):
        check_tool_arguments(arguments)


@pytest.mark.parametrize(
    ("value", "schema", "ok"),
    [
        ("x", {"type": "string"}, True),
        (True, {"type": "boolean"}, True),
        ("true", {"type": "boolean"}, False),
        (1, {"type": "number"}, True),
        (True, {"type": "number"}, False),
        (True, {"type": "integer"}, False),
        ("5", {"anyOf": [{"type": "number"}, {"type": "null"}]}, False),
        (None, {"anyOf": [{"type": "number"}, {"type": "null"}]}, True),
        ({"a": 1}, {}, True),
    ],
)
def test_json_types_are_checked_without_coercion(value: object, schema: dict, ok: bool) -> None:  # type: ignore[type-arg]
    assert json_type_ok(value, schema) is ok


def request(action: str = "rm -f x", choices: tuple[Choice, ...] = tuple(Choice)) -> PromptRequest:
    return PromptRequest(action=action, tier=Tier.HIGH, reason="r", choices=choices, cwd="/p")


def test_only_offered_answers_count() -> None:
    offered = [Choice.ALLOW_ONCE, Choice.DENY_ONCE]
    assert answer_schema(offered)["properties"]["decision"]["enum"] == ["allow_once", "deny"]
    accept = types.ElicitResult(action="accept", content={"decision": "allow_once"})
    assert answer_from(accept, offered) is Choice.ALLOW_ONCE
    session = types.ElicitResult(action="accept", content={"decision": "allow_session"})
    assert answer_from(session, offered) is Choice.DENY_ONCE  # not offered
    assert answer_from(types.ElicitResult(action="decline"), offered) is Choice.DENY_ONCE
    assert answer_from(types.ElicitResult(action="cancel"), offered) is Choice.DENY_ONCE
    assert answer_from(None, offered) is Choice.DENY_ONCE


def test_a_changed_question_gets_a_new_key() -> None:
    offered = [Choice.ALLOW_ONCE, Choice.DENY_ONCE]
    assert question_key(request(), offered) == question_key(request(), offered)
    assert question_key(request(), offered) != question_key(request("rm -f y"), offered)
    assert question_key(request(), offered) != question_key(request(), [Choice.ALLOW_ONCE])


def test_the_command_limit_is_the_classifiers() -> None:
    from stockade.shell import MAX_INPUT_BYTES
    from stockade.tool_calls import MAX_COMMAND_BYTES

    assert MAX_COMMAND_BYTES == MAX_INPUT_BYTES
