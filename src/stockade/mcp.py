"""``stockade mcp``: the agent path as a stdio MCP server, on the official ``mcp`` SDK (v2).

Tools: ``bash`` (plus ``bash_output``/``bash_kill`` for background commands), ``read_file``,
``write_file``, ``edit_file``, ``list_dir`` and ``fetch``. Each call goes through one
:class:`~stockade.session.AsyncSession`: classify -> gate -> ask -> sandbox -> ledger.

When the gate asks, the question goes to the person through MCP *elicitation*
(:mod:`stockade.elicitation`: the same answers the terminal offers - once, session, project,
exactly-this, deny, never - each naming the rule it stores), if the client declared that it
supports it:

* on a 2026-07-28+ connection the tool call returns an ``InputRequiredResult`` carrying the
  question, and the client retries the call with the answer (the gate re-judges the retried
  call and finds the answer under the question's key; nothing is recorded or run before that);
* on an older connection the server sends ``elicitation/create`` mid-call and waits.

A client that cannot elicit gets the headless answer: denied, with the fix named. Arguments a
tool does not declare are rejected (never ignored), and argument types are checked strictly
(``"true"`` is not a boolean). Nothing but MCP messages is ever written to stdout.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Final

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    TextContent,
    ToolAnnotations,
)
from mcp_types import Tool as ListedTool
from mcp_types.version import is_version_at_least

from stockade.elicitation import (
    answer_from_content,
    answer_schema,
    offered,
    question_key,
    question_text,
)
from stockade.errors import StockadeError
from stockade.mcp_waiting import WaitingCalls
from stockade.permissions.prompt import Choice, PromptRequest
from stockade.session import SESSION_PROMPT, TOOL_DESCRIPTION, AsyncSession, tool_schema
from stockade.tool_calls import error_text

SERVER_NAME: Final = "stockade"
INSTRUCTIONS: Final = (
    "Run shell commands and touch files through stockade: every action is risk-rated, may "
    "need the user's approval, runs in a sandbox (writes only inside the project's writable "
    "roots, secrets masked, network as configured) and is recorded in a ledger. A denied "
    "action says why and how to get it allowed."
)

INPUT_REQUIRED_VERSION: Final = "2026-07-28"  # first revision that elicits by InputRequiredResult
FETCH_MAX_BYTES: Final = 256 * 1024
# Per stream and command, what a tool result carries (head and tail; the rest is in a file).
OUTPUT_BYTES_PER_STREAM: Final = 128 * 1024


class _NeedInput(Exception):
    """Raised out of the gate's prompt on a 2026-07-28+ connection: return the question as an
    InputRequiredResult; the retried call brings the answer."""

    def __init__(self, key: str, request: ElicitRequest) -> None:
        super().__init__(key)
        self.key = key
        self.request = request


class Elicitation:
    """The gate's prompt for one tool call: asks the person through MCP elicitation."""

    def __init__(self, ctx: Context, *, description: str | None = None) -> None:
        self.ctx = ctx
        self.description = description  # the model's own words for what the command does

    async def __call__(self, request: PromptRequest) -> Choice:
        choices = offered(request)
        key = question_key(request, choices)
        responses = self.ctx.input_responses or {}
        if key in responses:
            return answer_from(responses[key], choices)
        message = question_text(request, self.description)
        schema = answer_schema(choices, request)
        if asks_by_retry(self.ctx):
            params = ElicitRequestFormParams(message=message, requested_schema=schema)
            raise _NeedInput(key, ElicitRequest(params=params))
        result = await self.ctx.session.elicit_form(
            message=message, requested_schema=schema, related_request_id=self.ctx.request_id
        )
        return answer_from(result, choices)


def asks_by_retry(ctx: Context) -> bool:
    """A 2026-07-28+ connection: questions travel as InputRequiredResult and a retry."""
    version = ctx.protocol_version
    return version is not None and is_version_at_least(version, INPUT_REQUIRED_VERSION)


