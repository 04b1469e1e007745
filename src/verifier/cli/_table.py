"""Text tables of the command line: at most :data:`TABLE_WIDTH` columns (a terminal or a CI log),
columns beyond it in further blocks, long labels in a numbered key below the table, and no
subnormal round-off printed as if it were information (issue 32)."""

from __future__ import annotations

import math
import textwrap
from typing import Sequence

__all__ = ["TABLE_WIDTH", "TINY", "numbered_table", "table_number", "wrapped"]

#: Widest line the text output prints.
TABLE_WIDTH = 120
#: Printed instead of a subnormal value (below 2.2e-308, where binary64 keeps only round-off digits).
TINY = "<1e-300"
_SMALLEST_NORMAL = 2.2250738585072014e-308


def table_number(value: float, side: str | None, spec: str = ".6g") -> str:
    """``value`` for a table cell, ``format(value, spec)`` unless it is subnormal (4.94066e-324 is
    round-off, not information): then rounded toward safety on the bound's ``side`` (an UPPER bound
    of 5e-324 prints ``<1e-300``, a LOWER bound ``0``; a negative one the mirror image; an estimate,
    ``side`` None, ``0``). The --json outputs keep every digit."""
    if value == 0 or math.isnan(value) or not abs(value) < _SMALLEST_NORMAL:
        return format(value, spec)
    if side == "upper":
        return TINY if value > 0 else "0"
    if side == "lower":
        return "0" if value > 0 else ">-1e-300"
    return "0"


def wrapped(text: str, indent: str = "     ") -> list[str]:
    """``text`` in lines of at most TABLE_WIDTH characters (never split inside a word)."""
    return textwrap.wrap(text, TABLE_WIDTH, subsequent_indent=indent, break_on_hyphens=False)


def numbered_table(x_name: str, xs: Sequence[str], columns: Sequence[tuple[str, Sequence[str]]], *, x_width: int = 8, cell: int = 13, prefix: str = "") -> list[str]:
    """Rows ``xs`` (already formatted), one column per ``(label, cells)`` headed ``[prefix i]``, in
    blocks at most TABLE_WIDTH wide, then ``key: [i] label; …`` wrapped to TABLE_WIDTH."""
    if not columns:
        return []
    per_block = max(1, (TABLE_WIDTH - x_width) // cell)
    lines: list[str] = []
    numbered = list(enumerate(columns))
    for start in range(0, len(numbered), per_block):
        block = numbered[start : start + per_block]
        lines.append(f"{x_name:>{x_width}}" + "".join(f"{f'[{prefix}{i + 1}]':>{cell}}" for i, _ in block))
        for row, x in enumerate(xs):
            lines.append(f"{x:>{x_width}}" + "".join(f" {cells[row]:>{cell - 1}}" for _, (_, cells) in block))
    lines += wrapped("key: " + "; ".join(f"[{prefix}{i + 1}] {label}" for i, (label, _) in numbered))
    return lines
