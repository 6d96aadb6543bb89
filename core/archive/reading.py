"""Reading an archive defensively: whatever the file, the answer is an ArchiveError with a
clear message, never a crash, and never unbounded work.

Bounds (zip bombs): the number of members, each member's and the whole archive's
uncompressed size as declared, each member's compression ratio, and one line's length; the
bytes actually inflated are counted against the declaration, and zipfile checks each
member's CRC at its end. Then the manifest (format and version), each member's row count
and SHA-256, and every line (a JSON object)."""

from __future__ import annotations

import hashlib
import json
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from core.archive.tables import Table
from core.archive.writing import FORMAT, FORMAT_VERSION, MANIFEST
from core.privacy.guard import first_secret

MAX_MANIFEST_BYTES = 1 << 20
MAX_RATIO = 200  # deflate reaches ~1000 only on degenerate input; JSON lines with vectors ~3-10
RATIO_FROM_BYTES = 1 << 20  # tiny members may compress better than that, harmlessly
MAX_PROBLEMS = 50


class ArchiveError(ValueError):
    """The archive cannot be imported; `problems` lists why (each {table, line, field, rule,
    message}), none of them quoting a secret."""

    def __init__(self, message: str, problems: list[dict] | None = None):
        super().__init__(message)
        self.problems = problems or []


@dataclass
class Archive:
    zf: zipfile.ZipFile
    manifest: dict
    members: dict[str, zipfile.ZipInfo] = field(default_factory=dict)
    digest: str = ""  # SHA-256 of manifest.json: which archive an interrupted import was reading

    def close(self) -> None:
        self.zf.close()

    def rows(self, table: Table) -> Iterator[dict]:
        """The table's lines as dicts, checked against the manifest (count, SHA-256) once
        the member is read to its end. A table the archive lacks has no rows."""
        info = self.members.get(table.member)
        if info is None:
            return
        expected = self.manifest["tables"][table.name]
        max_line = settings.MNEMO_ARCHIVE_MAX_LINE_BYTES
        digest, count, read = hashlib.sha256(), 0, 0
        try:
            with self.zf.open(info) as member:
                while True:
                    line = member.readline(max_line + 1)
                    if not line:
                        break
                    read += len(line)
                    if len(line) > max_line or read > info.file_size:
                        raise ArchiveError(f"{table.member} line {count + 1} is longer than {max_line} bytes"
                                           if len(line) > max_line else f"{table.member} is larger than declared")
                    digest.update(line)
                    count += 1
                    try:
                        row = json.loads(line)
                    except ValueError as exc:
                        raise ArchiveError(f"{table.member} line {count} is not JSON: {exc.msg}") from None
                    if not isinstance(row, dict):
                        raise ArchiveError(f"{table.member} line {count} is not a JSON object")
                    yield row
        except (zipfile.BadZipFile, EOFError, OSError, zlib.error) as exc:
            raise ArchiveError(f"{table.member} is corrupt: {exc}") from None
        if count != expected.get("rows") or digest.hexdigest() != expected.get("sha256"):
            raise ArchiveError(f"{table.member} does not match the manifest (rows {count} vs {expected.get('rows')}, "
                               "or its checksum): the archive is damaged or was edited")



def archive_open(path: Path, *, tables: tuple[Table, ...]) -> Archive:
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ArchiveError(f"not a zip archive: {exc}") from None
    try:
        return _checked(zf, tables)
    except BaseException:
        zf.close()
        raise


def _checked(zf: zipfile.ZipFile, tables: tuple[Table, ...]) -> Archive:
    known = {t.member: t for t in tables}
    infos = zf.infolist()
    if len(infos) > len(known) + 1:
        raise ArchiveError(f"the archive has {len(infos)} members; a workspace archive has at most {len(known) + 1}")
    total = 0
    for info in infos:
        total += info.file_size
        if info.file_size > RATIO_FROM_BYTES and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise ArchiveError(f"{info.filename} inflates {info.file_size // max(info.compress_size, 1)}-fold: "
                               "refused as a likely zip bomb")
    if total > settings.MNEMO_ARCHIVE_MAX_BYTES:
        raise ArchiveError(f"the archive inflates to {total} bytes, over the limit of "
                           f"{settings.MNEMO_ARCHIVE_MAX_BYTES} (MNEMO_ARCHIVE_MAX_BYTES)")
    names = {info.filename: info for info in infos}
    if MANIFEST not in names:
        raise ArchiveError("no manifest.json: not a Mnemo workspace archive")
    if names[MANIFEST].file_size > MAX_MANIFEST_BYTES:
        raise ArchiveError("manifest.json is too large")
    try:
        raw = zf.read(MANIFEST)
        manifest = json.loads(raw)
    except (ValueError, zipfile.BadZipFile, OSError, zlib.error) as exc:
        raise ArchiveError(f"manifest.json is unreadable: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ArchiveError("manifest.json does not describe a Mnemo workspace archive")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise ArchiveError(f"archive format version {manifest.get('format_version')!r} is not supported "
                           f"(this Mnemo reads version {FORMAT_VERSION})")
    listed = manifest.get("tables")
    if not isinstance(listed, dict) or not all(isinstance(v, dict) for v in listed.values()):
        raise ArchiveError("manifest.json lists no tables")
    by_name = {t.name: t for t in tables}
    unknown = sorted(set(listed) - set(by_name))
    if unknown:
        raise ArchiveError(f"the archive holds tables this Mnemo does not know: {', '.join(unknown)} "
                           "(exported by a newer version?)")
    members = {}
    for name, entry in listed.items():
        member = by_name[name].member
        if member not in names:
            raise ArchiveError(f"the manifest lists {member}, which the archive lacks")
        members[member] = names[member]
    strays = sorted(set(names) - set(members) - {MANIFEST})
    if strays:
        raise ArchiveError(f"unexpected members in the archive: {', '.join(strays[:5])}")
    return Archive(zf=zf, manifest=manifest, members=members, digest=hashlib.sha256(raw).hexdigest())


def secrets_in(row: dict, scannable: list[str]) -> list[tuple[str, str]]:
    """(field, rule) for each scanned value of the row that carries a secret."""
    found = []
    for name in scannable:
        value = row.get(name)
        if value is None or isinstance(value, (int, float, bool)):
            continue
        hit = first_secret(value)
        if hit is not None:
            where, match = hit
            found.append((f"{name}.{where}" if where else name, match.rule))
    return found
