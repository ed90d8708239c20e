"""The built-in manual's pages about memory that comes to the agent (``eidetic explain hooks``,
``context``, ``hook``, ``capture``): kept apart from ``explain`` so that module stays one
screenful of topics per concern. docs/hooks.md has the whole story."""

HOOKS = {
    "hooks": """# eidetic hooks install|uninstall|status claude
Memory that comes to the agent. `eidetic hooks install claude` adds three hooks to Claude Code's
settings (`--project`: the repository's `.claude/settings.json`, the default; `--local`:
`.claude/settings.local.json`; `--user`: `~/.claude/settings.json`; `--file PATH`): at a
session's start the most useful memories (most recalled and freshest lessons, decisions and
feedback you may see), on each prompt a hybrid recall of the prompt with the relevance floor on
(nothing when nothing clears it), at its end capture when the `capture` setting is on. Each
within a token budget (`context-start-tokens` 400, `context-prompt-tokens` 300,
`context-session-tokens` 3000), each record at most once per session. Every other byte of the
file is kept; a malformed file is an error and is not written (not JSON, nested too deeply, a
key repeated in `hooks` or `hooks` itself repeated: Claude Code reads only the last; a FIFO, a
device, a symlink to nothing, comments: Claude Code ignores such a file; a read-only file).
The shared `.claude/settings.json` (or any settings file in a git work tree but
`settings.local.json`) names the hook only as `eidetic-hook`, on PATH (README, Install): a path
of this machine would run on no teammate's, so without it on PATH install writes nothing and
says so (`--local` keeps the hooks to yourself, by path). `uninstall` removes exactly eidetic's hooks (the file's earlier
bytes when nothing else changed; a file install made goes, with the folders it made while they
are empty); `status` shows the files, says when a hook's command cannot run here (or names a
path of this machine in a shared file), the daemon and the settings. `hooks stop` stops the warm
daemon; `hooks daemon` runs it in the foreground. The hooks run `eidetic-hook claude EVENT` (it
starts with built-in modules only); installing again moves an earlier install's `eidetic hook
claude EVENT`, and a path of `eidetic-hook` once it is on PATH, to it.""",
    "hook": """# eidetic-hook claude session-start|prompt|session-end (or eidetic hook claude ...)
The command Claude Code runs for a hook event: its JSON on stdin, `{"hookSpecificOutput":
{"hookEventName", "additionalContext"}}` on stdout when there is something to add. `eidetic-hook`
loads built-in modules only (`eidetic hook`, what earlier installs wrote, loads the command line
first) and hands the payload to a per-user daemon (started on demand, detached, socket mode 0600,
exits after `hook-idle-minutes`) that keeps the store and the model warm, follows the store's
files by file events and checks them between requests. Without the daemon it answers itself with
keyword recall and starts one. Always exit 0 (a wrong command line: 1, never 2, which would block
the prompt): a failure or `EIDETIC_HOOK_TIMEOUT` (2 s) adds nothing and is logged (`eidetic hooks
status` names the log).""",
    "context": """# eidetic context --prompt TEXT | --start
What a hook would add, as a plain command for any agent with shell hooks: `--prompt TEXT`
(`-`: stdin) recalls on a prompt (hybrid, relevance floor auto; `--mode keyword`), `--start`
lists the most useful lessons, decisions and feedback (`--type` for others). `--session ID`
leaves out what that session was given already; `--budget N` tokens (default: the settings');
`--format markdown` (default: the framed records; when none, nothing in a pipe and why on a
terminal: "nothing relevant to …" when every hit fell below the floor) or `json` (`{"event",
"session", "budget", "tokens", "items", "skipped", "below_floor", "context"}`; a prompt's items
have `relevance` beside `score`). A hit below the relevance floor is never given. Records are
quoted with id, type, date (when it happened, else when created; never the day it was last
written), source and scope; instruction-like text is neutralised and flagged.
Not to be confused with a conversation's context (`eidetic explain thread`).""",
    "capture": """# eidetic capture TRANSCRIPT
Keep what a session produced, without a model: the user's "remember that X", "remember: X",
"remember to X", "note that X", "don't forget X", "for future reference, X" (at the start of a
line or sentence, not a question) as `feedback`, and the agent's labelled lines "Decision: X",
"Decided: X", "Lesson: X", "Lesson learned: X" as `decision` or `lesson`. A Claude Code JSONL
transcript is read by role (tool results, meta and command messages, side chains skipped); any
other file as plain text. Metadata carries the provenance (`source: capture`, `agent`, `session`,
`repository`, `said_by`, `captured`), `occurred` the message's time. A statement stored already
is left out and reported as a `duplicate` of the record it repeats (`duplicate_of`, `rule`,
`score`): the same words as a record you may see, or a near-duplicate of an active record of its
own scope as `remember --on-similar skip` finds it: the same words once normalised, or with
vectors a meaning as close as cosine 0.88 with the same numbers, ids, dates and names. Another
scope's private records are never compared or named. A statement that holds what looks like a
credential (a cloud key, a token, a private key, a password, a URL with a password) is left out
whole and only counted (`credentials_left_out`, `credential_kinds`): never stored, never shown.
`eidetic capture` embeds (the model loads) unless `--no-embed`; the session-end hook embeds
when the warm daemon answers it, else judges by words alone. Private unless `--visibility public`
or the `capture` setting says public; `--dry-run` writes nothing (words alone). The session-end
hook does the same when `capture` is `private` or `public` (default `off`), reading the payload's
transcript only from Claude Code's own folder (`~/.claude/projects/`, or
`$CLAUDE_CONFIG_DIR/projects/`) and never through a symlink: anything else is refused and the
hook's log says why. `eidetic capture` reads any regular file it is named; never a FIFO or a
device.""",
}
