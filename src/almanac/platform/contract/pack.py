"""The pack archive read safely, and the contract's static checks of the plug-in it holds, made
without Node (spec "Limits": Upload size, Archive entries, Code file types; "Errors": Upload;
DECISIONS 5).

The raw ZIP structure is read here, not left to `zipfile`: zipfile accepts data before the first
entry (it shifts every offset), trusts the sizes an entry declares, reads ZIP64 and spanned
archives, and inflates without a cap. Each refusal names one catalog code. `zipfile` is only asked,
once everything is bounded, whether it sees the same entries, so no other reader of the archive
can be shown different files.

No stated size is trusted: an entry is inflated in steps of at most 64 KiB of output and never
past the size it declares, which `read_pack` has already held to the ratio and total limits; an
entry that would grow beyond is refused (PLG-ZIP-UNCOMPRESSED-TOO-LARGE) one step past its
claim, and one whose bytes fall short or fail the CRC is refused as damaged. Reading holds the
archive, the files kept (32 MiB at most) and, while one entry is inflated, that entry once more:
never more than the entries declare, however they expand.
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
import struct
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from almanac.platform.contract.context import check_fixture_context
from almanac.platform.contract.digest import files_digest, link_problem, walk_folder
from almanac.platform.contract.manifest import Manifest, parse_manifest
from almanac.platform.contract.problems import Problem
from almanac.platform.contract.rules import ID_PATTERN
from almanac.platform.errors import Invalid, TooLarge

MAX_ARCHIVE_BYTES = 8 * 1024 * 1024
MAX_UNCOMPRESSED_BYTES = 32 * 1024 * 1024
MAX_CODE_BYTES = 1024 * 1024
MAX_RATIO = 100
MAX_ENTRIES = 500
MAX_FOLDERS_DEEP = 8
PACK_FILE = ".pack.json"

_LOCAL = b"PK\x03\x04"
_CENTRAL = b"PK\x01\x02"
_END = b"PK\x05\x06"
_ZIP64_LOCATOR = b"PK\x06\x07"
_SPANNED = (b"PK\x07\x08", b"PK00")
_END_FORMAT = struct.Struct("<4sHHHHIIH")
_CENTRAL_FORMAT = struct.Struct("<4sHHHHHHIIIHHHHHII")
_LOCAL_FORMAT = struct.Struct("<4sHHHHHIIIHH")
_ZIP64_EXTRA = 0x0001
_UNIX = 3
_FLAG_ENCRYPTED = 0x0001
_FLAG_STRONG_ENCRYPTION = 0x0040
_FLAG_UTF8 = 0x0800
_METHOD_AES = 99
_CHUNK = 64 * 1024
_DRIVE = re.compile(r"^[A-Za-z]:")


TOO_LARGE = "PLG-ZIP-TOO-LARGE"


def _first_error(problems: Sequence[Problem]) -> Problem:
    return next((p for p in problems if p.severity == "error"), problems[0])


class CodeRefused(Invalid):
    """The archive or the code it holds is refused; `problems` (the `findings`) are everything
    found, the first error naming the code the answer carries and its sentence. Refused for
    an archive over the size limit, it is an `ArchiveTooLarge`, whatever else was found."""

    def __new__(cls, problems: Sequence[Problem]) -> CodeRefused:
        if cls is CodeRefused and _first_error(problems).code == TOO_LARGE:
            cls = ArchiveTooLarge
        return super().__new__(cls, problems)

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        first = _first_error(self.problems)
        super().__init__(first.message, code=first.code, findings=self.problems)

    @property
    def detail(self) -> str:
        return next(p.message for p in self.problems if p.code == self.code)


class ArchiveTooLarge(TooLarge, CodeRefused):
    """The archive is over `MAX_ARCHIVE_BYTES` (PLG-ZIP-TOO-LARGE)."""


def _refuse(code: str, message: str, path: str | None = None) -> CodeRefused:
    return CodeRefused([Problem(code, message, path=path)])


@dataclass(frozen=True, slots=True)
class _Entry:
    raw_name: bytes
    name: str
    flags: int
    method: int
    crc: int
    compressed: int
    size: int
    offset: int
    made_by: int
    external: int


@dataclass(frozen=True, slots=True)
class Unpacked:
    """The archive's one top folder, its files by path inside that folder (without the
    `.pack.json` the tool adds), and that `.pack.json` parsed (None when absent)."""

    folder: str
    files: dict[str, bytes]
    pack_info: Any = None


@dataclass(frozen=True, slots=True)
class PluginCode:
    """A plug-in that passed every check the service makes without Node: its manifest, digest,
    covered files (the code kept and approved) and warnings."""

    manifest: Manifest
    digest: str
    files: dict[str, bytes]
    warnings: list[Problem] = field(default_factory=list)


def _has_zip64_extra(extra: bytes) -> bool:
    at = 0
    while at + 4 <= len(extra):
        kind, size = struct.unpack_from("<HH", extra, at)
        if kind == _ZIP64_EXTRA:
            return True
        at += 4 + size
    return False


def _find_end(data: bytes) -> int | None:
    """Offset of the end-of-central-directory record whose comment ends the data exactly."""
    floor = max(0, len(data) - _END_FORMAT.size - 0xFFFF)
    at = data.rfind(_END, floor)
    while at >= floor and at != -1:
        if at + _END_FORMAT.size <= len(data):
            comment = _END_FORMAT.unpack_from(data, at)[7]
            if at + _END_FORMAT.size + comment == len(data):
                return at
        at = data.rfind(_END, floor, at)
    return None


def _central_directory(data: bytes) -> list[_Entry]:
    if len(data) > MAX_ARCHIVE_BYTES:
        raise _refuse(
            TOO_LARGE,
            f"the archive is {len(data)} bytes; at most {MAX_ARCHIVE_BYTES} (8 MiB)",
        )
    if data[:4] in _SPANNED:
        raise _refuse("PLG-ZIP-MULTI-DISK", "the archive starts with a split or spanned marker")
    end = _find_end(data)
    if end is None:
        raise _refuse("PLG-ZIP-NOT-ZIP", "no ZIP end-of-central-directory record was found")
    _, disk, cd_disk, here, total, cd_size, cd_offset, _ = _END_FORMAT.unpack_from(data, end)
    if end >= 20 and data[end - 20 : end - 16] == _ZIP64_LOCATOR:
        raise _refuse("PLG-ZIP-ZIP64", "the archive has a ZIP64 end record")
    if 0xFFFF in (disk, cd_disk, here, total) or 0xFFFFFFFF in (cd_size, cd_offset):
        raise _refuse("PLG-ZIP-ZIP64", "the end record defers to ZIP64 fields")
    if disk != 0 or cd_disk != 0 or here != total:
        raise _refuse(
            "PLG-ZIP-MULTI-DISK", f"the archive names disk {disk} of a split or spanned set"
        )
    if total > MAX_ENTRIES:
        raise _refuse(
            "PLG-ZIP-TOO-MANY-ENTRIES", f"the archive has {total} entries; at most {MAX_ENTRIES}"
        )
    if total == 0:
        raise _refuse("PLG-ZIP-FOLDER", "the archive holds no files")
    shift = end - cd_size - cd_offset
    if shift > 0 or data[:4] != _LOCAL:
        # zipfile would quietly read such an archive by shifting every offset.
        raise _refuse(
            "PLG-ZIP-PREPENDED",
            "data comes before the archive's first local file header",
        )
    if shift < 0:
        raise _refuse("PLG-ZIP-DAMAGED", "the central directory lies outside the archive")
    entries = []
    at = cd_offset
    for _ in range(total):
        if at + _CENTRAL_FORMAT.size > end or data[at : at + 4] != _CENTRAL:
            raise _refuse("PLG-ZIP-DAMAGED", "the central directory is cut short or corrupt")
        (
            _,
            made_by,
            _,
            flags,
            method,
            _,
            _,
            crc,
            compressed,
            size,
            name_len,
            extra_len,
            comment_len,
            disk_start,
            _,
            external,
            offset,
        ) = _CENTRAL_FORMAT.unpack_from(data, at)
        name_at = at + _CENTRAL_FORMAT.size
        raw_name = data[name_at : name_at + name_len]
        extra = data[name_at + name_len : name_at + name_len + extra_len]
        at = name_at + name_len + extra_len + comment_len
        shown = raw_name.decode("utf-8", "replace")
        if disk_start != 0:
            raise _refuse("PLG-ZIP-MULTI-DISK", f"{shown} starts on disk {disk_start}", shown)
        if 0xFFFFFFFF in (compressed, size, offset) or _has_zip64_extra(extra):
            raise _refuse("PLG-ZIP-ZIP64", f"{shown} has ZIP64 sizes or offsets", shown)
        if flags & (_FLAG_ENCRYPTED | _FLAG_STRONG_ENCRYPTION) or method == _METHOD_AES:
            raise _refuse("PLG-ZIP-ENCRYPTED", f"{shown} is encrypted", shown)
        if method not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise _refuse(
                "PLG-ZIP-METHOD",
                f"{shown} is compressed with method {method}; only deflate (8) or stored (0)",
                shown,
            )
        try:
            name = raw_name.decode("utf-8")
        except UnicodeDecodeError:
            raise _refuse("PLG-ZIP-PATH", f"the name {shown!r} is not UTF-8", shown) from None
        if not name.isascii() and not flags & _FLAG_UTF8:
            # Without the flag other readers take the name as code page 437: another path.
            raise _refuse(
                "PLG-ZIP-PATH", f"the name {shown!r} is not ASCII and not marked UTF-8", shown
            )
        entries.append(
            _Entry(raw_name, name, flags, method, crc, compressed, size, offset, made_by, external)
        )
    if at != end:
        raise _refuse("PLG-ZIP-DAMAGED", "the central directory does not end at its end record")
    _check_local_headers(data, entries, cd_offset)
    return entries


def _check_local_headers(data: bytes, entries: list[_Entry], cd_offset: int) -> None:
    """Each entry's local header agrees with the central directory, and no two entries share
    bytes (overlapping entries are the classic quoted-overlap ZIP bomb)."""
    ordered = sorted(entries, key=lambda e: e.offset)
    if ordered[0].offset != 0:
        raise _refuse("PLG-ZIP-PREPENDED", "data comes before the archive's first local header")
    for index, entry in enumerate(ordered):
        at = entry.offset
        if at + _LOCAL_FORMAT.size > cd_offset or data[at : at + 4] != _LOCAL:
            raise _refuse("PLG-ZIP-DAMAGED", f"{entry.name} has no local header", entry.name)
        (_, _, flags, method, _, _, _, _, _, name_len, extra_len) = _LOCAL_FORMAT.unpack_from(
            data, at
        )
        name_at = at + _LOCAL_FORMAT.size
        if data[name_at : name_at + name_len] != entry.raw_name or method != entry.method:
            raise _refuse(
                "PLG-ZIP-DAMAGED",
                f"{entry.name}: the local header differs from the central directory",
                entry.name,
            )
        if flags & (_FLAG_ENCRYPTED | _FLAG_STRONG_ENCRYPTION):
            raise _refuse("PLG-ZIP-ENCRYPTED", f"{entry.name} is encrypted", entry.name)
        extra = data[name_at + name_len : name_at + name_len + extra_len]
        if _has_zip64_extra(extra):
            raise _refuse("PLG-ZIP-ZIP64", f"{entry.name} has ZIP64 sizes", entry.name)
        data_end = name_at + name_len + extra_len + entry.compressed
        limit = ordered[index + 1].offset if index + 1 < len(ordered) else cd_offset
        if data_end > limit:
            raise _refuse("PLG-ZIP-DAMAGED", f"{entry.name} overlaps the next entry", entry.name)


def _data_start(data: bytes, entry: _Entry) -> int:
    name_len, extra_len = struct.unpack_from("<HH", data, entry.offset + 26)
    return int(entry.offset + _LOCAL_FORMAT.size + name_len + extra_len)


def _inflate(data: bytes, entry: _Entry, budget: int) -> bytes:
    """The entry's bytes, inflated in steps of at most 64 KiB and never past the size it
    declares (nor its ratio cap or the archive's remaining budget): an entry that would grow
    beyond is refused after holding one step more than it claims."""
    start = _data_start(data, entry)
    # A view, not a copy: the archive is already held once.
    body = memoryview(data)[start : start + entry.compressed]
    if entry.method == zipfile.ZIP_STORED:
        if entry.compressed != entry.size:
            raise _refuse("PLG-ZIP-DAMAGED", f"{entry.name}: stored sizes differ", entry.name)
        out = bytes(body)
    else:
        # `read_pack` has held the declared sizes to the ratio and the total already, so the
        # declared size is the tightest bound; the others stay for any other caller.
        cap = min(entry.size, budget, MAX_RATIO * max(entry.compressed, 1))
        inflater = zlib.decompressobj(-zlib.MAX_WBITS)
        kept = bytearray()
        fed = 0
        try:
            for at in range(0, len(body), _CHUNK):
                pending: bytes | memoryview = body[at : at + _CHUNK]
                while True:
                    part = inflater.decompress(pending, min(_CHUNK, cap + 1 - len(kept)))
                    kept += part
                    if len(kept) > cap:
                        raise _refuse(
                            "PLG-ZIP-UNCOMPRESSED-TOO-LARGE",
                            f"{entry.name} inflates beyond {cap} bytes (the {entry.size} it "
                            f"declares, at most {MAX_UNCOMPRESSED_BYTES} in all, and "
                            f"{MAX_RATIO} times its compressed size); inflating stopped there",
                            entry.name,
                        )
                    pending = inflater.unconsumed_tail
                    # A full step may leave output inside zlib with no input left: ask again.
                    if inflater.eof or (not pending and len(part) < _CHUNK):
                        break
                fed = min(at + _CHUNK, len(body))
                if inflater.eof:
                    break
        except zlib.error as error:
            raise _refuse(
                "PLG-ZIP-DAMAGED", f"{entry.name} does not inflate: {error}", entry.name
            ) from None
        if not inflater.eof or inflater.unused_data or fed < len(body):
            raise _refuse("PLG-ZIP-DAMAGED", f"{entry.name}: the deflate stream is cut or padded")
        out = bytes(kept)
    if len(out) != entry.size or zlib.crc32(out) != entry.crc:
        raise _refuse(
            "PLG-ZIP-DAMAGED",
            f"{entry.name}: its bytes do not match the size and CRC it declares",
            entry.name,
        )
    return out


def _path_problems(entries: list[_Entry]) -> tuple[str | None, list[Problem]]:
    """The paths rules of "Archive entries"; returns the one top folder and the findings."""
    problems: list[Problem] = []
    tops: set[str] = set()
    seen: dict[str, str] = {}
    folders: set[str] = set()
    files: set[str] = set()

    def add(code: str, message: str, path: str) -> None:
        problems.append(Problem(code, message, path=path))

    for entry in entries:
        name = entry.name
        kind = stat.S_IFMT(entry.external >> 16) if entry.made_by >> 8 == _UNIX else 0
        if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
            what = "a symbolic link" if kind == stat.S_IFLNK else "a special file"
            add("PLG-ZIP-LINK", f"{name} is {what}; only plain files may be packed", name)
            continue
        if not name or name.startswith("/") or _DRIVE.match(name):
            add("PLG-ZIP-PATH", f"{name!r} is an absolute path", name)
            continue
        if "\\" in name:
            add("PLG-ZIP-PATH", f"{name!r} holds a backslash", name)
            continue
        if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
            shown = name.encode("unicode_escape").decode("ascii")
            add("PLG-ZIP-PATH", f"{shown!r} holds a control character", shown)
            continue
        is_folder = name.endswith("/")
        if kind == stat.S_IFDIR and not is_folder:
            add("PLG-ZIP-PATH", f"{name} is a folder whose name lacks the closing /", name)
            continue
        path = name[:-1] if is_folder else name
        parts = path.split("/")
        if any(part in ("", ".", "..") for part in parts):
            add("PLG-ZIP-PATH", f"{name!r} has an empty, '.' or '..' part", name)
            continue
        tops.add(parts[0])
        if len(parts) == 1 and not is_folder:
            add("PLG-ZIP-FOLDER", f"{name} lies outside the plug-in folder <id>/", name)
            continue
        deep = len(parts) - 1 if is_folder else len(parts) - 2
        if deep > MAX_FOLDERS_DEEP:
            add(
                "PLG-ZIP-TOO-DEEP",
                f"{name} is {deep} folders deep inside {parts[0]}/; at most {MAX_FOLDERS_DEEP}",
                name,
            )
            continue
        if path in files or (not is_folder and path in folders):
            add("PLG-ZIP-PATH", f"{path} appears twice in the archive", path)
            continue
        (folders if is_folder else files).add(path)
        for depth in range(1, len(parts) + 1):
            prefix = "/".join(parts[:depth])
            if depth < len(parts):
                folders.add(prefix)
            other = seen.setdefault(prefix.casefold(), prefix)
            if other != prefix:
                add("PLG-ZIP-CASE", f"{prefix} and {other} differ only in case", prefix)
                break
    clash = sorted(files & folders)
    for path in clash:
        add("PLG-ZIP-PATH", f"{path} is both a file and a folder", path)
    if len(tops) > 1:
        shown = ", ".join(sorted(tops)[:5])
        add("PLG-ZIP-FOLDER", f"the archive holds several top folders ({shown}); pack one", "")
    return (next(iter(tops)) if len(tops) == 1 else None), problems


def read_pack(data: bytes) -> Unpacked:
    """The files of a pack archive, every Upload and Archive entries limit enforced; raises
    CodeRefused with the catalog code of the first rule broken (nothing is kept)."""
    entries = _central_directory(data)
    declared = sum(e.size for e in entries)
    if declared > MAX_UNCOMPRESSED_BYTES:
        raise _refuse(
            "PLG-ZIP-UNCOMPRESSED-TOO-LARGE",
            f"the entries declare {declared} bytes unpacked; at most {MAX_UNCOMPRESSED_BYTES}",
        )
    for entry in entries:
        if entry.size > MAX_RATIO * max(entry.compressed, 1):
            raise _refuse(
                "PLG-ZIP-UNCOMPRESSED-TOO-LARGE",
                f"{entry.name} declares a compression ratio above {MAX_RATIO} to 1",
                entry.name,
            )
    folder, problems = _path_problems(entries)
    if problems or folder is None:
        raise CodeRefused(problems or [Problem("PLG-ZIP-FOLDER", "no plug-in folder")])
    files: dict[str, bytes] = {}
    budget = MAX_UNCOMPRESSED_BYTES
    for entry in entries:
        content = _inflate(data, entry, budget)
        budget -= len(content)
        if not entry.name.endswith("/"):
            files[entry.name[len(folder) + 1 :]] = content
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            seen = [i.filename for i in archive.infolist()]
    except zipfile.BadZipFile as error:
        raise _refuse("PLG-ZIP-DAMAGED", f"the archive does not read as a ZIP: {error}") from None
    if seen != [e.name for e in entries]:
        raise _refuse("PLG-ZIP-DAMAGED", "zipfile reads other entries than the directory")
    pack_info = None
    if PACK_FILE in files:
        raw = files.pop(PACK_FILE)
        try:
            pack_info = json.loads(raw)
        except ValueError:
            raise _refuse("PLG-ZIP-PACK-JSON", f"{PACK_FILE} is not JSON", PACK_FILE) from None
    return Unpacked(folder, files, pack_info)


def folder_files(folder: str | os.PathLike[str]) -> dict[str, bytes]:
    """The files of a plug-in folder on this machine as `pack` would pack them (not `.git/`,
    `node_modules/` or `.DS_Store`), within the limits of an uploaded pack (entries, depth,
    unpacked size); a symbolic link anywhere is refused, never followed."""
    root = Path(folder)
    if not ID_PATTERN.fullmatch(root.name):
        raise _refuse("PLG-FOLDER-ID", f"{root.name!r} is not a plug-in id; name the folder so")
    files: dict[str, bytes] = {}
    problems: list[Problem] = []
    size = 0
    for entry in walk_folder(root):
        rel = entry.path
        if entry.kind == "link":
            problems.append(link_problem(rel))
        elif entry.kind == "folder":
            if entry.depth >= MAX_FOLDERS_DEEP:
                message = f"{rel} is more than {MAX_FOLDERS_DEEP} folders deep"
                raise _refuse("PLG-ZIP-TOO-DEEP", message, rel)
        elif entry.kind == "file":
            if len(files) >= MAX_ENTRIES:
                message = f"the folder holds more than {MAX_ENTRIES} files"
                raise _refuse("PLG-ZIP-TOO-MANY-ENTRIES", message)
            size += entry.size
            if size > MAX_UNCOMPRESSED_BYTES:
                message = f"the folder holds more than {MAX_UNCOMPRESSED_BYTES} bytes"
                raise _refuse("PLG-ZIP-UNCOMPRESSED-TOO-LARGE", message)
            files[rel] = entry.location.read_bytes()
        else:
            message = f"{rel} is not a regular file"
            problems.append(Problem("PLG-CODE-FILE-TYPE", message, path=rel))
    if problems:
        raise CodeRefused(problems)
    return files


def check_code(
    folder: str, files: Mapping[str, bytes], pack_info: Any = None, *, fixtures: bool = True
) -> PluginCode:
    """The checks the service runs without Node on a plug-in folder's files (path -> bytes):
    code file types and the 1 MiB of covered code, the manifest (folder named as the id), the
    fetcher, the fixtures `check` needs ("Folder and runs", at upload; skipped with
    `fixtures=False`), and `.pack.json` agreeing with the files. Raises CodeRefused with every
    error found."""
    problems: list[Problem] = []
    digest = files_digest(files)
    problems.extend(digest.problems)
    if digest.code_bytes > MAX_CODE_BYTES:
        problems.append(
            Problem(
                "PLG-ZIP-UNCOMPRESSED-TOO-LARGE",
                f"the digest-covered code is {digest.code_bytes} bytes; at most {MAX_CODE_BYTES}",
            )
        )
    manifest = judged = None
    if "plugin.json" not in files:
        problems.append(
            Problem(
                "PLG-MANIFEST-INVALID-JSON",
                "plugin.json is missing; every plug-in folder starts with its manifest",
                path="plugin.json",
            )
        )
    else:
        parsed = parse_manifest(files["plugin.json"], folder_name=folder)
        problems.extend(parsed.problems)
        manifest = judged = parsed.manifest
        if manifest is None and all(p.code == "PLG-FOLDER-ID" for p in parsed.problems):
            # Only the folder's name is wrong: the fixtures are still judged by the manifest.
            judged = parse_manifest(files["plugin.json"]).manifest
    if "fetch.mjs" not in files:
        problems.append(
            Problem(
                "PLG-FETCH-MISSING", "fetch.mjs is missing at the top of the folder", "fetch.mjs"
            )
        )
    if judged is not None and fixtures:
        for source in judged.sources:
            where = f"fixtures/sources/{source.name}"
            if where not in files:
                message = f"{where} is missing: keep one real copy of source {source.name!r}"
                problems.append(Problem("PLG-FIXTURE-SOURCE-MISSING", message, path=where))
        if "fixtures/records.jsonl" not in files:
            problems.append(
                Problem(
                    "PLG-FIXTURE-RECORDS-MISSING",
                    "fixtures/records.jsonl is missing",
                    path="fixtures/records.jsonl",
                )
            )
        if "fixtures/context.json" in files:
            problems.extend(check_fixture_context(files["fixtures/context.json"], judged))
    if pack_info is not None and digest.digest is not None:
        stated = pack_info.get("digest") if isinstance(pack_info, dict) else None
        named = pack_info.get("id") if isinstance(pack_info, dict) else None
        if stated != digest.digest or named != folder:
            problems.append(
                Problem(
                    "PLG-ZIP-PACK-JSON",
                    f"{PACK_FILE} states id {named!r} and digest {stated!r}; the files are "
                    f"{folder!r} with digest {digest.digest}",
                    path=PACK_FILE,
                )
            )
    errors = [p for p in problems if p.severity == "error"]
    if errors or manifest is None or digest.digest is None:
        raise CodeRefused(problems)
    return PluginCode(
        manifest=manifest,
        digest=digest.digest,
        files={path: bytes(files[path]) for path in digest.files},
        warnings=[p for p in problems if p.severity != "error"],
    )


def check_pack(data: bytes) -> PluginCode:
    """Read a pack archive and check the plug-in in it (`read_pack`, then `check_code`)."""
    unpacked = read_pack(data)
    return check_code(unpacked.folder, unpacked.files, unpacked.pack_info)


def check_folder(folder: str | os.PathLike[str]) -> PluginCode:
    """Check a plug-in folder on the server (the service's own plug-ins) as a pack of it would be
    checked, except the fixtures: a folder on the server is not an upload ("Folder and runs"
    names `check` and upload), and the service's own code is approved by a person reading it."""
    root = Path(folder)
    return check_code(root.name, folder_files(root), fixtures=False)


def folder_problems(folder: str | os.PathLike[str]) -> list[Problem]:
    """Every problem the folder rules that need no Node find in a plug-in folder on this
    machine, as at upload (fixtures included): the folder named as the id, the manifest, the
    code files, `fetch.mjs`, and the fixtures `check` needs (a file per declared source,
    `fixtures/records.jsonl`, a valid `fixtures/context.json`). Warnings included; `[]` when the
    folder passes. Running the fetcher (imports, runs, fixture output) is the tool's part."""
    root = Path(folder)
    try:
        return list(check_code(root.name, folder_files(root)).warnings)
    except CodeRefused as refused:
        return list(refused.problems)
