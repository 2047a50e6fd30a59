"""Entry point of ``python -m curation``."""

from __future__ import annotations

import sys

from curation.cli import main

if __name__ == "__main__":
    sys.exit(main())
