"""``eidetic serve``: a web viewer for people and MCP over HTTP for agents, one warm ``Memory``.

app (the ASGI app: routes, MCP mounted at /mcp, static files), guard (who may ask: the token, the
Host and Origin checks), pages (the routes) over a module per page's job (search_page and
home_page, record_pages, browse_pages, curate), overview_report (the overview's numbers, made off
the request path; the home page's counts and the filters' ``choices`` read it too), respond,
params and templating (what every page shares), highlight and
markdown_text (pure), and the Jinja2 templates and static files (htmx, vendored) beside them.
"""
