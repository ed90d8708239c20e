"""Near-duplicates are near in meaning, not in template: records that differ in a number, an id,
a version, a date, an address or a name are never proposed as near-duplicates, however close
their vectors (``ranking.particulars``), by ``consolidate`` or by remember's similar-record
check; texts that differ in wording, case or punctuation still are. The dry run shows the
words that differ (``worddiff``)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from conftest import mcp_tools, ndjson
from eidetic.ranking.clusters import Candidate, clusters
from eidetic.ranking.particulars import differing, particulars
from eidetic.ranking.similar import SIMILAR_COSINE, near_in_meaning, same_particulars
from eidetic.worddiff import differing as word_changes
from eidetic.worddiff import marked
from template_records import FIRST, LATER, RECORDS, TEMPLATE_PAIRS, TRUE_PAIRS

TEXTS = {record["id"]: record["text"] for record in RECORDS}
EXPECTED = {frozenset(pair) for pair in TRUE_PAIRS.items()}


@pytest.mark.parametrize(
    ("text", "other", "differs_in"),
    [
        ("Backups keep 7 days of history.", "Backups keep 30 days of history.", {"7", "30"}),
        ("Fixed in ticket ABC-123 today.", "Fixed in ticket ABC-124 today.", {"abc-123", "abc-124"}),
        ("The login bug is tracked in #42.", "The login bug is tracked in #43.", {"#42", "#43"}),
        ("Pin numpy to 1.26.4 for now.", "Pin numpy to 2.0.1 for now.", {"1.26.4", "2.0.1"}),
        ("The audit is due on 2026-12-03.", "The audit is due on 2026-12-10.", {"2026-12-03", "2026-12-10"}),
        ("Questions go to ops@example.com please.", "Questions go to dev@example.com please.", None),
        ("Docs live at https://a.example.org/x.", "Docs live at https://b.example.org/x.", None),
        ("The config is in /etc/app/main.toml today.", "The config is in /etc/app/test.toml today.", None),
        ("The runbook is owned by Alice now.", "The runbook is owned by Bruno now.", {"alice", "bruno"}),
        ("Ask @alice about the migration.", "Ask @bruno about the migration.", {"@alice", "@bruno"}),
        ("Standup moves to 9:30 on Mondays.", "Standup moves to 10:15 on Mondays.", {"9:30", "10:15"}),
        ("Deploys go out on Fridays.", "Deploys go out on Mondays.", {"friday", "monday"}),
        ("Ship the billing release.", "Ship the billing release 2.4 on Friday.", {"2.4"}),  # a number added
        ("Sync with Alice Moreau.", "Sync with Bruno Keller.", {"alice", "moreau", "bruno", "keller"}),
    ],
)
def test_texts_that_differ_in_a_particular_are_never_near_in_meaning(text, other, differs_in):
    assert not same_particulars(text, other) and not same_particulars(other, text)
    assert not near_in_meaning(1.0, text, other)  # however high the cosine
    if differs_in is not None:
        assert differing(particulars(text), particulars(other)) == differs_in


@pytest.mark.parametrize(
    ("text", "other"),
    [
        ("Use uv, not pip!", "use UV not pip"),  # case and punctuation
        ("Alice owns the runbook.", "The runbook is owned by alice"),  # a name, in other case and place
        ("Deployed v2.3.1 on 2026-11-28.", "On 2026-11-28 we deployed v2.3.1"),  # same particulars reordered
        ("Backups run every night at 2am", "Every night at 2am the backups are run"),
        ("See e.g. the FAQ on the wiki.", "See the FAQ on the wiki."),  # "e.g.": not a particular
        ("Ask the client/server team.", "Ask the client team."),  # two words joined by "/": no path
        ("Deployed v2.3.1 with 1,000 workers.", "Deployed version 2.3.1 with 1000 workers."),  # one number
        ("Backups run nightly.", "Snapshots run nightly."),  # a capital that starts a sentence is no name
        ("I think we should lint first.", "We should lint first, I think."),  # "I" is no name
        ("Joanna had a setback with her screenplay.", "Joanna: Well, I had a setback with my screenplay."),
        ("The owner is Alice.", "The owner is Alice, with Bruno reviewing."),  # a name on one side only
        ("Deploys go out on Fridays.", "We deploy every Friday."),  # a plural "s"
    ],
)
def test_texts_that_differ_in_wording_case_or_punctuation_still_can_be(text, other):
    assert same_particulars(text, other) and same_particulars(other, text)
    assert near_in_meaning(SIMILAR_COSINE, text, other)
    assert not near_in_meaning(SIMILAR_COSINE - 0.01, text, other)  # the cosine line still holds


def test_clusters_drop_pairs_whose_particulars_differ_and_keep_twins_in_text():
    """The pure clustering applies the rule to the pairs it is given (consolidate's path)."""
    ids = ["deploy-231", "deploy-231-next-day", "ruff", "ruff-again", "backup", "backup-again"]
    candidates = [Candidate(rid, TEXTS[rid], f"2026-01-0{n + 1}", None, 0.0) for n, rid in enumerate(ids)]
    pairs = {(0, 1): 0.999, (4, 5): 0.97}  # ruff / ruff-again come in by their normalised text alone
    found = {
        frozenset([ids[c.survivor], *(ids[m] for m, _ in c.members)]) for c in clusters(candidates, pairs, "recent")
    }
    assert found == {frozenset({"ruff", "ruff-again"}), frozenset({"backup", "backup-again"})}


def test_word_diff_marks_the_words_that_differ_wherever_they_are():
    old = TEXTS["sync-alice"] + " Notes taken by Dana."
    new = TEXTS["sync-bruno"] + " Notes taken by Eve."
    shown = marked(old, new)
    for removed, added in (("Alice Moreau", "Bruno Keller"), ("OPS-1412", "OPS-1413"), ("Dana", "Eve")):
        assert f"[-{removed}-]{{+{added}+}}" in shown
    assert "…" in shown and "flaky" not in shown  # the unchanged middle is cut, not the changes
    assert word_changes(old, new) == [["Alice Moreau", "Bruno Keller"], ["OPS-1412", "OPS-1413"], ["Dana", "Eve"]]
    assert marked("Use uv.", "use uv") == "[-Use-]{+use+} uv[-.-]"
    assert marked(" Same  words. ", "Same words.") == "Same words." and word_changes("a b", "a b") == []


def test_the_template_records_are_as_close_as_true_restatements(env, monkeypatch):
    """The fixture's premise, on the real model: template siblings reach the cosine line (so the
    cosine alone would fold them) as the true restatements do."""
    monkeypatch.delenv("EIDETIC_EMBEDDER", raising=False)
    from eidetic.embed import default_embedder
    from eidetic.settings import Settings

    embedder, why = default_embedder(Settings.load())
    assert embedder is not None, why
    vectors = dict(zip(TEXTS, np.asarray(embedder.embed(list(TEXTS.values())))))
    for a, b in [*TEMPLATE_PAIRS, *TRUE_PAIRS.items()]:
        assert float(vectors[a] @ vectors[b]) >= SIMILAR_COSINE, (a, b)
        assert same_particulars(TEXTS[a], TEXTS[b]) == ((a, b) in TRUE_PAIRS.items())


def _clusters(report: dict) -> set[frozenset[str]]:
    return {frozenset([c["survivor"]["id"], *(m["id"] for m in c["members"])]) for c in report["items"]}


def test_consolidate_proposes_exactly_the_true_pairs(cli, backend, monkeypatch):
    monkeypatch.delenv("EIDETIC_EMBEDDER")
    assert cli("remember", stdin=ndjson(*RECORDS)).code == 0
    run = cli("consolidate", "--json")
    assert run.code == 0, run.err
    assert _clusters(run.json) == EXPECTED and run.json["without_vectors"] == 0
    by_survivor = {c["survivor"]["id"]: c for c in run.json["items"]}
    assert set(by_survivor) == set(TRUE_PAIRS)  # the later record survives
    for survivor, cluster in by_survivor.items():
        (member,) = cluster["members"]
        assert member["score"] >= SIMILAR_COSINE and cluster["survivor"]["differing"] == []
        assert member["differing"] == word_changes(TEXTS[survivor], TEXTS[member["id"]]) != []
    assert ["eidetic", "Eidetic"] in by_survivor["ruff-again"]["members"][0]["differing"]

    text = cli("consolidate")
    assert text.code == 0, text.err
    folded = {
        m.group(1): m.group(2) for m in re.finditer(r"^  fold (\S+)  [\d.]+  .*?recalled \S+  (.*)$", text.out, re.M)
    }
    assert set(folded) == set(TRUE_PAIRS.values())
    assert folded["ruff"] == marked(TEXTS["ruff-again"], TEXTS["ruff"])
    assert "[-eidetic-]{+Eidetic+} repo[-!!-]{+.+}" in folded["ruff"]  # the change at the very end is shown
    assert "4 cluster(s): 4 record(s) would be folded into 4 survivor(s)" in text.out


def test_remember_reports_exactly_the_true_pairs(cli, backend, monkeypatch):
    monkeypatch.delenv("EIDETIC_EMBEDDER")
    first = cli("remember", "--json", stdin=ndjson(*FIRST))
    assert first.code == 0, first.err
    assert [item for item in first.json["items"] if "similar_to" in item] == []  # one batch of templates
    later = cli("remember", stdin=ndjson(*LATER))  # against the stored records and the batch itself
    assert later.code == 0, later.err
    reported = dict(re.findall(r"^new\s+(\S+).*\n\s+similar to (\S+) \(", later.out, re.M))
    assert reported == TRUE_PAIRS
    assert "6 record(s): 6 new." in later.out  # reported, and written (on_similar write)


def test_remember_json_and_skip_leave_out_exactly_the_true_repeats(cli, backend, monkeypatch):
    monkeypatch.delenv("EIDETIC_EMBEDDER")
    cli("remember", stdin=ndjson(*FIRST))
    run = cli("remember", "--on-similar", "skip", "--json", stdin=ndjson(*LATER))
    assert run.code == 0, run.err
    skipped = {item["id"]: item["similar_to"][0]["id"] for item in run.json["items"] if item["status"] == "similar"}
    assert skipped == TRUE_PAIRS
    written = {item["id"] for item in run.json["items"] if item["status"] == "new" and "similar_to" not in item}
    assert written == {"deploy-240", "deploy-231-next-day"}  # a template sibling of a stored record
    listed = {item["id"] for item in cli("list", "--json").json["items"]}
    assert listed == set(TEXTS) - set(TRUE_PAIRS)


def test_mcp_remember_on_similar_skip_leaves_out_exactly_the_true_repeats(backend, monkeypatch):
    monkeypatch.delenv("EIDETIC_EMBEDDER")
    with mcp_tools() as call:
        call("remember", {"records": FIRST})
        result = call("remember", {"records": LATER, "on_similar": "skip"})
    skipped = {item["id"]: item["similar_to"][0]["id"] for item in result["items"] if item["status"] == "similar"}
    assert skipped == TRUE_PAIRS
    assert result["upserted"] == len(LATER) - len(TRUE_PAIRS)
