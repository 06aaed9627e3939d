"""``python -m polytune.report``: moved to ``polytune.study.report`` (this name keeps the command working)."""
from __future__ import annotations

import sys

from .study.report import main

if __name__ == "__main__":
    sys.exit(main())
