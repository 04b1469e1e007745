"""Strategy matrices C of matrix-factorisation mechanisms (release C·X + Z), validated and stored
by their bands.

A strategy is an N×N lower-triangular, finite matrix (Schuchardt & Kalinin, §2.2 and Lemma 2.8).
Lemma 2.8 is stated for non-negative C with the means written through |C|; a matrix with negative
entries is accepted and accounted through |C| (``Strategy.signed`` says so, and the output repeats
it). Named families (notes §1.1):

- ``identity``: C = I (DP-SGD, bandwidth 1);
- ``bsr``: banded square root, C_ij = r_{i−j} for 0 <= i−j < p with r_t = binom(2t, t)/4^t
  (Kalinin & Lampert 2024; the coefficients of (1 − x)^{−1/2} truncated to p bands);
- ``toeplitz``: C_ij = c_{i−j} from given coefficients c_0, c_1, … (zero beyond them);
- ``blt``: buffered linear Toeplitz, c_0 = 1 and c_t = Σ_j ω_j θ_j^{t−1} for t >= 1 (Dvijotham et al.
  2024; McMahan et al. 2024) — dense;
- a ``.npy`` or ``.csv`` file holding C.

Storage is by bands: ``bands[i, d] = |C|[i, i − d]`` for d < ``width`` (the bandwidth of C, the
number of non-zero diagonals), so a banded N = 10⁴ strategy costs N·p doubles, not N².
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import numpy.typing as npt

from verifier._validation import check_integer, check_real_array
from verifier.errors import InvalidArgument

__all__ = ["Strategy", "FAMILIES", "identity", "bsr", "toeplitz", "blt", "from_array", "load", "bsr_coefficients"]

FAMILIES = ("identity", "bsr", "toeplitz", "blt")

#: Largest N of a dense (bandwidth > 256) strategy: its bands take N²/2 doubles.
MAX_DENSE_SIZE = 5000


@dataclass(frozen=True)
class Strategy:
    """A validated strategy matrix: ``label`` (what it is), ``digest`` (SHA-256 of C's bytes, so two
    strategies are equal exactly when their matrices are), ``size`` N, ``signed`` (C had negative
    entries; |C| is used, Lemma 2.8) and the bands of |C| (see the module docstring)."""

    label: str = field(compare=False)
    digest: str
    size: int
    signed: bool
    bands: npt.NDArray[np.float64] = field(compare=False, repr=False, hash=False)

    @property
    def width(self) -> int:
        """The bandwidth of C: the number of diagonals that hold a non-zero entry (1 for C = I)."""
        return int(self.bands.shape[1])

    def dense(self) -> npt.NDArray[np.float64]:
        """|C| as a dense N×N array (small N only; used by tests and the Monte Carlo evidence)."""
        n = self.size
        out = np.zeros((n, n))
        rows = np.arange(n)
        for d in range(self.width):
            keep = rows >= d
            out[rows[keep], rows[keep] - d] = self.bands[keep, d]
        return out


def _from_bands(label: str, signed_bands: npt.NDArray[np.float64]) -> Strategy:
    """Strategy from the signed bands (N × w, zero where i − d < 0), trimmed to its true width."""
    nonzero = np.flatnonzero(np.any(signed_bands != 0.0, axis=0))
    width = int(nonzero[-1]) + 1 if nonzero.size else 1
    signed_bands = np.ascontiguousarray(signed_bands[:, :width])
    digest = hashlib.sha256(signed_bands.tobytes() + str(signed_bands.shape).encode()).hexdigest()[:16]
    bands = np.abs(signed_bands)
    bands.setflags(write=False)
    return Strategy(label, digest, int(signed_bands.shape[0]), bool(np.any(signed_bands < 0)), bands)


def _toeplitz_bands(n: int, coefficients: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    w = min(n, len(coefficients))
    out = np.tile(coefficients[:w], (n, 1))
    rows = np.arange(n)[:, None]
    out[rows < np.arange(w)[None, :]] = 0.0
    return out


def _size(n: int) -> int:
    return check_integer("size", n, minimum=1)


def identity(n: int) -> Strategy:
    """C = I_N (DP-SGD)."""
    return _from_bands("identity", np.ones((_size(n), 1)))


def bsr_coefficients(bands: int) -> npt.NDArray[np.float64]:
    """r_t = binom(2t, t)/4^t for t < ``bands`` (r_t = r_{t−1}·(2t − 1)/(2t), exact recurrence)."""
    p = check_integer("bands", bands, minimum=1)
    r = np.empty(p)
    r[0] = 1.0
    for t in range(1, p):
        r[t] = r[t - 1] * (2 * t - 1) / (2 * t)
    return r


def bsr(n: int, bands: int) -> Strategy:
    """Banded square root with ``bands`` diagonals (module docstring)."""
    return _from_bands(f"bsr(bands={bands})", _toeplitz_bands(_size(n), bsr_coefficients(bands)))


def toeplitz(n: int, coefficients: Sequence[float]) -> Strategy:
    """Lower-triangular Toeplitz C_ij = c_{i−j} (zero beyond the given coefficients)."""
    c = check_real_array("coefficients", coefficients)
    if c.ndim != 1 or c.size == 0:
        raise InvalidArgument("coefficients", list(np.ravel(c)), "must be a non-empty list of numbers c_0, c_1, …")
    return _from_bands(f"toeplitz({len(c)} coefficients)", _toeplitz_bands(_size(n), c))


def blt(n: int, theta: Sequence[float], omega: Sequence[float]) -> Strategy:
    """Buffered linear Toeplitz: c_0 = 1, c_t = Σ_j ω_j θ_j^{t−1} (module docstring)."""
    th = check_real_array("theta", theta)
    om = check_real_array("omega", omega)
    if th.ndim != 1 or th.size == 0 or th.shape != om.shape:
        raise InvalidArgument("theta", list(np.ravel(th)), f"theta and omega must be lists of the same length >= 1 (omega has {om.size})")
    size = _size(n)
    if size > MAX_DENSE_SIZE:
        raise InvalidArgument("size", size, f"a dense (BLT) strategy is limited to N <= {MAX_DENSE_SIZE}")
    t = np.arange(1, size)
    c = np.concatenate([[1.0], (om[None, :] * th[None, :] ** (t[:, None] - 1)).sum(axis=1)])
    if not np.all(np.isfinite(c)):
        raise InvalidArgument("theta", list(th), "the BLT coefficients overflow (|theta| must be <= 1 for a useful BLT)")
    return _from_bands(f"blt({th.size} buffers)", _toeplitz_bands(size, c))


def from_array(matrix: npt.ArrayLike, label: str = "matrix") -> Strategy:
    """Validate an explicit C: a square, lower-triangular, finite 2-D array of numbers."""
    try:
        c = np.array(matrix, dtype=float)
    except (TypeError, ValueError):
        raise InvalidArgument("matrix", label, "must be a 2-D array of numbers") from None
    if c.ndim != 2 or c.shape[0] != c.shape[1] or c.shape[0] == 0:
        raise InvalidArgument("matrix", label, f"must be square (N×N, N >= 1); it has shape {c.shape}")
    if not np.all(np.isfinite(c)):
        i, j = np.argwhere(~np.isfinite(c))[0]
        raise InvalidArgument("matrix", label, f"must be finite; entry ({i}, {j}) is {c[i, j]}")
    upper = np.triu(c, 1)
    if np.any(upper != 0.0):
        i, j = np.argwhere(upper != 0.0)[0]
        raise InvalidArgument("matrix", label, f"must be lower-triangular; entry ({i}, {j}) above the diagonal is {c[i, j]:g}")
    n = c.shape[0]
    rows = np.arange(n)
    lower_offsets = np.flatnonzero([np.any(np.diagonal(c, -d) != 0.0) for d in range(n)])
    width = int(lower_offsets[-1]) + 1 if lower_offsets.size else 1
    if width > 256 and n > MAX_DENSE_SIZE:
        raise InvalidArgument("matrix", label, f"a dense strategy is limited to N <= {MAX_DENSE_SIZE} (this one has N = {n})")
    bands = np.zeros((n, width))
    for d in range(width):
        bands[d:, d] = c[rows[d:], rows[d:] - d]
    return _from_bands(label, bands)


def load(path: str | Path) -> Strategy:
    """Read C from a ``.npy`` (no pickles) or ``.csv`` (comma-separated rows) file and validate it."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in (".npy", ".csv"):
        raise InvalidArgument("matrix_file", str(path), "must end in .npy or .csv")
    try:
        if suffix == ".npy":
            c = np.load(p, allow_pickle=False)
        else:
            c = np.loadtxt(p, delimiter=",", ndmin=2)
    except OSError as exc:
        raise InvalidArgument("matrix_file", str(path), f"cannot be read ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise InvalidArgument("matrix_file", str(path), f"is not a numeric matrix ({str(exc).splitlines()[0]})") from None
    try:
        return from_array(c, label=f"file {p.name}")
    except InvalidArgument as exc:
        raise InvalidArgument("matrix_file", str(path), exc.rule) from None

