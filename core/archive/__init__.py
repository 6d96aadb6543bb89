"""Workspace archives (issue 19 part 6): a workspace to one portable file and back into
another Mnemo, or another workspace of the same one.

Format (version 1): a zip holding `manifest.json` and one `<table>.jsonl` per archived
table — one JSON object per row, in id order, keyed by field name, ids as in the source.
The manifest: format, format_version, mnemo_version, exported_at, the source workspace's
name and slug, the embedding model and dimensions of the vectors, and per table its file,
model, row count and SHA-256 of the member's bytes.

Which tables: each layer's `archive` (core.layers), then core's audit log
(core.archive.tables). Export: core.archive.writing; import: core.archive.loading."""
