"""``eidetic explain TOPIC``: markdown help for every verb and concept, for people and agents.
Without a topic it lists the topics, each with one line: a verb's line is its ``--help`` line
(one text for both), a concept's is in ``CONCEPTS``."""

from __future__ import annotations

import argparse
import difflib

from ..errors import user_error
from ..stores.backends import SPOKEN
from .explain_consolidate import CONSOLIDATE
from .explain_hooks import HOOKS
from .explain_time import TIME
from .output import emit_json, emit_text

CONCEPTS: dict[str, str] = {  # the topics that are not verbs, with their line in the list
    "eidetic": "what eidetic is, and every verb and concept",
    "records": "the record file: front matter, then the text",
    "stores": "where records live: the repository's and your home store",
    "backends": f"{SPOKEN}: where a store keeps its records",
    "modes": "exact, keyword, approximate, hybrid, fields: how recall ranks",
    "fields": "the transparent ranking of markdown memory folders (and memory-recall)",
    "thread": "how a conversation's turns lend their words to each other",
    "scope": "who sees which records: public, private, scope-only",
    "lifecycle": "active, shadowed, archived: what recall leaves out",
    "freshness": "the freshness signal: age and usage move a score",
    "time": "two clocks per record, --as-of, and a time named in the query ('last week')",
    "usage": "what counts as a recall: which hits' usage grows",
    "relevance": "the relevance floor: when recall answers that nothing relevant is stored",
    "formats": "table, text, markdown or json output, and when there is colour",
    "traversal": "linked records: links, supersedes, depth",
    "vocabulary": "the names every interface uses for the same things",
    "errors": "exit codes, error and warning output",
}

