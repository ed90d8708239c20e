"""The viewer's routes, each a thin handler over one Python API call on the session's worker
thread (modules by job: ``search_page``, ``record_pages``, ``curate``, ``browse_pages``; what
they share is in ``respond``, ``params`` and ``templating``). ``/`` is the home page until a
search is asked (``search_page.asks_search``). Scope is the server's session
scope, never widened by a request (a request may narrow it, as an MCP call may)."""

from __future__ import annotations

from starlette.routing import Route

from . import browse_pages, curate, record_pages, search_page


def routes() -> list[Route]:
    return [
        Route("/", search_page.search, name="search"),
        Route("/record", record_pages.record, name="record"),
        Route("/record/edit", curate.edit_form, methods=["GET"], name="edit"),
        Route("/record/edit", curate.edit_save, methods=["POST"]),
        Route("/record/forget", curate.forget, methods=["POST"], name="forget"),
        Route("/record/restore", curate.restore, methods=["POST"], name="restore"),
        Route("/record/supersede", curate.supersede_form, methods=["GET"], name="supersede"),
        Route("/record/supersede", curate.supersede_save, methods=["POST"]),
        Route("/browse", browse_pages.browse, name="browse"),
        Route("/overview", browse_pages.overview, name="overview"),
    ]