def retry_question(request: PromptRequest) -> tuple[str, ElicitRequest, Sequence[Choice]]:
    """A question asked while a command runs, as an InputRequiredResult carries it."""
    choices = offered(request)
    params = ElicitRequestFormParams(
        message=question_text(request), requested_schema=answer_schema(choices, request)
    )
    return question_key(request, choices), ElicitRequest(params=params), choices


def can_elicit(ctx: Context) -> bool:
    """Did the client declare form elicitation (a bare ``elicitation: {}`` counts)?"""
    capabilities = ctx.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


def answer_from(result: object, choices: Sequence[Choice]) -> Choice:
    """The person's choice; anything but an accepted, offered answer is a denial."""
    if not isinstance(result, ElicitResult):
        return Choice.DENY_ONCE
    return answer_from_content(result.action, result.content, choices)


# ---------------------------------------------------------------------------------------------
# Strict arguments
# ---------------------------------------------------------------------------------------------

_JSON_TYPES: Final[Mapping[str, tuple[type, ...]]] = {
    "string": (str,),
    "boolean": (bool,),
    "integer": (int,),
    "number": (int, float),
    "null": (type(None),),
    "object": (dict,),
    "array": (list,),
}


def json_type_ok(value: object, schema: Mapping[str, Any]) -> bool:
    """Does ``value`` have (one of) the JSON type(s) ``schema`` declares? No coercion."""
    if "anyOf" in schema:
        return any(json_type_ok(value, option) for option in schema["anyOf"])
    kind = schema.get("type")
    if kind is None:
        return True
    if isinstance(value, bool) and kind in ("integer", "number"):
        return False
    return isinstance(value, _JSON_TYPES.get(str(kind), (object,)))