TOPICS: dict[str, str] = {
    "eidetic": """# eidetic
A memory store for AI agents and their teams. Agents `remember` short records with provenance and
`recall` them verbatim, by keyword or by meaning: ranked, each hit with a score, a freshness
signal and full metadata. Records are markdown files; the search index is derived.

Verbs: remember, recall, list, show, edit, sweep, consolidate, forget, restore, overview, doctor, audit, import,
export, migrate, index, watch, mcp, serve, tokens, log, skills, context, hooks, hook, capture, completion, explain,
demo; and the `memory-recall` command. Concepts: records, stores, backends, modes, fields, thread,
scope, lifecycle, time, freshness, usage, relevance, traversal, formats, vocabulary, errors. Run `eidetic explain TOPIC` for any of them,
`eidetic explain` for the list.""",
    "remember": """# eidetic remember
Store records: text (`eidetic remember "Never deploy on Fridays"`), one JSON object as an
argument (it starts with `{`; one that does not parse is an error, never a note), or NDJSON on
stdin (one object per line). Text takes its fields from `--id`, `--type`, `--name`,
`--description`, `--meta KEY=VALUE` (typed as `--filter` reads it: 3, 2.5, true, null; a key
given twice holds a list), `--link ID`, `--supersedes ID`; `--text` takes text that starts with
a brace. The whole batch is validated before anything is written; a bad line exits 1 naming it.
Upsert by `id` (derived from scope and text when omitted): `created`, lifecycle and usage are
kept; an unchanged record is not rewritten. Identical text under a new id in the same scope is
reported in `duplicates` and not written. A record that `supersedes` another of its scope
shadows it at once. A new record whose meaning is already in its scope (same name and
visibility; never another scope) is reported with those records as `similar_to` (text equal once
case, punctuation and spacing are set aside, or a cosine of 0.88 or more with the same numbers,
ids, dates and names: `eidetic explain consolidate`; without vectors, `--no-embed`, by text
alone; a bulk batch is checked as fully as one record, with the vectors computed before
anything is written); `--on-similar write` (default) writes it, `skip` leaves it out (status
similar), `supersede` writes it superseding the closest. A type no record in reach has
yet that is close to a known one (`--type decisoin`) is written with a warning naming the known
types. A private record out of reach of commands without scope flags is written with a note
saying which flags read it (see scope). Each record is reported: new,
updated, unchanged, duplicate (of which) or similar, with its file (files backend) or its backend
and database.
Credentials: a public record (shared: every scope reads it, and in a repository it is committed)
that holds what looks like a credential (a cloud key, a token, a private key, a password in
"password is/=" form, a URL with a password) is refused: exit 1 naming the record and the kind,
never the secret, nothing of the batch written; `--allow-secrets` writes it knowingly. A private
record is written with a warning. Hashes, UUIDs and git SHAs are not credentials.
Flags: `--scope NAME`, `--visibility public|private`, `--added-by NICK`, `--no-embed`,
`--on-similar write|skip|supersede`, `--allow-secrets`, `--memory-dir DIR` (created if missing), `--json`.
Output: `{"upserted", "ids", "duplicates": [{"id", "duplicate_of"}], "items": [{"id", "status",
"duplicate_of"?, "similar_to"?: [{"id", "score", "rule"}], "shadowed"?, "backend", "store",
"path"}]}`.""",
    "recall": """# eidetic recall QUERY
Ranked records for a query: the top-k primary hits, then records linked to them.
Flags: `--mode exact|keyword|approximate|hybrid` (default hybrid), `--top-k N` (>= 1),
`--case-sensitive`, `--filter KEY=VALUE` (typed; `KEY>=V`, `KEY<=V` for numbers and ISO dates),
`--source S`, `--type T`, `--since DATE`, `--until DATE`, `--scope NAME`, `--visibility`,
`--scope-only`, `--include-shadowed`, `--include-archived`, `--as-of DATE` (the store as it stood
then: see time), `--min-score S`, `--relevance-floor auto|off|N` (default off here; on, auto, in the
MCP tool and the recall skill: see relevance), `--depth N`, `--max-nodes N`, `--explain`, `--no-record`,
`--format table|text|markdown|json`, `--json`. A `--type` no record in reach has is warned about
(it matches nothing), with the close and the known types.
Output: `{"query", "mode", "truncated", "embedder": {"model", "online"}, "items": [...]}`; every
item has all record fields plus recall_count, last_recall, score, signal, tier, depth, path (the
record's file on the files backend, else null) (and via, parent for linked records). `--explain`
adds how each score was made, in every mode and for linked records (the text output says what
the number means). The first semantic recall after a `--no-embed` remember or an import embeds
the texts it lacks, once, with a progress bar on a terminal. When nothing matched but archived or
shadowed records would have, `hidden` counts them and the text names the flag that shows them.
With the floor on, `relevance_floor` and `below_floor` say what it dropped. Keyword, approximate
and hybrid hits are judged even with the floor off: each has its `relevance` (1.0: the calibrated
line, the same for every query) and `relevant`; the table shows them as RELEVANCE (`1.55 strong`),
sets the hits below the floor apart under a rule and says `nothing relevant to “…”` when none
clears it (see relevance). See also: modes, relevance, scope, time, freshness, usage, traversal,
formats.""",
    "list": """# eidetic list
The records your scope may see, newest write first, a page at a time; not a recall (no usage is
counted). Filters as recall's: `--type T` (repeatable), `--filter KEY=VALUE`, `--source`,
`--since`, `--until`, `--scope`, `--visibility`, `--scope-only`, `--include-archived`,
`--include-shadowed`, `--as-of DATE` (as the store stood then: see time); `--lifecycle archived`
(repeatable) lists only records in that state (then, with `--as-of`). A `--type` no record in
reach has (`decisions`) is warned about on stderr, with the close and the known types.
`--sort updated|created|recalled|name` (`--reverse` flips it; name sorts
A to Z by the name, else the text), `--limit N` (default 50), `--offset N`.
Output: a table on a terminal (id, type, scope, the date the order goes by: updated, or created
with `--sort created`, recalls, and the name and first lines of the text wrapped to the width;
in a pipe one line a record with the name or the text's start), `--format markdown`, or `--json`: `{"items": [...], "total": N}`, each item the record with recall_count,
last_recall and path (its file on the files backend). Stores are merged in sort order; an id in
an earlier store hides later copies you may see.""",
    "show": """# eidetic show ID
One record in full: every field and its whole text, its file (files backend) or its store (the
database file; the server, without a password), its usage, the records it links to and that link
to it, what it supersedes and what supersedes (and shadows) it. A link to a record you may not see
reads `not found`, like a missing one; a missing id and one out of your scope give the same
error, with the ids in reach closest to it ("did you mean"). Not a recall. `--json` gives one object: the record, `recall_count`, `last_recall`,
`path`, `store` `{"backend", "location"}` and `connections` `{"links_out", "links_in",
"supersedes", "superseded_by"}`.""",
    "edit": """# eidetic edit ID
Opens the record in `$VISUAL`, else `$EDITOR`, else `vi`, as a markdown file with front matter
(the files backend's format, on every backend). Your editor works on a private temporary copy:
the store is not locked while it is open. On save the file is checked as `remember` checks input
and written atomically, only if nobody changed the record meanwhile; an unchanged file changes
nothing. The id and the lifecycle cannot be changed by editing (use remember, forget, restore);
`updated` is set by the save. A refused edit is never lost: on a terminal you are offered to
edit it again, otherwise the error names the file it is kept in; `--from FILE` starts from it.""",
    "relevance": """# The relevance floor (`--relevance-floor auto|off|N`)
A ranking always has a best hit; with the floor on, "nothing relevant" is an answer. Each primary
hit is judged on raw evidence, never on its score: approximate, its cosine over the model's
calibrated floor; keyword, BM25 / the idf mass of the query's terms (a query word the store lacks
weighs most) over the keyword floor; hybrid, the larger of the two. That ratio is the hit's
`relevance`. Unless the best hit reaches the line (auto: 1.0; a number: another line, higher is
stricter) there are no hits; then each hit must reach its mode's share of it (hybrid 0.5, keyword
0.85, approximate 0.9), so hits far below are dropped one by one, from the top k (nothing moves
up), before linked records are followed. Exact matches are all relevant; fields mode has its own
floor (`--min-score`, default 0.5). A young store (under 350 records you may see) draws the line
the best hit must reach lower, the fewer its records (the best of twenty unrelated records sits
lower than the best of five hundred), so its obvious answers are kept; where the best lies under
the large stores' line, each other hit needs only its mode's share of the best (an answer just
below a first hit that answers too stays). In approximate mode a young store also keeps a hit
that stands out: its cosine well above the store's reference for the query (the median cosine of
the 100 nearest records), which a real answer reaches and an unrelated query's best does not,
or whose words match (BM25 as keyword recall scores it, over the query's idf mass): meaning
still ranks, words only keep. `--explain` shows the floors as drawn, `store_records`, and
`cosine_reference`, `standout_floor` and `bm25` where standing out and words were judged.
Defaults: off for `eidetic recall` and the Python API (people exploring want neighbours), auto
for the MCP `recall` tool and the recall skill (an agent's context is better empty than noisy).
`--json` adds `relevance_floor` (the line) and `below_floor` (hits dropped, all of them records
you may see); `--explain` shows the evidence. Calibrated for the bundled model on public data
(docs/benchmarks.md: unrelated queries answered with nothing 95-99 % of the time in hybrid mode);
another model's cosines are not judged, with a warning.
What a person reads: a score only ranks one query's hits (hybrid's best is about 1.0 whatever was
asked), so the recall table, text and markdown and the viewer show each hit's relevance with a
word: strong (1.25 and up), good (1.0 and up), weak (kept for its share), low (below the floor).
With the floor off (recall's and the viewer's default: people exploring want the neighbours),
every hit is still judged and those below the floor are set apart under a rule (the viewer folds
them under a count); with it on they are left out and counted; when none clears it, "nothing
relevant to …" is said in words. `context` and the prompt hook never give a hit below the floor.
`--json` adds `relevance` and `relevant` to each judged hit and keeps every other field.""",
    "usage": """# What counts as a recall
`recall_count` and `last_recall` count what a reader used, and feed the freshness signal.
- exact and keyword: a primary hit counts (+1) when its score is at least half the best hit's.
- approximate and hybrid: only the best hit counts; they always fill the top k, and counting an
  unrelated tail would make it look fresh.
- A linked record counts (0.5^depth) only when the hit it was reached from counts.
- Browsing is not recalling: `list`, `show`, `memory-recall --type T` without words, and the MCP
  resources `eidetic://records` and `eidetic://record/{id}` count nothing.
- `--no-record` (MCP: `record: false`) counts nothing.
docs/benchmarks.md has the measurements behind the rule.""",
    "formats": """# Output formats
`recall` and `list` take `--format`: `table` (the default on a terminal: each record's scope,
date, and its name and the first lines of its text wrapped to the terminal's width, as a last
column on a wide terminal and under its row on a narrow one, where the recall count gives way;
in a pipe one line a record, every cell whole), `text` (recall's default in a pipe: every field
in full), `markdown`, `json` (the same as `--json`; indented on a terminal, one line in a pipe). Colour only on a terminal, never in a pipe, and not
when `NO_COLOR` is set or `TERM=dumb`. Control characters in a record are shown as escapes, so a
record can never drive your terminal.""",
    "modes": """# Recall modes
- `exact`: case-insensitive substring; score = min(1, len(query) / len(text)); shortest first.
- `keyword`: BM25 over stemmed words (stop words dropped); fields name, description, text and
  context (weights 1, 1, 1, 2); only records sharing a word with the query (or, in a
  thread, with a neighbour). Its statistics (record count, word frequencies, average lengths)
  are those of everything you may read over every store you recall from, so a record's score
  does not depend on which store or partition holds it. See also: context.
- `approximate`: cosine similarity of all-MiniLM-L6-v2 embeddings (local and offline).
- `hybrid` (default): alpha * cosine (min-max normalised) + (1 - alpha) * BM25 / max BM25 over
  the union of each signal's top N (N = max(10 * top-k, 100)); `--alpha`, default 0.5.
- `fields`: the transparent ranking of markdown memory folders (see: fields).
Vectors are cached per (model, text); each store keeps a vector index per model, searched
exactly up to `EIDETIC_ANN_THRESHOLD` rows (20000; 0 = always exact), with an HNSW graph
above (candidates re-scored exactly; recall@10 >= 0.99 measured at 1M vectors).
`EIDETIC_EMBED_URL` (+ `EIDETIC_EMBED_MODEL`, `EIDETIC_EMBED_API_KEY`, `EIDETIC_EMBED_TIMEOUT`)
uses any OpenAI-compatible /embeddings endpoint instead of the local model.
When the model cannot load or the endpoint fails (or `EIDETIC_EMBEDDER=none`), both rank exactly
as keyword, say why on stderr and report `embedder.online: false`.""",
    "fields": """# The fields ranking (`--mode fields`, `memory-recall`)
Transparent and deterministic, for folders of markdown memories (front matter name, description,
type; the body):
score = (keyword + type_prior + usage_boost) * recency_factor
- keyword, per query term: name +5, description +3, body +1 per occurrence (at most 3);
  case-insensitive substrings; hyphens and underscores in a name count as spaces;
- type_prior: feedback 1.0, user 0.75, project 0.5, reference 0.25, other 0;
- usage_boost = log2(1 + recall_count) * 0.5;
- recency_factor = clamp(1.5 - months_since_touched / stale_months, 0.5, 1.5); touched is the
  latest of the file's mtime, `updated` and the newest date in a `## History` section
  (a month = 365.25 / 12 days).
No keyword hit, no result; except a browse (`--type` and no query): (1 + usage_boost) * recency.
`--min-score` defaults to 0.5 and `--stale-months` to 6 in this mode; `--explain` shows every
input. MEMORY.md is never a record. `memory-recall` is the same ranking with the command line
coding agents' memory-recall tools use: `memory-recall [query] TERMS... [--type T] [--limit N] [--min-score S] [--stale-months N]
[--memory-dir DIR] [--project-root DIR] [--all] [--json] [--explain] [--no-record]`; `--top-k` is
`--limit`, and each JSON result carries `id`, `recall_count` and `last_recall` besides the tools' keys.""",
    "audit": """# eidetic audit
Grades every memory you may see, read-only:
- dead-reference: it names a repository file path (`src/x.py`, `docs/y.md:12`) that does not
  exist under the repository root (`--repo-root`, default: the git work tree of the current
  folder); URLs, domains and absolute paths are not repository paths;
- stale: neither touched (file mtime, `updated`, `## History` date) nor recalled within
  `--stale-months` (default 6);
- fresh: otherwise. Both at once: dead-reference, with both reasons.
Output: the problems first, dead references then stale memories, each with its reasons, then
the counts (fresh memories are counted, not listed); `--json` lists every memory:
`{"repo_root", "stale_months", "now", "summary": {"fresh", "stale", "dead-reference"}, "count",
"items": [{"id", "name", "path", "grade", "reasons", "references", "missing",
"months_since_touched", "recall_count", "last_recall"}]}`.""",
    "thread": """# Conversation context
Records whose metadata share a `thread` (or `thread_id`, `conversation_id`) form a thread,
ordered by `created`, then by id with numbers compared as numbers (turn-2 before turn-10). A
record's keyword `context` field holds its text together with the texts of the two records
before it and the one after it in its thread, so a reply ("Yes, every Tuesday!") is found by the
words of the question before it, even with a turn between them ("Which class?"). The thread is
taken at recall time over everything you may read: every store you recall from, the public
records and your own private ones, so a public turn is found through your private replies by
you, and by nobody else. Only active records lend context (another scope's private records
never); links do not (recall already returns linked records as traversal items).""",
    "scope": """# Scope and visibility
Every record has a scope: a name and `public` or `private`. A public record is served to every
query; a private record only to a query with the same `--scope` and `--visibility private`.
`--scope-only` keeps only records of the query's own scope name. The rule holds on every read:
recall (both tiers), overview, export, forget/restore. Default query scope: default/public.
So a record remembered `--visibility private` is out of reach of a command without flags:
remember says so on stderr, with the command that reads it back (`eidetic show ID --scope NAME
--visibility private`). To read your own private records without flags (and write new records
private), put `scope = "NAME"` and `visibility = "private"` in your config file (`eidetic config`
names it); scripts that give their flags are unaffected. An id out of reach gives the same error
as a missing one, and its "did you mean" names only ids in reach.""",
    "lifecycle": """# Lifecycle
`active`, `shadowed` (superseded by a record of the same scope) or `archived` (stale). Recall
hides shadowed and archived records unless `--include-shadowed` / `--include-archived`. Each
change is dated in the record's `history`, so `--as-of` knows the lifecycle it had then (time).
`sweep` applies the rules (see `eidetic explain sweep`); `forget ID` archives one record and
`restore ID` brings it back; only `forget --purge` deletes anything.""",
    "sweep": """# eidetic sweep
Applies the lifecycle rules to every record: superseded by a same-scope record -> shadowed;
created more than 365 days ago, or freshness signal below 0.25 -> archived (active records
only); `metadata.protected` exempts; nothing is deleted. Same-scope records with the same text
are listed as suggestions, with the `eidetic forget` commands that keep the earliest. Each change
names the `eidetic restore` command that undoes it. The report lists and counts only what
`--scope`/`--visibility` may see (default: public records). Flags: `--dry-run`, `--now ISO`
(judge ages at that time), `--json`.
Output: `{"dry_run", "now", "scanned", "shadowed", "archived", "changed": [{"id", "lifecycle",
"undo"}], "suggestions": [{"reason", "ids", "scope", "keep", "commands"}]}`.""",
    "forget": """# eidetic forget ID
Archives a record (undo with `eidetic restore ID`). `--purge` instead removes its file, index
entries and usage for good: the one deliberate hard delete, for secrets remembered by mistake;
it asks for the id unless `--yes`. A private record needs its `--scope` and `--visibility private`.""",
    "restore": """# eidetic restore ID
Makes an archived or shadowed record active again. Same scope flags as forget.""",
    "freshness": """# Freshness signal
Each hit has `signal` in [0, 1] from its age, how often and how lately it was recalled:
access_bonus = min(0.5, recall_count * 0.05); age_factor = 1 / (1 + days_since_created * 0.01);
staleness = days_since_last_recall * 0.01;
signal = clamp((0.5 - staleness + access_bonus) * age_factor, 0, 1);
score = raw_score * (1 + 0.25 * (signal - 0.5)). Undated, never-recalled records are not blended.
A recall adds 1 to the recall_count of each primary hit it counts as used (0.5^depth to linked
records; see: usage) in a per-user state database; record files are never rewritten by recall.
`--no-record` skips it.""",
    "traversal": """# Linked records
After the primary hits, recall follows `links` then `supersedes` breadth first, `--depth` hops
(default 1; 0 = none), at most `--max-nodes` records (default 20). Scope, lifecycle flags and
`--source` apply at every hop; a record the caller may not see is a dead end. Linked items have
tier `traversal`, their depth, `via` (links or supersedes), `parent`, and score = parent score
x 0.5. `truncated` is true only when a bound cut off a record the caller may see.""",
    "records": """# Records
One markdown file per record: YAML front matter (id, type, name, description, scope, created,
updated, occurred, valid_from, valid_until, added_by, supersedes, links, lifecycle, history,
metadata; see time), then the text. Hand-written files
are records too (a file without `id` takes its path as id); `MEMORY.md`, hidden and
non-markdown files are not. A file that cannot be parsed is skipped with a warning, as is one
whose front matter nests more than 32 levels, expands through YAML aliases to more than 10,000
values, or holds over 64 KiB of metadata, `.nan`/`.inf` or a NUL character (remember refuses
the same input). Writes never follow a symlink inside the store, and a batch that fails half-way
is undone. A folder holding `MEMORY.md` (a coding agent's memory folder) is written the agent's
way: flat files named from the record's name, front matter led by name/description/type, one
`- [name](file.md) — description` line in MEMORY.md per active record (kept right by update,
forget, restore and purge; your other lines untouched), the lock and staging beside the folder,
never in it.""",
    "stores": """# Stores
Public records written inside a git work tree go to `<repo>/.eidetic/memory`; private records
and everything outside a repository to `$HOME/.eidetic/memory`. `EIDETIC_DATA_DIR` replaces both;
`--memory-dir DIR` names stores for one command. Recall reads all and merges them (an id in the
home store wins). The index lives in the user cache folder and can be rebuilt at any time.
That is the `files` backend; see also: backends.""",
    "backends": """# Backends (`--backend`, or `EIDETIC_BACKEND`)
- `files` (default): markdown files in the stores above, a derived index in the cache folder.
- `sqlite`: one database file is the store (`--db PATH`, `EIDETIC_SQLITE_PATH`, else
  `~/.eidetic/memory.sqlite`): for large private stores. SQLite transactions, never rebuilt;
  its keyword and vector indexes are derived (cache folder).
- `postgres`: a PostgreSQL server with pgvector (`--dsn`, `EIDETIC_PG_DSN`;
  `pip install 'eidetic[postgres]'`): one memory for a team. See docs/team-server.md.
- `neo4j`: a graph server over Bolt, Neo4j 5 or ArcadeDB (`--uri bolt://host:port/database`,
  `EIDETIC_NEO4J_URI`; `--user`/`--password`, `EIDETIC_NEO4J_USER`/`EIDETIC_NEO4J_PASSWORD`;
  `pip install 'eidetic[neo4j]'`): records are nodes, links and supersedes relationships you can
  query with Cypher; its search indexes are derived (cache folder). See docs/graph-backend.md.
Same results, scope rule and guarantees on all four. `eidetic migrate` copies between them.
`mongo` is not offered: no real MongoDB server can be run where eidetic is tested.""",
    "migrate": """# eidetic migrate --from BACKEND --to BACKEND
Copies a whole store, every scope and lifecycle state, with usage counts: `--from-dir`,
`--from-db`, `--from-dsn`, `--from-uri` and `--to-dir`, `--to-db`, `--to-dsn`, `--to-uri` name the two places (default:
the usual ones). Idempotent: a second run writes only what changed; progress shows on stderr.
`--json` gives `{"from", "to", "records", "written", "unchanged"}`.""",
    "import": """# eidetic import [FILE|FOLDER|-]
Reads NDJSON in the remember format (what `export` writes, usage and lifecycle included), an
eidetic-cli store (a folder of `<scope>__<visibility>.jsonl` files) or a folder of markdown
memories (`--format` when detection is not enough). Every record is validated; bad lines are
reported with file and line and skipped (exit 1), good ones written; importing twice writes
nothing the second time. A public record that holds what looks like a credential is skipped
(`"credential": true`, the kind named, never the secret) unless `--allow-secrets`; a private one
is imported with a warning. `--json` gives `{"format", "source", "imported", "written",
"unchanged", "skipped", "warnings"}`.""",
    "mcp": """# eidetic mcp
A Model Context Protocol server over stdio: tools remember, recall, sweep, overview; records as
resources (`eidetic://record/{id}`, `eidetic://records`). Start it for one session scope
(`--scope`, `--visibility`); a call may read public records of any scope but private ones only
of the session's own scope, and `remember` writes only into scopes the session may read. A public
record holding what looks like a credential is a tool error naming the kind (`"allow_secrets":
true` writes it knowingly); a private one is written and the client's log hears a warning.
`recall` answers compact hits (id, text, type, created, scope, score and the fields that are set;
`"detail": "full"` gives `eidetic recall --json`'s); its schema lists the options agents need and
takes the other recall options by name. Started on a terminal it says what it is; Ctrl-C stops it.
Register it with an agent: `claude mcp add eidetic -- eidetic mcp`.""",
    "serve": """# eidetic serve
A web viewer for people and MCP over streamable HTTP (at `/mcp`) for agents, from one warm process,
for one session scope (`--scope`, `--visibility`, as for `mcp`). Prints the URL on stderr.
`--host` (default 127.0.0.1), `--port` (default 8377 on every start; 0 picks a free one; a taken
port is an error with a hint), `--open` opens the viewer in your browser, `--workers N` (default 4)
serves N calls at once, each on a thread with its own store connections (reads side by side, writes
one at a time in the store; 1: one call at a time); store flags as for every verb. Pages: home and search (`/`: without a query, the records written last, most and never
recalled, counts by type and scope, and on an empty store how to remember the first record; with
one, every recall option, matched words marked; not counted as a recall unless the address says
`record=1`), a record (`/record?id=ID`: text as markdown, fields, file, links both ways,
supersedes chain, usage, and a thread member's neighbours that the session may read), browse
(`/browse`: by type, scope (picked from lists), lifecycle, date; sorted, paged), overview (`/overview`: counts, most and never recalled, audit grades, recent changes).
Changes: edit (checked as remember checks input, refused if the record changed meanwhile),
forget/restore (after a confirmation), supersede; only records and scopes the session may see.
Access: on loopback only the server's own address (`127.0.0.1:PORT`, `localhost:PORT`) is
answered; beyond loopback (and with `--token`) every request needs the token
(`EIDETIC_SERVE_TOKEN`, else one is made and printed once in the URL to open; that URL sets a
cookie and drops the token from the address; agents send `Authorization: Bearer TOKEN`). A token
of only spaces is none, wherever it is read. A change from another site's page is refused; every
redirect is a path on this server (`//host/` is collapsed to `/host/`). Members: once `eidetic
tokens add` made a token, every request needs one (even on loopback), and a member's token is
their identity: their own session scope, `added_by` on what they write (a client's own claim kept
as `metadata.claimed_by`), refused writes when read-only; the pages say who is signed in. The
server's own token (`EIDETIC_SERVE_TOKEN`) still opens it as the server's `--scope`. Wrong tokens
get 401 and are logged (address, path, count; never the token).
Health: `GET /healthz` needs no token and sets no cookie: `{"ok": true, "version"}` once the store
answers, else 503 with a short reason (never a path, a DSN, a count or a record).
Limits: a request body over `--max-body BYTES` (default 1048576, 1 MiB; a chunked body is counted
as it arrives) gets 413; an MCP `remember` takes at most 1,000 records a call (more: a tool error,
nothing written); a caller (one token, else one address) has at most `--per-token N` calls in
flight (default half of `--workers`, so 2), and a call beyond them waits up to 2 s, then gets 429 with `Retry-After`.
Stopping: SIGTERM or Ctrl-C stops listening, lets the calls in flight answer (up to 30 s), closes
MCP's event streams and the store, and exits 0. Several servers may share one PostgreSQL store:
each answers from the database on every request.
See docs/viewer.md and docs/team-server.md.""",
    "tokens": """# eidetic tokens add NAME --scope SCOPE | list | revoke NAME
Members of a shared `eidetic serve`. `tokens add NAME --scope SCOPE [--visibility private|public]
[--read-only]` prints the member's new token once, alone on stdout (`TOKEN=$(eidetic tokens add
alice --scope alice --visibility private)`); only its SHA-256 is kept. A name is letters, digits,
`-`, `_`, `.`; a name that already has a token is refused (revoke it first). `tokens list
[--json] [--revoked]` shows names, scopes, rights, created and last used (written at most once a
minute), never tokens. `tokens revoke NAME` ends a token; the server refuses it from its next
request, with no restart. The store flags pick where members are kept: the postgres store's
database (table `eidetic_members`, shared by every server on it), else `serve-tokens.json` in
the state folder (mode 0600). Agents send `Authorization: Bearer TOKEN`; people open the
server's URL with `?token=TOKEN` once. See docs/team-server.md.""",
    "log": """# eidetic log
Who changed what through `eidetic serve`: every write the server made (remember, supersede,
forget, restore, edit, sweep) with its time (UTC), the member who made it (`(server)` on a
server without member tokens), the operation, the ids it changed and the server's scope; never a
record's text, never a token. Newest first, at most `--limit N` (default 50). Filters:
`--member NAME`, `--since WHEN` (as recall's: an ISO date, 7d / 12h / 2w, 'last monday'),
`--id ID` (writes that changed that record), `--operation OP`. The store flags pick the log: a
postgres store keeps it in its database (table `eidetic_write_log`), every other store in
`write-log.jsonl` in the state folder. A call that changed nothing leaves no entry. `--json`
gives `{"log", "items", "more"}`. See docs/team-server.md, "Who wrote what".""",
    "skills": """# eidetic skills install [DIR]
Copies the `recall` and `remember` agent skills (SKILL.md and a wrapper script each) into
`DIR/.claude/skills/` (default: the repository root). The wrappers find the CLI, forward every
flag, and default to the agent's private scope named by the nearest culture.yaml.""",
    "index": """# eidetic index
Shows where each store's index is, how many records it holds and whether it is current.
`--refresh` checks every file now; `--rebuild` drops the index and builds it from the files
(usage survives). Recall keeps the index current by itself. `--scope`/`--visibility`: counts,
id conflicts and vector partitions are those that scope may see.""",
    "watch": """# eidetic watch
Optional: watches the stores with the operating system's file events and indexes every change
at once, including files edited in place in large stores (which recall otherwise finds within a
bounded number of calls). Runs in the foreground until Ctrl-C.""",
    "overview": """# eidetic overview
Per store: records you may see by scope, lifecycle and type, contributors (added_by and
metadata.author), link connections, index and embedder state. `--scope`/`--visibility` as for
recall; others' private scopes are not even counted.""",
    "doctor": """# eidetic doctor
Checks that stores are readable, record files parse, the index is current and ids are unique,
and reports the embedder. Exit 1 when an error-level check fails. `--scope`/`--visibility` as
for `index`.""",
    "export": """# eidetic export
Writes every record you may see as NDJSON in the remember format, with recall_count and
last_recall (`--no-usage` leaves them out; `--active-only` leaves out shadowed and archived
records). `--scope`/`--visibility` as for recall. stderr says how many records were written and
what was left out, counting only what your scope could see (others' private records are never
counted). `--all` is the store owner's full backup: every record of every scope, visibility and
lifecycle state (on a shared postgres server that includes colleagues' private records, which
the server's credentials read anyway; it says so). `eidetic import` reads it back identically.""",
    "explain": """# eidetic explain [TOPIC]
This help. Without a topic: the list of topics, one line each. `--json` gives
`{"topic", "markdown"}`, or for the list `{"topics": [{"topic", "summary"}]}`.""",
    "config": """# eidetic config
Every setting, its value and where the value came from. Later sources win: defaults, your config
file (`~/.config/eidetic/config.toml`, or `EIDETIC_CONFIG`), the repository's
`.eidetic/config.toml` (only scope, visibility, mode and top-k), `EIDETIC_*` variables, then
flags. `--scope`/`--visibility` show what a command given them would use. `--json` gives
`{"files": {"user", "repository"}, "settings": [...]}`. Keys: docs/configuration.md.""",
    "completion": """# eidetic completion bash|zsh|fish
Prints a tab-completion script for every verb, flag and choice (generated from the parser, so
it is never out of date). `--command memory-recall` gives memory-recall's instead. Install:
- bash: `eidetic completion bash > ~/.local/share/bash-completion/completions/eidetic`
  (or `source <(eidetic completion bash)` in ~/.bashrc)
- zsh: `eidetic completion zsh > ~/.zfunc/_eidetic` with `fpath=(~/.zfunc $fpath)` before
  `compinit` in ~/.zshrc
- fish: `eidetic completion fish > ~/.config/fish/completions/eidetic.fish`""",
    "vocabulary": """# Vocabulary
The same thing has the same name in the CLI, its JSON, the Python API and the MCP tools:
- `items`: a list of hits or records (recall, audit, the MCP records resource);
- `recall_count`, `last_recall`: a record's usage;
- `path`: a record's file (files backend; absent or null elsewhere);
- `top_k` (`--top-k`): how many hits;
- `scope`: `{"name", "visibility"}`.
`memory-recall` keeps the JSON of the tools it stands in for (`results`, `usage_count`, `--limit`)
and adds eidetic's names (`id`, `recall_count`, `last_recall`; `--top-k`).""",
    "errors": """# Errors and exit codes
Results on stdout, diagnostics on stderr. Exit 0 success, 1 bad input, 2 environment (disk,
permissions, missing model or server). With `--json` stdout holds only JSON and stderr one JSON
object a line: a warning is `{"warning"}`, a note (what an export wrote or left out) `{"info"}`,
a long run's start `{"progress", "total"}`, an error `{"code", "message", "remediation"}`. Bad
input never writes anything. A mistyped verb, flag, choice or id is answered with the closest
ones ("did you mean", and the command rewritten), and a verb of another tool with eidetic's:
search, find, grep and query are `recall`; ls `list`; add, save and write `remember`; rm, delete
and remove `forget`; cat, get, view and read `show`; help `explain`. A `--memory-dir` that does not exist is an error for every verb but
`remember` and `import`, which create it.""",
    "demo": """# eidetic demo
Remembers a dozen sample memories in a temporary store, recalls them in each mode, and removes
everything afterwards. On a terminal each recall is shown as recall's table; in a pipe as its
text (every field).""",
}


