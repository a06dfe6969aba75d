"""Listing and watching files: what the page shows and what a run changed."""

from __future__ import annotations

import os
import stat
from typing import Any

__all__ = ["Snapshot", "diff_snapshots", "list_files", "snapshot"]

# path -> (size, mtime_ns); enough to notice a rewrite without hashing contents.
Snapshot = dict[str, tuple[int, int]]


def list_files(directory: str) -> list[dict[str, Any]]:
    """Every file and folder under ``directory``, recursively, sorted by path.

    Uploads may be symlinks into a mount folder, so files are stat'ed through
    their links; symlinked folders are listed but not entered (no loops).
    A folder that does not exist yet lists as empty.
    """
    entries: list[dict[str, Any]] = []
    if not os.path.isdir(directory):
        return entries
    for root, dirs, files in os.walk(directory):
        for name in dirs:
            entry = _entry(os.path.join(root, name), name, is_dir=True)
            if entry is not None:
                entries.append(entry)
        for name in files:
            entry = _entry(os.path.join(root, name), name, is_dir=False)
            if entry is not None:
                entries.append(entry)
    entries.sort(key=lambda entry: entry["path"])
    return entries


def _entry(path: str, name: str, *, is_dir: bool) -> dict[str, Any] | None:
    try:
        info = os.stat(path)
    except OSError:
        # A dangling link, or a file deleted while we walked: not worth showing.
        return None
    return {
        "path": path,
        "name": name,
        "size": 0 if is_dir else info.st_size,
        "is_dir": is_dir,
        "mtime": info.st_mtime,
    }


def snapshot(directory: str) -> Snapshot:
    """Size and mtime of every file a cell wrote under ``directory``: regular files
    only, reached without following a link. A link (to an upload, to ``/``), a second
    name of a file (a hard link) and ``directory`` itself replaced by a link are not
    files the cell wrote there, and the page stores what this reports (SECURITY.md, M1)."""
    state: Snapshot = {}
    try:
        top = os.lstat(directory)
    except OSError:
        return state
    if not stat.S_ISDIR(top.st_mode):
        return state
    for root, _dirs, files in os.walk(directory):  # does not enter linked folders
        for name in files:
            path = os.path.join(root, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and info.st_nlink == 1:
                state[path] = (info.st_size, info.st_mtime_ns)
    return state


def diff_snapshots(before: Snapshot, after: Snapshot) -> list[dict[str, Any]]:
    """Files created or modified between two snapshots, sorted by path."""
    changes: list[dict[str, Any]] = []
    for path in sorted(after):
        size, _mtime = after[path]
        if path not in before:
            changes.append({"path": path, "size": size, "change": "created"})
        elif before[path] != after[path]:
            changes.append({"path": path, "size": size, "change": "modified"})
    return changes
