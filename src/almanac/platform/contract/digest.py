"""The digest of a plug-in's code (Plug-in folder table; DECISIONS section 4).

Covered files: every regular file in the folder except, at the top of the folder, `fixtures/`,
`listing/`, `listing.json`, `review.json`, `README.md`, `AGENTS.md`, `CLAUDE.md`,
`node_modules/` and `.git/`, and except any `.DS_Store` at any depth. For each covered file the
line `<sha256 hex>  <path>\\n` (path relative, `/`-separated, UTF-8), lines ordered by the path's
UTF-8 bytes; the digest is `sha256:<hex>` of that text, the same as

    find . -type f ... -printf '%P\\0' | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum

A symbolic link anywhere in the folder is PLG-CODE-SYMLINK and is never followed (`.git/` and
`node_modules/` at the top and any `.DS_Store`, links or not, are not walked: they are never
packed; `walk_folder` is the one walk of `pack` and the digest). A covered file that is not `.mjs`,
`.json`, `.md`, `.txt` or `LICENSE` ("Limits": code file types), a special file, or a name that is
not UTF-8 or holds a backslash or control character is PLG-CODE-FILE-TYPE.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from almanac.platform.contract.problems import Problem

EXCLUDED_TOP = frozenset(
    {"fixtures", "listing", "listing.json", "review.json", "README.md", "AGENTS.md", "CLAUDE.md"}
)
NOT_WALKED_TOP = frozenset({"node_modules", ".git"})
EXCLUDED_ANYWHERE = frozenset({".DS_Store"})
CODE_SUFFIXES = (".mjs", ".json", ".md", ".txt")
CODE_NAMES = frozenset({"LICENSE"})


@dataclass(frozen=True, slots=True)
class DigestResult:
    """The digest (None when a link makes it undefined), covered paths in order, problems, and
    the covered files' total size in bytes (the upload limit on digest-covered code)."""

    digest: str | None
    files: list[str]
    problems: list[Problem] = field(default_factory=list)
    code_bytes: int = 0


def _utf8_key(path: str) -> bytes:
    return path.encode("utf-8", "surrogateescape")


def _bad_name(name: str) -> str | None:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return "is not UTF-8"
    if "\\" in name:
        return "holds a backslash"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        return "holds a control character"
    return None


def is_code_file_type(path: str) -> bool:
    """Whether a covered path is a code file type: `.mjs`, `.json`, `.md`, `.txt` or LICENSE."""
    name = path.rsplit("/", 1)[-1]
    return name in CODE_NAMES or name.endswith(CODE_SUFFIXES)


def is_covered(path: str) -> bool:
    """Whether a `/`-separated path inside the folder is covered by the digest (DECISIONS 4)."""
    parts = path.split("/")
    if parts[0] in NOT_WALKED_TOP or parts[0] in EXCLUDED_TOP:
        return False
    return not any(part in EXCLUDED_ANYWHERE for part in parts)


@dataclass(frozen=True, slots=True)
class FolderEntry:
    """An entry met walking a plug-in folder: its `/`-separated path in the folder, what it is,
    how many folders it lies in, its size in bytes (of a file) and where it is on disk."""

    path: str
    kind: Literal["file", "folder", "link", "special"]
    depth: int
    size: int
    location: Path


def walk_folder(folder: str | os.PathLike[str]) -> Iterator[FolderEntry]:
    """Every entry of a plug-in folder, depth first, each folder's entries in the UTF-8 order of
    their names and a folder before what it holds. Links are never followed; `.git/` and
    `node_modules/` at the top and any `.DS_Store` are passed over: they are never packed."""

    def visit(directory: Path, prefix: str, depth: int) -> Iterator[FolderEntry]:
        with os.scandir(directory) as found:
            entries = sorted(found, key=lambda e: _utf8_key(e.name))
        for entry in entries:
            if (not prefix and entry.name in NOT_WALKED_TOP) or entry.name in EXCLUDED_ANYWHERE:
                continue
            rel = prefix + entry.name
            location = Path(entry.path)
            if entry.is_symlink():
                yield FolderEntry(rel, "link", depth, 0, location)
                continue
            mode = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(mode.st_mode):
                yield FolderEntry(rel, "folder", depth, 0, location)
                yield from visit(location, rel + "/", depth + 1)
            elif stat.S_ISREG(mode.st_mode):
                yield FolderEntry(rel, "file", depth, mode.st_size, location)
            else:
                yield FolderEntry(rel, "special", depth, 0, location)

    return visit(Path(folder), "", 0)


