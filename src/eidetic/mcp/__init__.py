"""The Model Context Protocol server (``server``) and its argument errors (``errors``).

Imported only by ``eidetic mcp`` and by ``eidetic serve`` for its ``/mcp`` endpoint: the ``mcp``
SDK is heavy. The caller's scope rule, which the web viewer shares, is ``eidetic.session``.
"""
