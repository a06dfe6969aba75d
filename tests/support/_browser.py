"""How the browser tests start Chromium: the product's own flags for headless sessions."""

from __future__ import annotations

from reckon.client._browser import CHROMIUM_ARGS as _PRODUCT_CHROMIUM_ARGS

# One set of Chromium flags for the product's headless sessions and the tests.
CHROMIUM_ARGS = list(_PRODUCT_CHROMIUM_ARGS)