TOPICS["time"] = TIME
TOPICS.update(HOOKS)
TOPICS["consolidate"] = CONSOLIDATE


def add_parser(sub, add_common) -> None:
    parser = sub.add_parser("explain", help="markdown help for a verb or concept (no topic: the list)")
    parser.add_argument("topic", nargs="*", help="e.g. recall, scope, lifecycle (none: list the topics)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(run=run, memory_dir=None, backend="files")


def run(args: argparse.Namespace) -> int:
    topic = " ".join(args.topic).strip().lower()
    if not topic:
        return _list(args.json)
    if topic.startswith("eidetic "):
        topic = topic[len("eidetic ") :]
    if topic not in TOPICS:
        near = difflib.get_close_matches(topic, TOPICS, n=1)
        raise user_error(
            f"no explain entry for {topic[:60]!r}",
            (f"did you mean {near[0]!r}? " if near else "") + "topics: " + ", ".join(sorted(TOPICS)),
        )
    if args.json:
        emit_json({"topic": topic, "markdown": TOPICS[topic]})
    else:
        emit_text(TOPICS[topic])
    return 0


def summaries() -> dict[str, str]:
    """Every topic with its line: the verbs' (from their --help, in the parser's order), then the concepts'."""
    from .main import build_parser, verbs

    lines = {name: line for name, (_, line) in verbs(build_parser()).items() if name in TOPICS}
    return {"eidetic": CONCEPTS["eidetic"], **lines, **CONCEPTS}


def _list(as_json: bool) -> int:
    lines = summaries()
    if as_json:
        emit_json({"topics": [{"topic": name, "summary": line} for name, line in lines.items()]})
        return 0
    width = max(map(len, lines))
    out = ["Run `eidetic explain TOPIC` for one of these:", ""]
    out += [f"  {name:<{width}}  {line}" for name, line in lines.items()]
    emit_text("\n".join(out))
    return 0
