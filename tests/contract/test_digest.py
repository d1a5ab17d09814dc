"""The digest (DECISIONS section 4) against the coreutils command, on real folders."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from almanac.platform.contract.digest import covered_files, digest_of_files, folder_digest

# The DECISIONS section 4 command, with the covered-path printer written out for GNU find.
COREUTILS = (
    "find . \\( -path ./fixtures -o -path ./listing -o -path ./node_modules -o -path ./.git"
    " -o -name .DS_Store \\) -prune -o -type f ! -path ./listing.json ! -path ./review.json"
    " ! -path ./README.md ! -path ./AGENTS.md ! -path ./CLAUDE.md -printf '%P\\0'"
    " | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum"
)


def coreutils_digest(folder: Path) -> str:
    out = subprocess.run(
        ["bash", "-c", COREUTILS], cwd=folder, capture_output=True, check=True, timeout=30
    ).stdout.decode()
    return "sha256:" + out.split()[0]


def write(folder: Path, files: dict[str, bytes | str]) -> None:
    for rel, data in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)


PLUGIN = {
    "plugin.json": '{"contract": 1}\n',
    "fetch.mjs": "import { parse } from './lib/parse.mjs';\n",
    "lib/parse.mjs": "export function parse() {}\n",
    "lib/deep/er/tables.json": "[1, 2, 3]\n",
    "lib/Zürich.mjs": "export const z = 'é';\n",
    "lib/ärger/日本.txt": "こんにちは\n",
    "lib/a b.md": "space in the name\n",
    "lib/Z.mjs": "upper case sorts before lower case bytes\n",
    "LICENSE": "MIT\n",
    "NOTES.md": "covered\n",
    "lib/README.md": "only the top-level README is left out\n",
    "README.md": "left out\n",
    "AGENTS.md": "left out\n",
    "CLAUDE.md": "left out\n",
    "listing.json": "{}\n",
    "review.json": "{}\n",
    "fixtures/records.jsonl": "{}\n",
    "fixtures/sources/rates.xml": b"\x00\x01binary",
    "listing/icon.png": b"\x89PNG",
    "node_modules/x/index.js": "left out\n",
    ".git/HEAD": "ref: refs/heads/main\n",
    ".DS_Store": b"\x00",
    "lib/.DS_Store": b"\x00",
}


def test_digest_equals_the_coreutils_command(tmp_path: Path) -> None:
    write(tmp_path, PLUGIN)
    result = folder_digest(tmp_path)
    assert result.problems == []
    assert result.digest == coreutils_digest(tmp_path)
    assert result.files == [
        "LICENSE",
        "NOTES.md",
        "fetch.mjs",
        "lib/README.md",
        "lib/Z.mjs",
        "lib/Zürich.mjs",
        "lib/a b.md",
        "lib/deep/er/tables.json",
        "lib/parse.mjs",
        "lib/ärger/日本.txt",
        "plugin.json",
    ]
    assert covered_files(tmp_path) == result.files
    assert result.code_bytes == sum((tmp_path / f).stat().st_size for f in result.files)


def test_every_covered_byte_changes_the_digest_and_excluded_files_do_not(tmp_path: Path) -> None:
    write(tmp_path, PLUGIN)
    before = folder_digest(tmp_path).digest
    write(
        tmp_path,
        {
            "README.md": "changed\n",
            "fixtures/records.jsonl": "changed\n",
            "listing/icon.png": b"other",
            ".DS_Store": b"\x01",
        },
    )
    assert folder_digest(tmp_path).digest == before
    write(tmp_path, {"lib/deep/er/tables.json": "[1, 2, 4]\n"})
    after = folder_digest(tmp_path).digest
    assert after != before
    assert after == coreutils_digest(tmp_path)
    (tmp_path / "lib/parse.mjs").rename(tmp_path / "lib/parse2.mjs")
    renamed = folder_digest(tmp_path).digest
    assert renamed not in (before, after)
    assert renamed == coreutils_digest(tmp_path)


def test_digest_of_files_equals_the_folder_digest(tmp_path: Path) -> None:
    write(tmp_path, PLUGIN)
    result = folder_digest(tmp_path)
    stored = {rel: (tmp_path / rel).read_bytes() for rel in reversed(result.files)}
    assert digest_of_files(stored) == result.digest
    stored["fetch.mjs"] += b" "
    assert digest_of_files(stored) != result.digest


def test_digest_of_files_refuses_paths_that_are_not_relative() -> None:
    for bad in ("/etc/passwd", "a//b.mjs", "a\\b.mjs", "new\nline.mjs", "dir/"):
        with pytest.raises(ValueError, match="relative"):
            digest_of_files({bad: b""})


def test_symbolic_links_anywhere_are_reported_and_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.mjs").write_text("secret\n")
    folder = tmp_path / "demo"
    write(folder, {"plugin.json": "{}\n", "fetch.mjs": "\n"})
    (folder / "lib").mkdir()
    os.symlink(outside / "secret.mjs", folder / "lib" / "secret.mjs")
    os.symlink(outside, folder / "fixtures")
    result = folder_digest(folder)
    assert result.digest is None
    assert sorted((p.code, p.path) for p in result.problems) == [
        ("PLG-CODE-SYMLINK", "fixtures"),
        ("PLG-CODE-SYMLINK", "lib/secret.mjs"),
    ]
    assert result.files == ["fetch.mjs", "plugin.json"]


def test_links_inside_excluded_folders_are_still_reported(tmp_path: Path) -> None:
    write(tmp_path, {"fetch.mjs": "\n", "fixtures/sources/a.csv": "x\n"})
    os.symlink("a.csv", tmp_path / "fixtures/sources/b.csv")
    problems = folder_digest(tmp_path).problems
    assert [(p.code, p.path) for p in problems] == [("PLG-CODE-SYMLINK", "fixtures/sources/b.csv")]


def test_code_file_types(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "fetch.mjs": "\n",
            "lib/helper.js": "\n",
            "lib/LICENSE": "x\n",
            "data.csv": "a,b\n",
            "fixtures/sources/data.csv": "a,b\n",
            "listing/icon.png": b"\x89PNG",
            "Fetch.MJS": "\n",
        },
    )
    result = folder_digest(tmp_path)
    assert sorted((p.code, p.path) for p in result.problems) == [
        ("PLG-CODE-FILE-TYPE", "Fetch.MJS"),
        ("PLG-CODE-FILE-TYPE", "data.csv"),
        ("PLG-CODE-FILE-TYPE", "lib/helper.js"),
    ]
    # The digest is still defined: the file-type rule is a separate upload check.
    assert result.digest == coreutils_digest(tmp_path)


def test_special_files_and_bad_names_are_reported(tmp_path: Path) -> None:
    write(tmp_path, {"fetch.mjs": "\n"})
    os.mkfifo(tmp_path / "pipe.mjs")
    (tmp_path / "back\\slash.mjs").write_text("\n")
    os.makedirs(tmp_path / os.fsdecode(b"bad\xffname"))
    (tmp_path / os.fsdecode(b"bad\xffname") / "x.mjs").write_text("\n")
    result = folder_digest(tmp_path)
    assert result.files == ["fetch.mjs"]
    codes = sorted((p.code, p.message) for p in result.problems)
    assert [c for c, _ in codes] == ["PLG-CODE-FILE-TYPE"] * 3
    assert any("not a regular file" in m for _, m in codes)
    assert any("backslash" in m for _, m in codes)
    assert any("not UTF-8" in m for _, m in codes)
