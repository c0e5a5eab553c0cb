"""The Gmail first import against Gmail's quota: `benchmarks/oauth_import.py --provider gmail`, kept under its
old name. Usage: .venv/bin/python benchmarks/gmail_import.py [--messages 10000] [--limit 6000] [--fetch-units 60]
[--rounds 1]"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.oauth_import import main

if __name__ == "__main__":
    main(default_provider="gmail")
