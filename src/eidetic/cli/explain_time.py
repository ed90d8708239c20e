"""The built-in manual's pages about time (``eidetic explain time``): kept apart from
``explain`` so that module stays one screenful of topics per concern."""

TIME = """# Time: two clocks per record, `--as-of`, and a time named in the query
Every record has two clocks.
- Recorded (eidetic keeps it): `created`, `updated`, and `history`, one entry per lifecycle
  change, oldest first: `{at, from, to}` (forget, restore, a supersede that shadowed it, a
  sweep). Written by eidetic; `edit` cannot change it, `export`/`import`/`migrate` carry it.
- Event (yours, each optional, an ISO date or date-time): `occurred`, when what the record
  tells happened (a meeting, a deploy, a chat turn); `valid_from`/`valid_until`, when what it
  says holds (a decision, a fact); `valid_until` is the first moment it no longer does. Give
  them in a JSON record (`{"text": ..., "valid_from": "2026-03-01"}`), NDJSON, an import, an
  edit or a hand-written file's front matter. `valid_until` before `valid_from` is refused.
A record that `supersedes` another of its scope shadows it and so closes its validity: the
`history` entry `to: shadowed` dates it; the record is kept, never deleted; the text output and
the viewer show `valid ... until T (superseded)`. Freshness is judged from `created`, as before.

`recall --as-of DATE` (and `list --as-of DATE`) answers as the store stood then:
- only records created by then (a record of unknown creation date always was);
- only records valid then: `valid_from <= DATE < valid_until` (a bound left out is open);
- each in the lifecycle it had then: the `from` of its first change after DATE, else its
  lifecycle now; so a record superseded later is active as of an earlier date, one forgotten
  later is active then, one restored later is archived then (if it was archived then). The
  usual flags apply to that lifecycle (`--include-shadowed`, `--include-archived`), and
  linked records (`--depth`) are followed as they stood then;
- items show that lifecycle and the history up to DATE; the JSON says `"as_of"`.
DATE is an ISO date (the end of that day, UTC) or date-time (no zone: UTC), a duration back from
`--now` (`30d`, `12h`, `2w`, `3mo`, `1y`, "3 months ago": that exact moment) or time words read
as below ("last month": its last moment); a DATE after now is now. Freshness is judged at DATE from the record's age alone (usage has no dates), and an as-of
recall counts as no one's recall (nor does one asked at another `--now`: usage is dated by the
clock). The text, fields and links are the record's current ones:
eidetic keeps no older versions of a record (supersede it to keep one). A lifecycle changed by
hand in a file holds from its last dated change on. The scope rule is the same: another scope's
private records are never seen or counted, as of any date.

`--since` and `--until` (recall and list: `created` on or after / on or before) take the same:
`--since 7d`, `--since "last monday"` (from that day's start), `--until "last month"` (to its
end), `--until 2026-03-01` (all that day). A duration beyond the calendar ("10 000 000 years
ago") is its first moment, year 1; a date that is not one (2026-13-01, year 0 or 10000, a zone
that puts it outside years 1 to 9999 in UTC: 9999-12-31T23:59:59-14:00) is an error with a hint,
as in `--now`. A number alone is a year only with four digits (`--since 2019`): "5", "-5" or "13"
name no date (use 5d, or a date).

Example (the first record dated as if written in January):
  eidetic remember '{"id": "release-day", "text": "Releases go out on Mondays", "created": "2026-01-05"}'
  eidetic remember "Releases go out on Wednesdays" --id release-wed --supersedes release-day
  eidetic recall "releases" --mode keyword --as-of 2026-02-01   # release-day, active then
  eidetic recall "releases" --mode keyword                      # release-wed; release-day is shadowed
  eidetic show release-day        # valid until <the supersede> (superseded); history active -> shadowed

## A time named in the query
A query that names a time is read relative to `--now` (default: now; ISO, e.g. `--now
2024-03-01T12:00`): "yesterday", "today", "last week" / "this month" / "last year", "two days
ago", "in May" (the last May before now), "March 2023", "October 24, 2023", "2023-03-01",
"2023-03", "in 2019", "since Monday" / "since March" / "since 2023-03-01" (from then to now).
The words are found by a short pattern (a month name alone must look like one: "in May", not "what
may help") and read by the dateparser library; the unit widens the date to a window: the day, the
calendar week (Monday first), the month or the year. Only the first time named counts.
The time is a condition, not search words: it is taken out of the text that keyword and semantic
search see, with the word tying it in ("in", "on", "from", "during") and a possessive
("yesterday's standup" searches "standup"), so "what did we decide last week?" searches "what did
we decide?" and "week" no longer finds "lunch is on Thursday this week". Words that name no time
stay search words: "weekly", "a week of testing", "what may help". Exact mode searches its
substring as written (the window still applies).
A question that is only a time ("last week?", "yesterday") leaves nothing to search: it lists the
records *recorded* in the window (`created`), freshest first (age and use), with the usual scope,
lifecycle and filters, and loads no embedding model. (The event clock is not searched this way:
add a word to find a record that only tells of that time.)
`--time-words` says what the window does (exact, keyword, approximate and hybrid; fields mode
ignores it):
- `blend` (default): a record of the window's time scores x1.5, anything else as before;
  chosen on public conversation data (docs/benchmarks.md). A record is of that time when
  either clock puts it there: it was recorded inside the window (`created`), what it tells
  happened inside it (`occurred`), or what it says held at some moment of it (its
  `valid_from`..`valid_until` overlaps the window; an open bound reaches forever);
- `filter`: only records of the window's time;
- `off`: no window; the text is searched as written, time words included.
The window is in the JSON (`time_window`: phrase, start, end, mode, and `searched`: the words
searched, empty for a time-only question), the text output (`time: ... searched: ...`) and
`--explain` (`time_factor` per hit). A query naming no time ranks exactly as without it.
Dates at the calendar's ends are held there: "9999-12-31" is that day up to 23:59:59, "since
0001-01-01" runs from year 1. A time beyond it ("10 000 000 years ago") is not read as a time:
it stays search words and a warning says so. Never an error.
Under `--as-of`, the query is asked as of that date: "last week" is the week before it."""
