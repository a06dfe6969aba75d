"""One open spreadsheet file (.xlsx, .xlsm, .xls, .ods): its sheets, their raw cells and sizes."""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from typing import Any
from xml.etree import ElementTree

from reckon.kernel.tables._bounds import check_workbook
from reckon.kernel.tables._ods import ods_sheet_tallies, read_ods_sheets

__all__ = ["ENGINES", "SheetSize", "Workbook", "open_workbook"]

ENGINES = {"xlsx": "openpyxl", "xlsm": "openpyxl", "xls": "xlrd", "ods": "odf"}


@dataclass(frozen=True)
class SheetSize:
    """Rows below a header row and columns; ``None`` when the file does not say."""

    name: str
    rows: int | None
    columns: int | None

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "rows": self.rows, "columns": self.columns}


class Workbook:
    """The sheets of one file, read with pandas' engine (or our ODS reader)."""

    def __init__(self, path: str, shown: str, fmt: str) -> None:
        self.path, self.shown, self.fmt = path, shown, fmt
        self._book: Any = None
        self._tallies: list[SheetSize] | None = None
        if fmt in ("xlsx", "xlsm", "ods"):
            check_workbook(path, shown, fmt)  # before any XML is read
        if fmt == "ods":
            self.names = [size.name for size in self.sizes()] or ["Sheet1"]
        else:
            self._book = _excel_file(path, shown, fmt)
            self.names = [str(name) for name in self._book.sheet_names]
        if not self.names:
            raise ValueError(f"{shown} has no sheets.")

    def close(self) -> None:
        if self._book is not None:
            self._book.close()

    def __enter__(self) -> Workbook:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def raw(self, names: list[str]) -> dict[str, Any]:
        """Each sheet's cells as a frame without a header (rows and columns as stored)."""
        import pandas as pd

        if self.fmt == "ods":
            try:
                found = read_ods_sheets(self.path, names, shown=self.shown)
            except (KeyError, zipfile.BadZipFile, ElementTree.ParseError) as exc:
                raise ValueError(_broken_ods(self.shown, exc)) from exc
            return {name: pd.DataFrame(found.get(name, [])) for name in names}
        return {name: self._book.parse(name, header=None) for name in names}

    def parse(self, name: str, **options: Any) -> Any:
        """One sheet read by pandas with the caller's own ``read_excel`` options."""
        import pandas as pd

        if self._book is None:
            return pd.read_excel(self.path, sheet_name=name, engine="odf", **options)
        return self._book.parse(name, **options)

    def sizes(self) -> list[SheetSize]:
        """Every sheet's size from the file's structure, without reading cell values."""
        if self._tallies is None:
            self._tallies = self._count()
        return self._tallies

    def _count(self) -> list[SheetSize]:
        if self.fmt == "ods":
            try:
                tallies = ods_sheet_tallies(self.path)
            except (KeyError, zipfile.BadZipFile) as exc:
                raise ValueError(_broken_ods(self.shown, exc)) from exc
            return [SheetSize(t.name, max(t.rows - 1, 0), t.columns) for t in tallies]
        book = self._book.book
        if self.fmt == "xls":
            return [SheetSize(s.name, max(s.nrows - 1, 0), s.ncols) for s in book.sheets()]
        # openpyxl's read-only sheets take these from the sheet's <dimension> tag.
        sizes = []
        for sheet in book.worksheets:
            rows, columns = sheet.max_row, sheet.max_column
            sizes.append(
                SheetSize(sheet.title, None if rows is None else max(rows - 1, 0), columns)
            )
        return sizes


def open_workbook(path: str, shown: str, fmt: str) -> Workbook:
    return Workbook(path, shown, fmt)


def _excel_file(path: str, shown: str, fmt: str) -> Any:
    import pandas as pd

    try:
        return pd.ExcelFile(path, engine=ENGINES[fmt])
    except Exception as exc:
        text = str(exc).lower()
        if "encrypt" in text or "password" in text:
            raise ValueError(encrypted(shown)) from exc
        raise ValueError(
            f"{shown} could not be opened as a .{fmt} workbook ({type(exc).__name__}: {exc}). "
            "Open it in a spreadsheet program, save it as .xlsx or .csv and upload it again."
        ) from exc


def _broken_ods(shown: str, exc: Exception) -> str:
    return (
        f"{shown} could not be opened as an .ods spreadsheet ({exc}). "
        "Save it again as .ods or .xlsx and upload it again."
    )


def encrypted(path: str) -> str:
    return (
        f"{path} is encrypted (password protected), so it cannot be read. "
        "Open it, save it again without a password, and upload it again."
    )
