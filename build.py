"""Assemble Reckon's self-contained static site (the stages are in sitebuild/).

    python build.py                      # every stage, into dist/site
    python build.py --source official    # take package files from the Pyodide release
    python build.py --stage check        # re-verify an assembled site
    python build.py --help               # every stage: what it does, reads and makes

The stages are listed once, in sitebuild/_stages.py (`--help` is written from that
list); each is cached under .cache/build, so a second build downloads nothing.
"""

from __future__ import annotations

import sys

from sitebuild import main

if __name__ == "__main__":
    sys.exit(main())
