"""Sphinx configuration of verifier's documentation (``python -m sphinx -W -b html docs docs/_build/html``).

Sphinx with MyST: the pages are Markdown (so ``benchmarks/*.md`` are included as they are written),
autodoc with napoleon reads the public API's docstrings, and the furo theme is the one the scientific
Python projects use. See design.md, "Documentation".
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

project = "verifier"
author = "verifier contributors"
copyright = "verifier contributors"

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.mathjax"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "examples"]
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3
# Lexers: console blocks hold prompts and output; the json blocks are claims.
highlight_language = "none"
# The benchmark pages include each benchmarks/*.md as its script wrote it; a script's choice of heading
# levels (a table, then a level-3 heading) is not an error of the site.
suppress_warnings = ["myst.header"]
html_theme = "furo"
html_title = "verifier"
html_static_path: list[str] = []

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": False}
napoleon_google_docstring = False
napoleon_numpy_docstring = True
nitpicky = False


def _allocation_scaling_plot(data: Path, png: Path) -> None:
    """In-process seconds against t (log-log) for verifier's allocation PLD, before and after issue 17's
    work, and pld-accounting, from the benchmark's own JSON: the growth rates the table states."""
    import json

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = json.loads(data.read_text(encoding="utf-8"))
    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=110)
    for key, field, label in (("verifier", "inner", "verifier (now)"), ("before", "inner", "verifier (before)"), ("peer", "seconds", "pld-accounting 2.0")):
        points = [(row["t"], row[key][field]) for row in rows if isinstance(row.get(key), dict) and row[key].get(field)]
        ax.loglog(*zip(*points), marker="o", label=label)
    ax.set_xlabel("t (steps of one epoch)")
    ax.set_ylabel("seconds, in process")
    ax.set_title("Random allocation at ε ≈ 1: time against t")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)


#: Benchmarks whose JSON output is drawn on their page (a curve says more than the table).
_PLOTS = {"allocation_scaling": _allocation_scaling_plot}


def _benchmark_pages() -> None:
    """One page per ``benchmarks/*.md`` (under ``benchmarks/generated/``, rebuilt on every build, never
    committed): the script's first docstring line as the title when the Markdown has none, then the file
    itself, included as it is, so that a page cannot disagree with the benchmark's output."""
    import ast

    out = Path(__file__).resolve().parent / "benchmarks" / "generated"
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.md"):
        old.unlink()
    for result in sorted((ROOT / "benchmarks").glob("*.md")):
        text = result.read_text(encoding="utf-8")
        script = result.with_suffix(".py")
        lines = []
        if not text.startswith("# "):
            doc = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8"))) if script.exists() else None
            title = (doc or result.stem).split("\n\n")[0].replace("\n", " ")
            lines.append(f"# {result.stem}: {title.split(': ', 1)[0] if len(title) > 90 else title}\n")
        lines.append(f"Source: `benchmarks/{result.name}`, written by `benchmarks/{script.name}`.\n")
        if result.stem in _PLOTS:
            _PLOTS[result.stem](ROOT / "benchmarks" / f"{result.stem}.json", out / f"{result.stem}.png")
            lines.append(f"![{result.stem}]({result.stem}.png)\n")
        lines.append(f"```{{include}} ../../../benchmarks/{result.name}\n:heading-offset: {0 if text.startswith('# ') else 1}\n```\n")
        (out / result.name).write_text("\n".join(lines), encoding="utf-8")


_benchmark_pages()


def _plain_bars(app, what, name, obj, options, lines) -> None:
    """Docstrings write |x| and |C| as mathematics, never as reStructuredText substitutions."""
    lines[:] = [line.replace("|", "\\|") for line in lines]


def setup(app) -> None:
    app.connect("autodoc-process-docstring", _plain_bars)
