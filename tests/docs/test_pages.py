"""The README and the documentation site as a reader meets them (issue 43): a short README whose
set-up and docs commands are the ones CI runs, pages that list what the repository holds, and no
file that points outside the repository."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import doc_blocks  # noqa: E402

ROOT = doc_blocks.ROOT
README = (ROOT / "README.md").read_text(encoding="utf-8")
#: The README's docs command (Done when 2: one command builds the site).
DOCS_COMMAND = ".venv/bin/pip install -e '.[docs]' && .venv/bin/python -m sphinx -W -b html docs docs/_build/html"


def test_the_readme_is_short():
    """Done when 1: at most 250 lines, nothing a reader must scroll past to start."""
    assert len(README.splitlines()) <= 250


def test_ci_builds_the_docs_with_the_readmes_command():
    """Done when 2: the README gives one command and .ci/run runs that command (warnings are errors)."""
    assert DOCS_COMMAND in README
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert f"python3 -m venv .venv && {DOCS_COMMAND}" in ci
    assert ci.index(DOCS_COMMAND) < ci.index("-m pytest")  # the test run stays the last word


def test_every_proof_script_is_on_the_proofs_page():
    """Catches: a new proofs/*.py that the theory page does not describe."""
    page = (ROOT / "docs" / "theory" / "proofs.md").read_text(encoding="utf-8")
    scripts = sorted(p.name for p in (ROOT / "proofs").glob("*.py") if not p.name.startswith("_") and p.name != "run_all.py")
    assert scripts
    missing = [name for name in scripts if f"`{name}`" not in page]
    assert not missing, f"proofs not described in docs/theory/proofs.md: {missing}"


def test_every_page_is_in_the_site():
    """Every docs/*.md page is reachable from a toctree (Sphinx only warns about an orphan page)."""
    index = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs").rglob("index.md") if "_build" not in p.parts)
    for page in doc_blocks.pages()[1:]:
        name = page.relative_to(ROOT / "docs").with_suffix("").as_posix()
        if name.endswith("index"):
            continue
        assert name in index, f"{name} is in no toctree"


def _tracked_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    return [ROOT / name for name in listed.stdout.splitlines()]


def test_no_file_points_outside_the_repository():
    """Done when 4: no tracked text file refers to a path above the repository root (``../shared``,
    ``../../x``): a clone has nothing there. Catches the old README's ``../shared/DESIGN.md``."""
    outside = re.compile(r"(?<![\w.])\.\./(?:\.\./)*(?:shared|notes|work)\b|/work/shared")
    found = []
    for path in _tracked_files():
        if path == Path(__file__).resolve() or path.suffix in (".png", ".so", ".npy", ".parquet", ".sqlite") or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        found += [f"{path.relative_to(ROOT)}:{n}" for n, line in enumerate(text.splitlines(), 1) if outside.search(line)]
    assert not found, found


def test_every_cited_note_is_in_the_repository():
    """Code and proofs cite the technical extracts of the papers as ``notes/NAME.md §N``: each cited
    note is in the repository's notes/ (a clone has it). Catches a citation of a note kept elsewhere."""
    cited = set()
    for path in _tracked_files():
        if path.suffix in (".py", ".pyx", ".md", ".pyi") and path.is_file():
            cited |= set(re.findall(r"(?<![\w/])notes/[a-z][a-z0-9-]*\.md", path.read_text(encoding="utf-8")))
    assert cited, "the code cites no note (the pattern no longer matches)"
    missing = sorted(name for name in cited if not (ROOT / name).is_file())
    assert not missing, missing
