"""The shuffle model: rigorous UPPER bounds (Feldman, McMillan & Talwar 2021) and exact LOWER bounds
of shuffled randomized response through the count of reports."""

__all__: list[str] = []  # the bounds live in the submodules: verifier.shuffle.clones, .count, .approx
