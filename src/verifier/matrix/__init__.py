"""Matrix-factorisation mechanisms (DP-FTRL, banded/BSR, BLT) under random allocation
(Schuchardt & Kalinin, "Sampling-free privacy accounting for matrix mechanisms under random
allocation"): strategy matrices (:mod:`~verifier.matrix.strategy`), the dominating pair's means and
Gram matrix (:mod:`~verifier.matrix.gram`, Lemma 2.8) and the Rényi accountant
(:mod:`~verifier.matrix.renyi`, Algorithms 1–2; imported on its own, it depends on the RDP engine)."""

from verifier.matrix.gram import cyclic_bandwidth, gram, means, truncate
from verifier.matrix.strategy import FAMILIES, Strategy, blt, bsr, from_array, identity, load, toeplitz

__all__ = [
    "FAMILIES",
    "Strategy",
    "blt",
    "bsr",
    "cyclic_bandwidth",
    "from_array",
    "gram",
    "identity",
    "load",
    "means",
    "toeplitz",
    "truncate",
]
