"""Resource budgets: what a method may spend, and the figures it declines with.

A method estimates its cost (:class:`Cost`: seconds on one core and peak bytes) from the parameters
before it starts; :func:`refusal` compares it with the time left and the memory the machine has and
returns the reason to decline ("needs ~40 GB of memory at t = 10⁹, 12 GB available"), or None.
Estimates are rough (a factor of a few); they exist so that a run that cannot finish says so at
once instead of running past its budget or being killed for memory.
"""

from __future__ import annotations

import contextlib
import os
import time
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Iterator

__all__ = ["Cost", "Clock", "available_memory_bytes", "refusal", "human_bytes", "human_seconds", "MEMORY_SHARE", "ACTIVITY", "Activity",
           "deadline", "seconds_left"]

#: Share of the memory available now that one method may plan to use (the rest is for the
#: interpreter, the other direction's results and other processes).
MEMORY_SHARE = 0.5


@dataclass(frozen=True)
class Cost:
    """Estimated cost of one call: ``seconds`` of wall-clock on one core and ``bytes`` at peak."""

    seconds: float = 0.0
    bytes: float = 0.0
    what: str = ""  # the parameter that drives it, e.g. "t = 1e+09"


class Clock:
    """Seconds spent since construction and left of an optional budget (None: no limit)."""

    def __init__(self, budget_seconds: float | None) -> None:
        self.budget_seconds = budget_seconds
        self.started = time.perf_counter()

    def spent(self) -> float:
        return time.perf_counter() - self.started

    def left(self) -> float | None:
        return None if self.budget_seconds is None else self.budget_seconds - self.spent()


def available_memory_bytes() -> float:
    """Physical memory available now (Linux: MemAvailable; elsewhere free pages; inf if unknown)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024.0
    except OSError:
        pass
    try:
        return float(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return float("inf")


def human_bytes(n: float) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} B"


def human_seconds(s: float) -> str:
    for unit, size in (("years", 3.15e7), ("days", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if s >= size:
            return f"{s / size:.3g} {unit}"
    return f"{s:.3g} s"


def refusal(cost: Cost, seconds_left: float | None, memory_bytes: float | None = None) -> str | None:
    """Why a call of this ``cost`` must not start: more memory than MEMORY_SHARE of what is available
    (``memory_bytes``, default: measured now), or more time than ``seconds_left`` (None: no time
    limit). None when it may start."""
    at = f" at {cost.what}" if cost.what else ""
    memory = available_memory_bytes() if memory_bytes is None else memory_bytes
    if cost.bytes > MEMORY_SHARE * memory:
        return f"skipped: needs ~{human_bytes(cost.bytes)} of memory{at} ({human_bytes(memory)} available)"
    if seconds_left is not None and cost.seconds > seconds_left:
        return f"skipped: needs ~{human_seconds(cost.seconds)}{at} ({human_seconds(max(seconds_left, 0.0))} of the time budget left)"
    return None


_DEADLINE: ContextVar[float | None] = ContextVar("verifier_deadline", default=None)


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Within the block, :func:`seconds_left` counts down from ``seconds`` (None: no deadline). The
    portfolio sets it around each method, beside the interrupt that enforces the budget, so a method
    that can stop early with a sound but wider answer (an anytime search) does so instead of being cut."""
    token = _DEADLINE.set(None if seconds is None else time.perf_counter() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def seconds_left() -> float | None:
    """Seconds before the deadline of the enclosing :func:`deadline` block (None: no deadline)."""
    end = _DEADLINE.get()
    return None if end is None else end - time.perf_counter()


class Activity:
    """What the process is computing now (e.g. "allocation-pld (remove)"), for a progress display.
    Written by the portfolio before each method runs, read by the command line's progress thread;
    a plain attribute write, so reading a stale label is harmless."""

    def __init__(self) -> None:
        self.label = ""

    def set(self, label: str) -> None:
        self.label = label


#: The one activity record of the process.
ACTIVITY = Activity()
