"""``python -m reckon.server serve ...``, the same as the ``reckon`` command."""

from __future__ import annotations

import sys

from reckon.server._cli import main

if __name__ == "__main__":
    sys.exit(main())