def check_arguments(tool: str, arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> None:
    """Raise ToolError for an argument the tool does not declare or of the wrong JSON type."""
    properties: Mapping[str, Any] = schema.get("properties", {})
    unknown = sorted(set(arguments) - set(properties))
    if unknown:
        raise ToolError(
            f"unknown argument(s) for {tool}: {', '.join(unknown)}; it takes only: "
            f"{', '.join(properties)} (sandbox settings are the operator's, not the model's)"
        )
    for name, value in arguments.items():
        if not json_type_ok(value, properties[name]):
            wanted = json.dumps(properties[name].get("anyOf") or properties[name].get("type"))
            raise ToolError(f"argument {name} of {tool} must be {wanted}, not {value!r}")


class StrictServer(MCPServer[Any]):
    """An MCPServer that lists every tool with ``additionalProperties: false`` (``bash`` with
    exactly the session's tool schema) and enforces it before the SDK's own validation, which
    would ignore unknown arguments and coerce types."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._schemas: dict[str, Mapping[str, Any]] | None = None

    async def list_tools(self) -> list[ListedTool]:
        listed = []
        for tool in await super().list_tools():
            schema = (
                tool_schema()["input_schema"]
                if tool.name == "bash"
                else {**tool.input_schema, "additionalProperties": False}
            )
            listed.append(tool.model_copy(update={"input_schema": schema}))
        return listed

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        context: Context[Any, Any] | None = None,
    ) -> CallToolResult | InputRequiredResult:
        if self._schemas is None:
            self._schemas = {tool.name: tool.input_schema for tool in await self.list_tools()}
        schema = self._schemas.get(name)
        if schema is not None:
            check_arguments(name, arguments, schema)
        return await super().call_tool(name, arguments, context)


# ---------------------------------------------------------------------------------------------
# The tools
# ---------------------------------------------------------------------------------------------

Outcome = CallToolResult | InputRequiredResult


def text_result(text: str, *, error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=error)


class Tools:
    """The tool functions, bound to one AsyncSession. Every call asks through elicitation
    when the client can answer, and is headless (denied, fix named) when it cannot."""

    def __init__(self, session: AsyncSession, *, elicit: bool = True) -> None:
        self.session = session
        self.elicit = elicit  # False: --headless, every question is denied
        self.waiting = WaitingCalls(retry_question, answer_from)  # see stockade.mcp_waiting

    async def _answered(
        self, ctx: Context[Any, Any], call: Any, render: Any, *, description: str | None = None
    ) -> Outcome:
        asking = self.elicit and can_elicit(ctx)
        prompt = Elicitation(ctx, description=description) if asking else None
        try:
            done = await self.waiting.resume(ctx.request_state, ctx.input_responses)
            if done is None:  # not the retry of a parked call: a fresh one
                done = await call(prompt)
        except _NeedInput as need:
            return InputRequiredResult(input_requests={need.key: need.request})
        except StockadeError as error:
            return text_result(error_text(error), error=True)
        if isinstance(done, InputRequiredResult):  # a running command's question (parked)
            return done
        text, failed = render(done)
        return text_result(text, error=failed)

    async def bash(
        self,
        ctx: Context[Any, Any],
        command: str,
        cwd: str | None = None,
        timeout: float | None = None,
        description: str | None = None,
        escape_sandbox: bool = False,
        run_in_background: bool = False,
    ) -> Outcome:
        given = {
            "command": command,
            "cwd": cwd,
            "timeout": timeout,
            "description": description,
            "escape_sandbox": escape_sandbox,
            "run_in_background": run_in_background,
        }

        def execute(prompt: Any, network_prompt: Any = SESSION_PROMPT) -> Any:
            return self.session.handle_tool_call(
                given, prompt=prompt, network_prompt=network_prompt
            )

        def start(prompt: Any) -> Any:
            # questions about new hosts while the command runs: mid-call on older
            # connections (the prompt itself), parked until the retry on 2026-07-28+ ones
            if prompt is not None and asks_by_retry(ctx) and not run_in_background:
                return self.waiting.run(lambda asking: execute(prompt, asking))
            return execute(prompt)

        return await self._answered(
            ctx,
            start,
            lambda result: (result.text, result.is_error),
            description=description,
        )

    async def bash_output(self, id: str) -> Outcome:
        """New output of a background command (started with run_in_background) since the
        last read, and whether it is still running."""
        try:
            return text_result((await self.session.output(id)).to_text())
        except StockadeError as error:
            return text_result(error_text(error), error=True)

    async def bash_kill(self, id: str) -> Outcome:
        """Stop a background command and its whole process tree; returns its last output."""
        try:
            return text_result((await self.session.kill(id)).to_text())
        except StockadeError as error:
            return text_result(error_text(error), error=True)

    async def read_file(
        self, ctx: Context[Any, Any], path: str, offset: int = 1, limit: int | None = None
    ) -> Outcome:
        """Read a text file (lines offset.., at most limit lines; bounded). Paths are relative
        to the project. Files the sandbox hides (keys, credentials) cannot be read."""

        def render(content: Any) -> tuple[str, bool]:
            last = content.first_line + max(content.lines - 1, 0)
            head = f"{content.path}: lines {content.first_line}-{last} of {content.total_lines}"
            if content.truncated:
                head += " (truncated: read further with offset)"
            return f"{head}\n{content.content}", False

        return await self._answered(
            ctx,
            lambda prompt: self.session.read_file(path, offset=offset, limit=limit, prompt=prompt),
            render,
        )

    async def write_file(self, ctx: Context[Any, Any], path: str, content: str) -> Outcome:
        """Create a file, or replace one you read in this session (unchanged since). Only
        inside the project's writable roots; never .git/hooks, .stockade, shell rc files."""
        return await self._answered(
            ctx,
            lambda prompt: self.session.write_file(path, content, prompt=prompt),
            lambda change: (
                f"{'created' if change.created else 'wrote'} {change.path} ({change.size} bytes)",
                False,
            ),
        )

    async def edit_file(
        self,
        ctx: Context[Any, Any],
        path: str,
        old_string: str,
        new_string: str,
        replace_all: bool = False,
    ) -> Outcome:
        """Replace old_string (exact text, must occur exactly once unless replace_all) with
        new_string in a file you read in this session."""
        return await self._answered(
            ctx,
            lambda prompt: self.session.edit_file(
                path, old_string, new_string, replace_all=replace_all, prompt=prompt
            ),
            lambda change: (f"edited {change.path}: {change.replacements} replacement(s)", False),
        )

    async def list_dir(self, ctx: Context[Any, Any], path: str = ".") -> Outcome:
        """List a directory (names, kinds, sizes; bounded)."""

        def render(listing: Any) -> tuple[str, bool]:
            lines = [f"{listing.path}: {listing.total} entries"]
            for entry in listing.entries:
                if entry.kind == "directory":
                    lines.append(f"{entry.name}/")
                elif entry.kind == "file":
                    lines.append(f"{entry.name} ({entry.size} bytes)")
                else:
                    lines.append(f"{entry.name} ({entry.kind})")
            if listing.truncated:
                lines.append(f"... {listing.total - len(listing.entries)} more not shown")
            return "\n".join(lines), False

        return await self._answered(
            ctx, lambda prompt: self.session.list_dir(path, prompt=prompt), render
        )

    async def fetch(self, ctx: Context[Any, Any], url: str) -> Outcome:
        """HTTP GET a URL under the sandbox's network policy (denied unless the operator
        allowed the network or the domain); returns status, content type and text."""

        def render(result: Any) -> tuple[str, bool]:
            kind = result.header("Content-Type") or "unknown"
            note = f" (truncated at {FETCH_MAX_BYTES} bytes)" if result.truncated else ""
            head = f"HTTP {result.status} {result.reason}\nurl: {result.url}\ntype: {kind}{note}"
            return f"{head}\n\n{result.text()}", result.status >= 400

        return await self._answered(
            ctx,
            lambda prompt: self.session.fetch(url, max_bytes=FETCH_MAX_BYTES, prompt=prompt),
            render,
        )


def build_server(session: AsyncSession, *, elicit: bool = True) -> StrictServer:
    """The MCP server for an open AsyncSession (``elicit=False``: ask nobody, deny)."""
    from importlib.metadata import version

    server = StrictServer(
        SERVER_NAME, instructions=INSTRUCTIONS, version=version("stockade"), log_level="WARNING"
    )
    tools = Tools(session, elicit=elicit)
    reads = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    server.add_tool(tools.bash, name="bash", description=TOOL_DESCRIPTION)
    server.add_tool(tools.bash_output, name="bash_output", annotations=reads)
    server.add_tool(tools.bash_kill, name="bash_kill", annotations=ToolAnnotations())
    server.add_tool(tools.read_file, name="read_file", annotations=reads)
    server.add_tool(tools.write_file, name="write_file")
    server.add_tool(tools.edit_file, name="edit_file")
    server.add_tool(tools.list_dir, name="list_dir", annotations=reads)
    server.add_tool(tools.fetch, name="fetch", annotations=ToolAnnotations(read_only_hint=True))
    return server


async def serve(session: AsyncSession, *, elicit: bool = True) -> None:
    """Open ``session``, say on stderr what is served and under which posture, serve it over
    stdio until the client hangs up, then close it (which kills its background commands and
    removes its temp dir). Ctrl-C (SIGINT) does the same closing, says so, and exits 130."""
    import anyio

    async with session:
        server = build_server(session, elicit=elicit)
        tools = ", ".join(tool.name for tool in await server.list_tools())
        asks = "through the client's elicitation" if elicit else "denied (--headless)"
        print(
            f"stockade: serving MCP tools {tools} on stdio for {session.session.project} "
            f"(autonomy {session.session.autonomy}; questions {asks}); "
            f"{session.posture.summary()}",
            file=sys.stderr,
            flush=True,
        )
        async with anyio.create_task_group() as watchers:
            watchers.start_soon(_close_on_interrupt, session)
            try:
                await server.run_stdio_async()
            finally:
                watchers.cancel_scope.cancel()
                report = await session.report()
                print(f"stockade: {report.summary()}", file=sys.stderr)


async def _close_on_interrupt(session: AsyncSession) -> None:
    """On SIGINT: close the session and exit at once. (The SDK reads stdin on a worker thread
    that nothing can interrupt, so waiting for the event loop to wind down would hang.)"""
    import os
    import signal

    import anyio

    with anyio.open_signal_receiver(signal.SIGINT) as signals:
        async for _ in signals:
            report = await session.report()
            await session.aclose()
            print(f"stockade: interrupted; {report.summary()}", file=sys.stderr, flush=True)
            os._exit(130)
