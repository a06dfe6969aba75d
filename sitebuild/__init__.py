"""The build of Reckon's static site, stage by stage (`python build.py` runs it).

Its stages and what each reads and makes are listed once, in `STAGES`
(sitebuild/_stages.py); `python build.py --help` prints them.
"""

from __future__ import annotations

from reckon._exceptions import BuildError, ChecksumError

from . import _fetch
from ._assemble import assemble
from ._check import check, check_site
from ._cli import main
from ._context import ROOT, Context, Fetched, Paths
from ._duckdb import duckdb_tarball
from ._fetch import *  # noqa: F403
from ._pages import copy_web, module_graph, seam_source
from ._pins import PURE_PACKAGES
from ._stages import ALL, STAGES, Stage, describe, plan
from ._verify import official_lock, verify, verify_duckdb, verify_packages, verify_pure
from ._wheel import build_reckon_wheel, reckon_sources, reckon_wheel_key, wheels

__all__ = [
    # What the fetch stage exports, the package does: those names are listed once.
    *_fetch.__all__,
    "ALL",
    "PURE_PACKAGES",
    "ROOT",
    "STAGES",
    "BuildError",
    "ChecksumError",
    "Context",
    "Fetched",
    "Paths",
    "Stage",
    "assemble",
    "build_reckon_wheel",
    "check",
    "check_site",
    "copy_web",
    "describe",
    "duckdb_tarball",
    "main",
    "module_graph",
    "official_lock",
    "plan",
    "reckon_sources",
    "reckon_wheel_key",
    "seam_source",
    "verify",
    "verify_duckdb",
    "verify_packages",
    "verify_pure",
    "wheels",
]
