"""``python -m reckon.server serve ...``, the same as the ``reckon`` command.

Kept because docs/evaluation.md and the benchmarks start the relay (and ``eval``) this
way. Only this launcher, which nothing imports, reaches up to ``reckon._cli``.
"""

from __future__ import annotations

import sys

from reckon._cli import main

if __name__ == "__main__":
    sys.exit(main())