def link_problem(path: str) -> Problem:
    """PLG-CODE-SYMLINK for a symbolic link met in a folder."""
    return Problem("PLG-CODE-SYMLINK", f"{path} is a symbolic link; links are never followed", path)


def _walk(folder: Path) -> tuple[list[str], list[Problem]]:
    covered: list[str] = []
    problems: list[Problem] = []
    for entry in walk_folder(folder):
        rel = entry.path
        if entry.kind == "link":
            problems.append(link_problem(rel))
        elif entry.kind == "folder" or not is_covered(rel):
            continue
        elif entry.kind == "special":
            problems.append(Problem("PLG-CODE-FILE-TYPE", f"{rel} is not a regular file", path=rel))
        elif _judge_code_file(rel, problems):
            covered.append(rel)
    covered.sort(key=_utf8_key)
    return covered, problems


def _judge_code_file(rel: str, problems: list[Problem]) -> bool:
    """The code-file rules ("Limits": code file types) for one covered path: a name that cannot
    be a path is left out of the digest; a file of another type is kept in it but reported."""
    bad = _bad_name(rel)
    if bad is not None:
        shown = rel.encode("utf-8", "backslashreplace").decode("ascii", "replace")
        problems.append(Problem("PLG-CODE-FILE-TYPE", f"the name {shown!r} {bad}", path=shown))
        return False
    if not is_code_file_type(rel):
        problems.append(
            Problem(
                "PLG-CODE-FILE-TYPE",
                f"{rel} is not a .mjs, .json, .md, .txt or LICENSE file; "
                "only fixtures/ and listing/ may hold other kinds",
                path=rel,
            )
        )
    return True


def covered_files(folder: str | os.PathLike[str]) -> list[str]:
    """The covered paths of a folder in digest order (what `digest --files` prints)."""
    return _walk(Path(folder))[0]


def _digest_lines(pairs: Iterable[tuple[str, str]]) -> str:
    text = "".join(
        f"{hex_}  {path}\n" for path, hex_ in sorted(pairs, key=lambda p: _utf8_key(p[0]))
    )
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def folder_digest(folder: str | os.PathLike[str]) -> DigestResult:
    """Digest a plug-in folder; a symbolic link anywhere leaves the digest None."""
    root = Path(folder)
    files, problems = _walk(root)
    if any(p.code == "PLG-CODE-SYMLINK" for p in problems):
        return DigestResult(None, files, problems)
    pairs = []
    size = 0
    for rel in files:
        with open(root / rel, "rb") as handle:
            pairs.append((rel, hashlib.file_digest(handle, "sha256").hexdigest()))
            size += handle.tell()
    return DigestResult(_digest_lines(pairs), files, problems, size)


def files_digest(files: Mapping[str, bytes]) -> DigestResult:
    """Digest the files of a folder given as path -> bytes (an unpacked archive): the same
    covered-file and code-file-type rules as `folder_digest`, on paths instead of a walk."""
    covered: list[str] = []
    problems: list[Problem] = []
    for rel in sorted(files, key=_utf8_key):
        if not is_covered(rel):
            continue
        if _judge_code_file(rel, problems):
            covered.append(rel)
    pairs = [(rel, hashlib.sha256(files[rel]).hexdigest()) for rel in covered]
    size = sum(len(files[rel]) for rel in covered)
    return DigestResult(_digest_lines(pairs), covered, problems, size)


def digest_of_files(files: Mapping[str, bytes]) -> str:
    """The digest of code kept as path → bytes (every given path is hashed, none left out)."""
    for path in files:
        bad = _bad_name(path)
        if bad is not None or path.startswith("/") or "" in path.split("/"):
            raise ValueError(f"code path {path!r} is not a relative /-separated UTF-8 path")
    return _digest_lines((path, hashlib.sha256(data).hexdigest()) for path, data in files.items())
