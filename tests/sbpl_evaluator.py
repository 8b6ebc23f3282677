"""A small evaluator for the Seatbelt profiles stockade generates, so their decisions can be
tested on any machine.

It parses the s-expressions (strings with ``\\\\`` and ``\\"`` escapes, symbols, ``;`` comments)
and, for one request (an operation and what it acts on), applies the rules in order: the last
rule that matches decides, ``(allow default)`` / ``(deny default)`` matching everything. A rule
matches when its operation matches (``file-read*`` is a prefix, ``default`` is everything) and
any one of its filters matches (a rule without filters matches every request of its
operation). Filters it does not know raise ``UnknownForm``: a profile the evaluator cannot read
fails the tests instead of being judged by guesswork.

This models the documented semantics only; that macOS really behaves so is proven by
``stockade doctor`` on a Mac.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TypeAlias

Form: TypeAlias = "str | list[Form]"  # a Symbol is a str too


class Symbol(str):
    """A bare word (``allow``, ``file-read*``), as opposed to a string literal."""


class UnknownForm(ValueError):
    """The profile uses a form this evaluator does not model."""


def parse(text: str) -> list[Form]:
    """Every top-level form of ``text``."""
    forms: list[Form] = []
    stack: list[list[Form]] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char.isspace():
            index += 1
        elif char == ";":
            end = text.find("\n", index)
            index = len(text) if end < 0 else end + 1
        elif char == "(":
            stack.append([])
            index += 1
        elif char == ")":
            if not stack:
                raise UnknownForm(f"unbalanced ')' at {index}")
            done = stack.pop()
            (stack[-1] if stack else forms).append(done)
            index += 1
        elif char == '"':
            value, index = _string(text, index + 1)
            (stack[-1] if stack else forms).append(value)
        else:
            match = re.compile(r"[^\s()\";]+").match(text, index)
            assert match is not None
            (stack[-1] if stack else forms).append(Symbol(match.group()))
            index = match.end()
    if stack:
        raise UnknownForm("unbalanced '(' at the end")
    return forms


def _string(text: str, index: int) -> tuple[str, int]:
    out = []
    while True:
        if index >= len(text):
            raise UnknownForm("unterminated string")
        char = text[index]
        if char == '"':
            return "".join(out), index + 1
        if char == "\\":
            following = text[index + 1]
            if following not in '\\"':
                raise UnknownForm(f"escape \\{following} is not modelled")
            out.append(following)
            index += 2
            continue
        if ord(char) < 0x20:
            raise UnknownForm("a raw control character inside a string")
        out.append(char)
        index += 1


@dataclass(frozen=True)
class Request:
    """One operation a confined process attempts. Only the fields the operation has are set."""

    operation: str
    path: str | None = None
    vnode_type: str | None = None  # "DIRECTORY", "REGULAR-FILE", ...
    global_name: str | None = None  # mach-lookup
    remote_ip: str | None = None  # network: "localhost:3128", "93.184.216.34:443"
    unix_socket: str | None = None  # network: the socket's path
    target: str = "others"  # signal / process-info: "same-sandbox" or "others"


@dataclass(frozen=True)
class Rule:
    action: str
    operations: tuple[str, ...]
    filters: tuple[Form, ...]


def rules(text: str) -> list[Rule]:
    """The allow/deny rules of a profile, in order (``version`` is checked and skipped)."""
    found = []
    forms = parse(text)
    if not forms or forms[0] != [Symbol("version"), Symbol("1")]:
        raise UnknownForm("a profile starts with (version 1)")
    for form in forms[1:]:
        if not isinstance(form, list) or not form or form[0] not in ("allow", "deny"):
            raise UnknownForm(f"top-level form {form!r}")
        operations = []
        rest = form[1:]
        while rest and isinstance(rest[0], Symbol):
            operations.append(str(rest[0]))
            rest = rest[1:]
        if not operations:
            raise UnknownForm(f"a rule without an operation: {form!r}")
        found.append(Rule(str(form[0]), tuple(operations), tuple(rest)))
    return found


def decide(text: str, request: Request) -> str:
    """The decision ("allow" or "deny") of the last rule that matches; none matches: deny."""
    decision = "deny"
    for rule in rules(text):
        if any(_operation_matches(op, request.operation) for op in rule.operations) and (
            not rule.filters or any(_filter_matches(f, request) for f in rule.filters)
        ):
            decision = rule.action
    return decision


def _operation_matches(pattern: str, operation: str) -> bool:
    if pattern == "default":
        return True
    if pattern.endswith("*"):
        return operation.startswith(pattern[:-1])
    return operation == pattern


def _filter_matches(form: Form, request: Request) -> bool:
    if not isinstance(form, list) or not form or not isinstance(form[0], Symbol):
        raise UnknownForm(f"filter {form!r}")
    kind, arguments = str(form[0]), form[1:]
    if kind in ("literal", "subpath", "regex"):
        (value,) = arguments
        if not isinstance(value, str) or isinstance(value, Symbol):
            raise UnknownForm(f"{kind} takes a string: {form!r}")
        if request.path is None:
            return False
        if kind == "literal":
            return request.path == value
        if kind == "subpath":
            return request.path == value or request.path.startswith(value.rstrip("/") + "/")
        return re.search(value, request.path) is not None
    if kind == "vnode-type":
        return request.vnode_type == str(arguments[0])
    if kind == "global-name":
        return request.global_name == arguments[0]
    if kind == "target":
        return request.target == str(arguments[0])
    if kind == "remote":
        return _remote_matches(arguments, request)
    if kind == "local":
        if arguments == [Symbol("unix-socket")]:
            return request.unix_socket is not None
        raise UnknownForm(f"filter {form!r}")
    raise UnknownForm(f"filter {form!r}")


def _remote_matches(arguments: list[Form], request: Request) -> bool:
    if arguments[:1] == [Symbol("ip")] and len(arguments) == 2:
        return request.remote_ip == arguments[1]
    if arguments[:1] == [Symbol("unix-socket")]:
        if request.unix_socket is None:
            return False
        if len(arguments) == 1:
            return True
        path_filter = arguments[1]
        if isinstance(path_filter, list) and path_filter[:1] == [Symbol("path-literal")]:
            return request.unix_socket == path_filter[1]
    raise UnknownForm(f"filter (remote {arguments!r})")


def move(text: str, rule_index: int, to: int) -> str:
    """The profile with its ``rule_index``-th rule moved to position ``to`` (rules counted
    after ``(version 1)``): for showing that the order is what decides."""
    forms = parse(text)
    body = forms[1:]
    body.insert(to, body.pop(rule_index))
    return "\n".join(_render(form) for form in [forms[0], *body]) + "\n"


def _render(form: Form) -> str:
    if isinstance(form, list):
        return "(" + " ".join(_render(item) for item in form) + ")"
    if isinstance(form, Symbol):
        return str(form)
    return '"' + form.replace("\\", "\\\\").replace('"', '\\"') + '"'
