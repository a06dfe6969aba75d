"""``read_table``: one call that reads what people really upload."""

from __future__ import annotations

import os
import tempfile
from typing import Any

from reckon.kernel.tables._archives import unpack_member
from reckon.kernel.tables._bounds import ARCHIVE_MEMBER_BYTES
from reckon.kernel.tables._delimited import Loaded, pandas_call, read_delimited
from reckon.kernel.tables._encoding import looks_binary, read_head
from reckon.kernel.tables._sheets import ENGINES, read_sheet
from reckon.kernel.tables._tidy import tidy_frame

__all__ = ["TABLE_FORMATS", "load_table", "read_table", "table_format", "tidy_loaded"]

TABLE_FORMATS = ("csv", "tsv", "psv", "ssv", "xlsx", "xlsm", "xls", "ods", "json", "parquet")
_TEXT_TABLES = {"csv", "tsv", "psv", "ssv", "tab", "txt", "dat"}


def read_table(path: str, *, sheet: str | int | None = 0, tidy: bool = True, **kwargs: Any) -> Any:
    """The whole table of ``path`` as a ``pandas.DataFrame``: ``load_table``'s frame.
    Cells call ``reckon.kernel.read_table`` (``_read``), whose docstring says what it
    detects and adds ``columns=``/``where=``."""
    return load_table(path, sheet=sheet, tidy=tidy, **kwargs).frame


def table_format(path: str, head: bytes) -> str | None:
    """The table format of ``path`` by extension, then by content; ``None`` if not a table."""
    extension = _extension(path)
    if extension in ("xlsx", "xlsm", "xls", "ods", "json", "parquet", "zip", "gz"):
        return extension
    if extension in ("jsonl", "ndjson"):
        return "json"
    if extension in _TEXT_TABLES:
        return "text"
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith(b"\xd0\xcf\x11\xe0"):
        return "xls"
    if head.startswith(b"PK"):
        return "zip"
    if head.startswith(b"\x1f\x8b"):
        return "gz"
    if extension in ("html", "htm", "xml", "md", "py", "js", "pdf", "png", "jpg", "jpeg"):
        return None
    if looks_binary(head):
        return None
    return "text"


def load_table(
    path: str,
    *,
    nrows: int | None = None,
    display_path: str | None = None,
    sheet: str | int | None = 0,
    sizes: bool = False,
    tidy: bool = True,
    **kwargs: Any,
) -> Loaded:
    """Read ``path`` and say what was detected (``inspect`` and ``read_table`` share this).

    ``sizes=True`` lists a workbook's sheets with their sizes (for ``inspect``).
    ``tidy`` (without pandas options): tidied as an analyst would (``_tidy``).
    """
    loaded = _load(path, nrows=nrows, display_path=display_path, sheet=sheet, sizes=sizes,
                   tidy=tidy, **kwargs)  # fmt: skip
    if tidy and not kwargs:
        tidy_loaded(loaded, display_path or path, sheet=sheet)
    return loaded


def tidy_loaded(loaded: Loaded, shown: str, *, sheet: str | int | None = 0) -> None:
    """``loaded`` tidied in place (``_tidy``) when its reader says how its file writes
    numbers; ``read_with`` then reads it through ``read_table``, which tidies too."""
    if loaded.style is None:
        return
    frame, notes = tidy_frame(loaded.frame, style=loaded.style)
    loaded.style = None
    if not notes:
        return
    loaded.frame = frame
    loaded.notes.extend(notes)
    if not loaded.read_with.startswith("read_table("):
        chosen = f", sheet={sheet!r}" if sheet != 0 else ""
        loaded.read_with = f"read_table({shown!r}{chosen})"


