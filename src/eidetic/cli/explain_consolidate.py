"""The built-in manual's page on ``consolidate`` (``eidetic explain consolidate``), kept apart
from ``explain`` so that module stays within its size."""

CONSOLIDATE = """# eidetic consolidate
Finds near-duplicate records and folds each group into one. A dry run unless `--apply`.
- Which records: the active records your scope may see (`--scope`, `--visibility`; with
  `--scope-only` only your scope name), each scope (name and visibility) and each store on its
  own: two scopes are never mixed, and another scope's private records are never read, shown
  or counted.
- Near-duplicates: the same text once normalised (case, punctuation, spacing and Unicode
  compatibility forms ignored), or vectors with a cosine at or above the threshold (the one
  `remember` uses for `similar_to`; `--threshold 0.85` to change it) and the same particulars.
  Records without a vector get one first (as recall does); with `EIDETIC_EMBEDDER=none` only
  the text rule applies, and the summary counts the records compared without vectors.
- Particulars (`remember` judges `similar_to` alike): records made from one template ("owner
  Alice, ticket OPS-12" / "owner Bob, ticket OPS-13") come as close by cosine as a fact said
  twice, so two texts are never near-duplicates by meaning when one says a number, id
  (`ABC-123`, `#42`), version (`v2.3.1`), date or time (`2026-12-01`, `14:30`), e-mail, URL,
  path or `@handle` that the other does not, or when each has a name (a capitalised word
  inside a sentence, plural "s" aside) that the other does not say. Case, punctuation,
  wording, stop words and a name on one side only ("Joanna: Well, I had a setback" / "Joanna
  had a setback") still allow it; a word that opens a sentence is not taken for a name, and
  one number written two ways ("3pm" / "15:00") keeps two records apart.
- Clusters are stars: the best survivor candidate that has near-duplicates not yet grouped
  takes all of them (and their twins in text), and so on. Every member is a near-duplicate of
  its survivor, so a chain A~B~C~D never puts an unrelated A and D together.
- The survivor: the most recent record (`created`, then `updated`), or with
  `--keep recalled` the most recalled one (then the most recent); ties go to the smaller id.
  `--survivor ID` shows only the cluster formed around ID (pick a member to keep it instead);
  `--text TEXT` or `--text-file FILE` gives that survivor a merged text you wrote.
- `--apply` folds them all in one locked, atomic write per store (an interrupted run leaves
  that store as it was): every member becomes shadowed (dated in its
  history; `metadata.consolidated_into` names the survivor); the survivor gains the members'
  links (never to itself or to a member), records in `metadata.consolidated_from` what each
  member brought, and takes their usage: recall_count summed, last_recall the latest. A member
  that changed meanwhile (no longer active) is left out.
- `eidetic restore MEMBER` undoes it for that member: it is active again without the key, and
  the survivor loses the links only that member brought and the recall_count it carried.
The output lists each cluster (survivor marked `keep` with its text, each member marked `fold`
with its id, similarity to the survivor, created date and recall_count, and its words against
the survivor's as a word diff: `[-survivor's-]{+its own+}`, unchanged stretches cut to three
words around each change) and a summary; `--json` gives `items`, one per cluster:
`{scope, store, survivor, members, merged_text, applied, undo}`, each member with
`differing`: its changes from the survivor's text, `[[survivor's words, its words], ...]`.
At 100,000 records a dry run took 45 s on a busy 2-core machine (docs/benchmarks.md, "Consolidate")."""
