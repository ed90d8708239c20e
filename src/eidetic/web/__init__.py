"""``eidetic serve``: a web viewer for people and MCP over HTTP for agents, one warm ``Memory``.

app (the ASGI app: routes, MCP mounted at /mcp), guard (who may ask: the token, the Host and
Origin checks), pages (one handler per page, each a thin call into the Python API), and the
Jinja2 templates and static files (htmx, vendored) beside them.
"""
