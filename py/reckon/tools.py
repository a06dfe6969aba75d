"""The page's tools, importable: ``from reckon.tools import get_orders``.

Each name is a function the embedding page lends (docs/javascript.md, *Host tools*);
call it with keyword arguments and await it: ``rows = await get_orders(month=3)``.
"""

from __future__ import annotations

from reckon.kernel._tools import Tool, ToolError, _tool

__all__ = ["Tool", "ToolError"]


def __getattr__(name: str) -> Tool:
    return _tool(name)