def _load(
    path: str,
    *,
    nrows: int | None,
    display_path: str | None,
    sheet: str | int | None,
    sizes: bool,
    tidy: bool,
    **kwargs: Any,
) -> Loaded:
    shown = display_path or path
    if not os.path.exists(path):
        raise ValueError(f"{shown} does not exist; list the files to see what is there.")
    if os.path.isdir(path):
        raise ValueError(f"{shown} is a folder, not a file.")
    head = read_head(path)
    if not head:
        raise ValueError(f"{shown} is empty (0 bytes); upload the file again.")
    fmt = table_format(path, head)
    if fmt is None:
        raise ValueError(
            f"{shown} does not look like a table (.{_extension(path) or '?'}); "
            "read_table handles CSV/TSV text, Excel, ODS, JSON, Parquet and zip files."
        )
    if fmt in ENGINES:
        loaded = read_sheet(
            path, fmt=fmt, head=head, sheet=sheet, display_path=shown, sizes=sizes, **kwargs
        )
        if nrows is not None:
            loaded.frame = loaded.frame.head(nrows)
        return loaded
    if fmt in ("zip", "gz"):
        return _read_archive(
            path, shown, fmt, nrows=nrows, sheet=sheet, sizes=sizes, tidy=tidy, **kwargs
        )
    if sheet != 0 or "sheet_name" in kwargs:
        raise ValueError(f"{shown} is not a workbook, so it has no sheets; read it without sheet=.")
    if fmt == "text":
        if kwargs:
            return _plain_csv(path, shown, kwargs, nrows)
        return read_delimited(
            path, extension="." + _extension(path), nrows=nrows, display_path=shown, tidy=tidy
        )
    if fmt == "json":
        return _read_json(path, shown, kwargs)
    return _read_parquet(path, shown, kwargs)


def _extension(path: str) -> str:
    return os.path.splitext(path)[1].lower().lstrip(".")


def _plain_csv(path: str, shown: str, options: dict[str, Any], nrows: int | None) -> Loaded:
    import pandas as pd

    frame = pd.read_csv(path, nrows=nrows, **options)
    return Loaded(frame, "csv", [], pandas_call("pd.read_csv", shown, options))


def _read_json(path: str, shown: str, options: dict[str, Any]) -> Loaded:
    import json

    import pandas as pd

    head = read_head(path, 4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"{") and b"\n{" in head.replace(b"\r\n", b"\n").replace(b"\n ", b"\n"):
        try:
            frame = pd.read_json(path, lines=True, **options)
            call = pandas_call("pd.read_json", shown, {"lines": True, **options})
            return Loaded(frame, "json", ["JSON lines (one record per line)"], call)
        except ValueError:
            pass
    try:
        with open(path, encoding="utf-8-sig") as file:
            data = json.load(file)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(
            f"{shown} is not valid JSON ({exc}); check the file, or read it with "
            "pd.read_json(path, lines=True) if it has one record per line."
        ) from exc
    notes: list[str] = []
    if isinstance(data, dict):
        lists = [key for key, value in data.items() if isinstance(value, list)]
        if len(lists) == 1 and not all(isinstance(v, list) for v in data.values()):
            notes.append(f"records taken from the key {lists[0]!r}")
            data = data[lists[0]]
    if isinstance(data, list) and data and all(isinstance(item, dict) for item in data):
        frame = pd.json_normalize(data)
        if any("." in str(c) for c in frame.columns):
            notes.append("nested fields flattened into dotted column names")
            return Loaded(frame, "json", notes, f"read_table({shown!r})")
        return Loaded(frame, "json", notes, pandas_call("pd.read_json", shown, options))
    try:
        frame = pd.DataFrame(data)
    except ValueError as exc:
        raise ValueError(
            f"{shown} holds JSON that is not a table ({type(data).__name__}); load it with "
            "json.load(open(path)) and pick the part you need."
        ) from exc
    return Loaded(frame, "json", notes, f"read_table({shown!r})")


def _read_parquet(path: str, shown: str, options: dict[str, Any]) -> Loaded:
    import pandas as pd

    try:
        frame = pd.read_parquet(path, **options)
    except Exception as exc:
        raise ValueError(f"{shown} could not be read as Parquet ({exc}).") from exc
    return Loaded(frame, "parquet", [], pandas_call("pd.read_parquet", shown, options))


def _read_archive(
    path: str,
    shown: str,
    fmt: str,
    *,
    nrows: int | None,
    sheet: str | int | None,
    tidy: bool,
    **kwargs: Any,
) -> Loaded:
    with tempfile.TemporaryDirectory() as folder:
        target = unpack_member(path, shown, fmt, folder, limit=ARCHIVE_MEMBER_BYTES)
        inner = os.path.basename(target)
        loaded = load_table(
            target,
            nrows=nrows,
            display_path=f"{shown} ({inner})",
            sheet=sheet,
            tidy=tidy,
            **kwargs,
        )
    loaded.style = None  # tidied inside already
    loaded.notes.insert(0, f"read {inner} from the {fmt} archive")
    loaded.read_with = f"read_table({shown!r})" if sheet == 0 else loaded.read_with
    return loaded
