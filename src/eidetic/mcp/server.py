"""The Model Context Protocol server of ``eidetic mcp``: the Python API as MCP tools and resources.

Imported only by that verb (the ``mcp`` SDK is heavy). One :class:`~eidetic.memory.Memory`
serves the whole process, so the embedding model, the vector cache and the indexes stay warm
between calls; every call runs on a worker thread (``eidetic.workers``: one, one call at a time,
for ``eidetic mcp``; a pool, each thread with a ``Memory`` of its own, for ``eidetic serve``),
because a ``Memory`` is not made for concurrent use and the event loop must stay free to answer
the client meanwhile.

Scope rule: the server is started for one session scope (``--scope``/``--visibility``, default
``default``/``public``). Every tool that reads (``recall``, ``overview``) and every resource
takes the session's scope unless the call names another, and a call may narrow what it sees
but never widen it: private visibility is honoured only for the session's own scope, and only
when the session itself is private. A call asking for another scope's private records is
refused with a tool error, so it gets nothing of them (a prompt-injected agent cannot read
another agent's private memory through its own server). ``sweep`` applies the lifecycle rules
to the whole store, as the CLI does, but reports only the records the session may see.
``remember`` writes where the call says, exactly like ``eidetic remember`` with the session's
scope as the default, but only into scopes the session may read (``Memory.remember(writer=...)``).
On ``eidetic serve`` with members' tokens, a member's records are added by that member, whatever
the client says (its claim is kept as ``metadata.claimed_by``: ``team.attribution``).

An agent reads the tools' descriptions and schemas on every turn and every answer in full, so
both are kept short: ``recall`` lists only the options agents need (``for_agents`` in
:class:`RecallQuery`; the others are still taken by name) and answers with compact hits
(``compact``) unless the call asks for ``detail: "full"``; every answer is JSON without indentation.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable
from dataclasses import fields
from typing import Annotated, Any, Literal, TypeVar, get_origin, get_type_hints
from urllib.parse import quote

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.server.mcpserver.resources import ResourceSecurity
from mcp.types import CallToolResult, TextContent
from mcp.types import Tool as MCPTool
from pydantic import Field, StrictFloat, ValidationError

from .. import __version__
from ..errors import EideticError, env_error, user_error
from ..listing import ListQuery
from ..memory import Memory
from ..query import MODES, RecallQuery, exposed_options
from ..ranking.access import Access
from ..records import Scope
from ..results import RememberResult
from ..session import Session
from ..team.attribution import attributed
from .compact import compact_recall, listed_schema
from .errors import error_text, invalid_arguments, unknown_arguments

T = TypeVar("T")
Mode = Literal[MODES]  # type: ignore[valid-type]
RECORD_URI = "eidetic://record/{id}"
RECORDS_URI = "eidetic://records"
RECORDS_LISTED = 1000  # the records resource is an index for browsing, not an export
MAX_BATCH = 1000  # records one remember call may write: a bigger load is an import, not a call
RELEVANCE_FLOOR = "auto"  # the recall tool's default: "nothing relevant" is an answer (the CLI's is off)
Detail = Literal["compact", "full"]
TYPES = (  # what an agent should store, by record type (any other type name is taken too)
    "note (the default), decision (what was chosen and why), lesson (what went wrong or right, and "
    "what to do next time), user (who the user is, what they prefer), feedback (how the user wants "
    "the work done, corrections included), project (goals, people, deadlines), reference (where "
    "something lives: a URL, a dashboard, a file)"
)


ScopeArg = str | None  # each tool's description of these two states the session's defaults (``_scoped``)
VisibilityArg = Literal["public", "private"] | None
F = TypeVar("F", bound=Callable[..., Any])


def _scoped(session: Session, *, writes: bool) -> Callable[[F], F]:
    """A tool whose ``scope`` and ``visibility`` arguments say this session's defaults (a
    signature made per session: annotations of a function are fixed where it is written)."""

    def decorate(tool: F) -> F:
        scope_arg, visibility_arg = _scope_args(session, writes)
        kinds = {"scope": scope_arg, "visibility": visibility_arg}
        if writes and session.member is not None:  # a member's records are theirs, whatever a client says
            about = f"ignored: the server sets it to {session.member}, your token's name (another value is kept as metadata.claimed_by)"
            kinds["added_by"] = Annotated[str | None, Field(description=about)]
        signature = inspect.signature(tool, eval_str=True)
        tool.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[p.replace(annotation=kinds.get(p.name, p.annotation)) for p in signature.parameters.values()]
        )
        return tool

    return decorate


def _scope_args(session: Session, writes: bool) -> tuple[Any, Any]:
    """The ``scope`` and ``visibility`` arguments, their defaults stated as this session's."""
    name, visibility = session.scope.name, session.scope.visibility
    if writes:
        about_scope = f"scope to write into; default: this session's, {name}"
        private = (
            f"private: only {name}/private sessions may read it"
            if visibility == "private"
            else f"private is refused (this session is {name}/public)"
        )
        about_visibility = f"public: every session may read it; {private}; default: {visibility}"
    else:
        about_scope = f"scope to read as; default: this session's, {name}"
        reach = (
            f"private also sees {name}'s private records"
            if visibility == "private"
            else f"private is refused (this session is {name}/public)"
        )
        about_visibility = f"public sees public records only; {reach}; default: {visibility}"
    return (
        Annotated[str | None, Field(description=about_scope)],
        Annotated[Literal["public", "private"] | None, Field(description=about_visibility)],
    )


