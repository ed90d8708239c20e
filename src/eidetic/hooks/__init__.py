"""Memory that comes to the agent: context put into an agent's session when it starts and on each
prompt, within token budgets and never the same record twice, and capture of what a session
produced. docs/hooks.md describes it for users.

- ``budget``: token estimates and fitting framed records into a budget (pure);
- ``framing``: records as quoted, attributed memory; instruction-like text neutralised and
  flagged (pure);
- ``session``: what one agent session was given already (a small file per session);
- ``select``: which records a session start or a prompt gets, over :class:`~eidetic.Memory`;
- ``respond``: one hook event in, the agent's output out (what the daemon and the fallback run);
- ``claude_settings``: Claude Code's settings file, edited without disturbing anything else;
- ``runtime``, ``client``, ``daemon``: the warm path (a per-user daemon on a unix socket, and the
  stdlib-only client each hook command runs);
- ``capture``: remembered statements and decisions read out of a transcript (pure);
  ``transcripts`` reads the file, ``regular`` any file that must be a regular one (never a FIFO,
  a device or, for a hook's transcript, a symlink or a file outside the agent's folder).

This package's ``__init__`` imports nothing: the hook client must start in milliseconds.
"""
