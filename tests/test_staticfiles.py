"""The static files storage (mnemo/staticfiles.py), through a real collectstatic of every
static file: hashed names, and gzip and Brotli copies that decompress to the files, the
Brotli ones at quality 5 (the library's 11 cost ~40 s of CPU on every `make run` start)."""

from __future__ import annotations

import gzip
import json

import pytest
from django.core.management import call_command

brotli = pytest.importorskip("brotli")  # with the dev tools installed (locust brings it)


def test_collectstatic_writes_hashed_files_and_compressed_copies_brotli_at_quality_5(settings, tmp_path):
    root = tmp_path / "static"
    settings.STATIC_ROOT = root
    settings.STORAGES = {**settings.STORAGES, "staticfiles": {"BACKEND": "mnemo.staticfiles.StaticFilesStorage"}}
    call_command("collectstatic", interactive=False, verbosity=0)

    hashed = json.loads((root / "staticfiles.json").read_text())["paths"]
    for name in ("css/mnemo.css", "ninja/swagger-ui-bundle.js"):
        content = (root / name).read_bytes()
        assert (root / hashed[name]).read_bytes() == content
        for path in (root / name, root / hashed[name]):
            assert gzip.decompress(path.with_name(path.name + ".gz").read_bytes()) == content
            compressed = path.with_name(path.name + ".br").read_bytes()
            assert brotli.decompress(compressed) == content
            assert compressed == brotli.compress(content, quality=5)
    # Brotli's default quality would have written other bytes: the check above can fail.
    assert brotli.compress(content) != brotli.compress(content, quality=5)