async def run(call: Awaitable[T], failure: type[Exception] = ToolError) -> T:
    """A call into the session (``session.call`` or ``session.write``); an eidetic error becomes
    ``failure`` (a tool or resource error), which the SDK sends back to the client without ending
    the server."""
    try:
        return await call
    except EideticError as exc:
        raise failure(error_text(exc)) from None
    except OSError as exc:  # as the CLI reports it (disk, permissions)
        raise failure(
            error_text(
                env_error(
                    f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": "),
                    "check the path, free disk space and permissions",
                )
            )
        ) from None


class _Server(MCPServer):
    """The SDK's server, with argument errors told the way eidetic's own errors are (a short
    message and a hint, in the tools' terms; the SDK puts the text after ``Error executing tool
    NAME: ``), and arguments a tool does not take refused rather than ignored."""

    _schemas: dict[str, dict[str, Any]] | None = None
    unlisted: dict[str, tuple[str, ...]] = {}  # per tool: arguments it takes but does not list

    async def list_tools(self) -> list[MCPTool]:
        """The tools, each schema lean and without the arguments it takes but does not list."""
        return [self._listed(tool) for tool in await super().list_tools()]

    def _listed(self, tool: MCPTool) -> MCPTool:
        schema = listed_schema(tool.input_schema, self.unlisted.get(tool.name, ()))
        return tool.model_copy(update={"input_schema": schema})

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if self._schemas is None:  # every argument a tool takes, listed or not
            self._schemas = {tool.name: tool.input_schema for tool in await super().list_tools()}
        schema = self._schemas.get(name)
        unlisted = self.unlisted.get(name, ())
        if schema is not None and (text := unknown_arguments(name, set(arguments), schema, unlisted)):
            raise ToolError(f"Error executing tool {name}: {text}")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if schema is None or not isinstance(exc.__cause__, ValidationError):
                raise
            text = invalid_arguments(exc.__cause__.errors(), schema)
            raise ToolError(f"Error executing tool {name}: {text}") from None


async def _warn(ctx: Context, warnings: list[str]) -> None:
    """What the CLI prints on stderr goes to the client's log: degradation is never silent."""
    for message in warnings:
        await ctx.warning(message, logger_name="eidetic")


