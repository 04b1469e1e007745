"""Put this folder on sys.path: the acceptance tests share the exact t = 2 table defined in
test_mc_samplers.py (pytest runs in importlib mode, which does not add test folders itself)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
