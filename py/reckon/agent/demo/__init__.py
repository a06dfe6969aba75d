"""The built-in demo model: a deterministic planner that needs no network and no key.

``_model`` is the model; ``_intents`` reads a question into an ``Intent``
(``_math`` the math questions), ``_code``/``_sql`` plan the cell, ``_answer``
words the reply from the cell's output and ``_verify`` rechecks it another way.
"""

from __future__ import annotations

from reckon.agent.demo._intent import Intent
from reckon.agent.demo._intents import parse_intent
from reckon.agent.demo._model import DEMO_MODEL, DemoModel

__all__ = ["DEMO_MODEL", "DemoModel", "Intent", "parse_intent"]
