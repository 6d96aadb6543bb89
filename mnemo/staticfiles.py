"""The static files storage: WhiteNoise's hashed names and precompressed copies, with the
Brotli copies written at quality 5 instead of the library's 11.

`make run` collects the static files on every start, and WhiteNoise compresses every
collected file each time. At Brotli's quality 11 that is about 40 s of CPU for the API
docs' bundles and source maps (~21 MB with their hashed copies), once the `brotli` package
is installed (locust brings it with the dev tools); at quality 5 it is under a second and
the copies are about 12 % larger (measured on those files, 2026-11-25). Without `brotli`
WhiteNoise writes the gzip copies only, as before.
"""

from __future__ import annotations

from whitenoise.compress import Compressor
from whitenoise.storage import CompressedManifestStaticFilesStorage

BROTLI_QUALITY = 5


class QuickBrotliCompressor(Compressor):
    @staticmethod
    def compress_brotli(data: bytes) -> bytes:
        import brotli  # only called when WhiteNoise found it installed

        return brotli.compress(data, quality=BROTLI_QUALITY)


class StaticFilesStorage(CompressedManifestStaticFilesStorage):
    def create_compressor(self, **kwargs):
        return QuickBrotliCompressor(**kwargs)
