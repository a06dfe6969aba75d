"""The checks every table of a config file gets: known keys of the right types, and for
``[[profile]]``, ``[[client]]`` and ``[[tool]]`` lists, each entry a table with the keys
it needs. One place, so the three lists say their mistakes the same way."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from reckon._exceptions import ConfigError

__all__ = ["TABLE_LISTS", "check_keys", "tables_of"]

# Lists of tables, checked table by table (``tables_of``), not as lists of strings.
TABLE_LISTS = ("profile", "client", "tool")

Schema = dict[str, Any]  # a key -> its type, or a tuple of types


def check_keys(table: dict[str, Any], schema: Schema, where: str) -> None:
    """Each key of ``table`` is in ``schema`` and has its type; a list holds strings."""
    for key, value in table.items():
        if key not in schema:
            raise ConfigError(f"{where}: unknown key {key!r}; expected one of {', '.join(schema)}")
        # bool is an int subclass; `port = true` is a mistake, not port 1.
        if not isinstance(value, schema[key]) or (
            isinstance(value, bool) and schema[key] is not bool
        ):
            raise ConfigError(f"{where}: {key!r} has the wrong type ({type(value).__name__})")
        if (
            isinstance(value, list)
            and key not in TABLE_LISTS
            and not all(isinstance(v, str) for v in value)
        ):
            raise ConfigError(f"{where}: {key!r} must be a list of strings")


def tables_of(
    tables: list[Any], where: str, kind: str, *, schema: Schema, required: tuple[str, ...]
) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(here, table)`` for each ``[[kind]]`` table of ``tables``, checked: a table,
    its keys known and typed, the ``required`` ones there; ``here`` names it in errors."""
    for index, table in enumerate(tables, start=1):
        here = f"{where}: [[{kind}]] #{index}"
        if not isinstance(table, dict):
            raise ConfigError(f"{here} must be a table")
        check_keys(table, schema, here)
        for key in required:
            if key not in table:
                raise ConfigError(f"{here} needs {key!r}")
        yield here, table
