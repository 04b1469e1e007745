"""The results file of a Monte Carlo run: one JSON object per finished chunk, appended as it finishes.

Each line is written whole and flushed to disk (fsync) before the next chunk is counted, so a run
killed at any moment loses at most the chunks still in flight. On reading, a torn last line (a kill
in the middle of a write) is ignored, and records of other runs (another key) are skipped, so one
file can hold several runs. Floats are written by ``json`` as shortest round-trip reprs, so a
resumed run combines exactly the numbers the first run computed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = ["ChunkStore"]


class ChunkStore:
    """Append-only JSON-lines store of chunk records (``None`` path: kept in memory only)."""

    def __init__(self, path: str | os.PathLike | None) -> None:
        self.path = None if path is None else Path(path)

    def load(self, keys: set[str]) -> dict[tuple[str, int], dict]:
        """Saved records whose key is in ``keys``, by (key, chunk index); the last copy wins."""
        found: dict[tuple[str, int], dict] = {}
        if self.path is None or not self.path.exists():
            return found
        with self.path.open("r", encoding="utf-8") as handle:
            for line in handle:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line torn by a kill mid-write
                if isinstance(record, dict) and record.get("key") in keys:
                    found[(record["key"], int(record["chunk"]))] = record
        return found

    def append(self, record: dict) -> None:
        """Write one record as a line and force it to disk."""
        if self.path is None:
            return
        line = (json.dumps(record, separators=(",", ":")) + "\n").encode("utf-8")
        with self.path.open("a+b") as handle:
            if handle.tell() > 0:
                handle.seek(-1, os.SEEK_END)
                if handle.read(1) != b"\n":
                    line = b"\n" + line  # end a line torn by an earlier kill before appending
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
