"""Put this directory on sys.path: shuffled_enumeration.py (the brute-force shuffled-batch densities)
and neyman_pearson.py (the most powerful test between finite laws)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
