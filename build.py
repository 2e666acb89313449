#!/usr/bin/env python3
"""Build the site: `python build.py [build|serve|check|stats|extract] [options]` (see --help)."""
import sys
from pathlib import Path

# Run from a checkout without installing: make the builder importable from here.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from labml_site.cli import run  # noqa: E402

if __name__ == "__main__":
    run()