def answer(data: dict[str, Any]) -> CallToolResult:
    """A tool's answer: the JSON as text without indentation (a model reads every space of it),
    and the same object as structured content."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def _record_json(session: Session, rid: str) -> str:
    """One record by id, if the session's scope may see it (whatever its lifecycle); a missing
    record and one out of reach give the same error, so existence is not revealed."""
    record = session.memory.get(rid, scope=session.scope.name, visibility=session.scope.visibility)
    return json.dumps(record.to_dict(), ensure_ascii=False)


def _records_json(session: Session) -> str:
    """The active records the session may see, newest first, as an index of ids and resource
    addresses (a listing: never counted as a recall)."""
    found = session.memory.list_records(
        ListQuery(scope=session.scope.name, visibility=session.scope.visibility, limit=RECORDS_LISTED)
    )
    listed = [
        {
            "id": record.id,
            "type": record.type,
            "name": record.name,
            "description": record.description,
            "scope": record.scope.to_dict(),
            "uri": RECORD_URI.replace("{id}", quote(record.id, safe="")),
        }
        for record in (item.record for item in found.items)
    ]
    return json.dumps(
        {"scope": session.scope.to_dict(), "truncated": found.total > RECORDS_LISTED, "items": listed},
        ensure_ascii=False,
    )


def _recall_signature(session: Session) -> inspect.Signature:
    """The ``recall`` tool's parameters: ``query``, every exposed :class:`RecallQuery` field with
    its help text as the description (a list where the query takes several values), and
    ``detail``; the fields not for agents come last (taken, not listed)."""
    hints = get_type_hints(RecallQuery)
    scope_arg, visibility_arg = _scope_args(session, writes=False)
    parameters = [
        inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Context),
        inspect.Parameter(
            "query",
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            annotation=Annotated[str, Field(description=_help("text"))],
        ),
    ]
    unlisted = []
    for option in exposed_options():
        kind: Any = hints[option.name]
        default = option.default
        if option.name == "mode":
            kind, default = Mode | None, None  # None: the user's configured default
        elif option.name == "top_k":
            kind, default = int | None, None
        elif option.name == "visibility":
            kind = Literal["public", "private"] | None
        elif option.name == "now":  # read as the CLI reads it, not as a number of seconds since 1970
            kind = str | None
        elif option.name == "relevance_floor":  # an agent's context is better empty than filled with noise
            kind, default = Literal["auto", "off"] | StrictFloat, RELEVANCE_FLOOR
        elif get_origin(kind) is tuple:
            kind, default = list[str] | None, None
        description = option.metadata["help"].replace(" (repeatable)", " (a list)")  # the CLI repeats a flag
        if option.name == "relevance_floor":  # the CLI's text explains the scale; an agent needs the choice
            description = (
                f"{RELEVANCE_FLOOR} (default): no hits unless one is truly relevant; off: the top k whatever "
                "they are; a number: another line (1 = auto, higher is stricter)"
            )
        annotation: Any = Annotated[kind, Field(description=description)]
        if option.name in ("scope", "visibility"):  # the session's defaults, not the CLI's
            annotation = scope_arg if option.name == "scope" else visibility_arg
        parameter = inspect.Parameter(
            option.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
        )
        if option.metadata["for_agents"]:
            parameters.append(parameter)
        else:
            unlisted.append(parameter)
    detail = Annotated[
        Detail,
        Field(
            description="compact: id, text, type, created, scope, score and the fields that are set; full: "
            "every field, as `eidetic recall --json`"
        ),
    ]
    parameters.append(inspect.Parameter("detail", inspect.Parameter.KEYWORD_ONLY, default="compact", annotation=detail))
    return inspect.Signature(parameters + unlisted, return_annotation=CallToolResult)


def unlisted_options() -> tuple[str, ...]:
    """The recall options the tool takes but does not list (``for_agents=False``)."""
    return tuple(option.name for option in exposed_options() if not option.metadata["for_agents"])


def _help(name: str) -> str:
    return next(f.metadata["help"] for f in fields(RecallQuery) if f.name == name)


def build_server(session: Session) -> MCPServer:
    """The tools and resources over ``session``; each is a thin call into the Python API."""
    scope = f"{session.scope.name}/{session.scope.visibility}"
    server = _Server(
        "eidetic",
        version=__version__,
        log_level="WARNING",
        instructions=f"eidetic memory store. This session's scope is {scope}: recall and overview "
        f"see public records and, when the scope is private, its own private records. "
        f"Recall before answering from memory or redoing past work; remember what is worth keeping.",
    )
    server.unlisted = {"recall": unlisted_options()}
    _add_memory_tools(server, session)
    _add_maintenance_tools(server, session)
    _add_resources(server, session)
    return server


def _add_memory_tools(server: MCPServer, session: Session) -> None:
    """``remember`` and ``recall``."""
    _add_remember_tool(server, session)
    _add_recall_tool(server, session)


REMEMBER_TOOL = (
    "Store what should outlive this conversation: a decision and its reason, a lesson "
    "learnt, the user's preferences and corrections, a fact about the project, where something "
    "lives. One self-contained statement per record, in plain words, with the names and dates "
    "that make it clear later; not what the code or its history already says, never a secret. "
    f"Types: {TYPES}. Remembering a text again changes nothing; to replace a record, give the new "
    'one "supersedes": the old id. Answers with each record\'s id and status (new, updated, '
    "unchanged, duplicate, similar)."
)


def _batch_of(records: list[dict[str, Any]] | dict[str, Any]) -> list[dict[str, Any]]:
    """One record or a list, as a list; more than ``MAX_BATCH`` is refused before anything is read."""
    batch = records if isinstance(records, list) else [records]
    if len(batch) > MAX_BATCH:
        raise ToolError(
            error_text(
                user_error(
                    f"one remember call takes at most {MAX_BATCH:,} records, not {len(batch):,}: nothing was written",
                    f"send them in batches of {MAX_BATCH:,} or fewer, or load a file with `eidetic import`",
                )
            )
        )
    return batch


def _add_remember_tool(server: MCPServer, session: Session) -> None:

    @server.tool(description=REMEMBER_TOOL)
    @_scoped(session, writes=True)
    async def remember(
        ctx: Context,
        records: Annotated[
            list[dict[str, Any]] | dict[str, Any],
            Field(
                description='one record or a list: {"id"?, "text", "type"?, "name"?, "description"?, '
                '"metadata"?, "scope"?: {"name", "visibility"}, "created"?, "added_by"?, '
                '"supersedes"?, "links"?}; the whole batch is validated before anything is written; '
                f"at most {MAX_BATCH:,} records a call"
            ),
        ],
        scope: ScopeArg = None,
        visibility: VisibilityArg = None,
        added_by: Annotated[str | None, Field(description="attribution; default: the nick from culture.yaml")] = None,
        on_similar: Annotated[
            Literal["write", "skip", "supersede"],
            Field(
                description="a new record whose meaning is already in its scope (similar_to): write it "
                "anyway, skip it, or write it to supersede the closest"
            ),
        ] = "write",
        allow_secrets: Annotated[
            bool,
            Field(
                description="write a public record even when it holds what looks like a credential (an API "
                "key, a token, a private key, a password): refused by default, since public records are "
                "shared; set it only when the user asked for exactly that"
            ),
        ] = False,
    ) -> CallToolResult:
        batch = _batch_of(records)
        if session.member is not None:  # the token says who writes; a client's claim is kept apart
            batch, added_by = attributed(batch, session.member, added_by), session.member
        result = await run(
            session.write(
                "remember",
                lambda: session.memory.remember(
                    batch,
                    scope=scope or session.scope.name,
                    visibility=visibility or session.scope.visibility,
                    added_by=added_by,
                    writer=Access(session.scope),
                    on_similar=on_similar,
                    allow_secrets=allow_secrets,
                ),
                _remembered,
            )
        )
        await _warn(ctx, result.warnings)
        return answer(result.to_dict())


def _remembered(result: RememberResult) -> list[str]:
    """The ids a remember changed: those it wrote (new or updated; not those it left as they
    were, or left out as duplicates or as similar), and those they superseded and shadowed."""
    written = [item for item in result.items if item.get("status") in ("new", "updated")]
    return [rid for item in written for rid in (item["id"], item.get("shadowed")) if rid]


def _add_recall_tool(server: MCPServer, session: Session) -> None:
    async def recall(ctx: Context, query: str, detail: Detail = "compact", **options: Any) -> CallToolResult:
        def work() -> Any:
            wanted = session.read_scope(options.pop("scope", None), options.pop("visibility", None))
            return session.memory.recall(
                RecallQuery.configured(
                    query, session.memory.settings, scope=wanted.name, visibility=wanted.visibility, **options
                )
            )

        result = await run(session.call(work))
        await _warn(ctx, result.warnings)
        return answer(result.to_dict() if detail == "full" else compact_recall(result))

    recall.__signature__ = _recall_signature(session)  # type: ignore[attr-defined]  # the query's fields
    server.tool(
        description="Search memory before answering from it or redoing past work: by meaning and words "
        "(mode hybrid, the default), verbatim (exact) or by words only (keyword); records linked to "
        "the hits come along (tier traversal). Each hit: id, text, type, created, scope, score and "
        'the fields that are set; detail "full" gives every field. Empty items with below_floor: '
        "nothing stored is relevant. Also takes, unlisted, the other options of `eidetic recall` by "
        "name: " + ", ".join(unlisted_options()) + "."
    )(recall)


def _add_maintenance_tools(server: MCPServer, session: Session) -> None:
    """``sweep`` and ``overview``."""

    @server.tool(
        description="Apply the lifecycle rules to the whole store: shadow superseded records, archive "
        "stale ones (never deletes). Use it when asked to tidy memory; dry_run shows what would change. "
        "Lists only records this session may see."
    )
    async def sweep(
        dry_run: Annotated[bool, Field(description="report what would change, write nothing")] = False,
    ) -> CallToolResult:
        def work() -> dict[str, Any]:
            return session.memory.sweep(Access(session.scope), dry_run=dry_run).to_dict()

        if dry_run:
            return answer(await run(session.call(work)))
        return answer(await run(session.write("sweep", work, lambda report: [c["id"] for c in report["changed"]])))

    @server.tool(
        description="What the store holds: counts per store, scope and lifecycle, contributors, "
        "links, index and embedder state. Use it to learn what memory exists before browsing it; "
        "others' private scopes are not even counted."
    )
    @_scoped(session, writes=False)
    async def overview(scope: ScopeArg = None, visibility: VisibilityArg = None) -> CallToolResult:
        def work() -> dict[str, Any]:
            access = Access(session.read_scope(scope, visibility), include_shadowed=True, include_archived=True)
            return {"stores": [store.to_dict() for store in session.memory.overview(access)]}

        return answer(await run(session.call(work)))


def _add_resources(server: MCPServer, session: Session) -> None:
    """A record by id, and the list of records the session may see."""

    @server.resource(
        RECORD_URI, name="record", mime_type="application/json", security=ResourceSecurity(exempt_params={"id"})
    )  # an id is looked up, never a path
    async def record_resource(id: str) -> str:
        """One record's JSON, if this session's scope may see it."""
        return await run(session.call(lambda: _record_json(session, id)), failure=ResourceError)

    @server.resource(RECORDS_URI, name="records", mime_type="application/json")
    async def records_resource() -> str:
        """The active records this session may see (at most 1000): id, type, name, description, uri."""
        return await run(session.call(lambda: _records_json(session)), failure=ResourceError)


def serve(memory: Memory, scope: Scope) -> None:
    """Run the server over stdio until the client closes it."""
    session = Session(memory, scope)
    try:
        build_server(session).run("stdio")
    finally:
        session.close()
