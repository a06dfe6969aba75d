"""The agent: asks a model for code, runs it in the sandbox, answers from the output.

Runs in the agent worker's small Pyodide, so it uses only the standard library and
never imports ``reckon.kernel`` or ``reckon.server``. ``_host.py`` (written
separately) binds it to the browser: a fetch ``Transport`` and a sandbox ``Executor``.
"""

from __future__ import annotations

from reckon.agent._loop import Agent
from reckon.agent._observe import (
    OBSERVATION_HEADER,
    format_observation,
    parse_observation,
    trim_text,
)
from reckon.agent._prompt import build_system_prompt, describe_file
from reckon.agent._types import (
    RUN_PYTHON_TOOL,
    RUN_SQL_TOOL,
    ChatReply,
    ChatRequest,
    Executor,
    JSONDict,
    Model,
    Transport,
)
from reckon.agent.demo import DemoModel, Intent, parse_intent
from reckon.agent.export._export import (
    export_notebook,
    export_script,
    import_cells,
    portable_paths,
    sandbox_paths,
)
from reckon.agent.export._transcript import Transcript, replay_cells
from reckon.agent.models._code import (
    CodeBlocks,
    ToolArguments,
    extract_code_blocks,
    parse_tool_arguments,
)
from reckon.agent.models._openai import OpenAIModel, messages_without_tools, parse_completion
from reckon.agent.models._sse import ChunkAccumulator, SSEDecoder
from reckon.agent.privacy._privacy import Privacy

__all__ = [
    "OBSERVATION_HEADER",
    "RUN_PYTHON_TOOL",
    "RUN_SQL_TOOL",
    "Agent",
    "ChatReply",
    "ChatRequest",
    "ChunkAccumulator",
    "CodeBlocks",
    "DemoModel",
    "Executor",
    "Intent",
    "JSONDict",
    "Model",
    "OpenAIModel",
    "Privacy",
    "SSEDecoder",
    "ToolArguments",
    "Transcript",
    "Transport",
    "build_system_prompt",
    "describe_file",
    "export_notebook",
    "export_script",
    "extract_code_blocks",
    "format_observation",
    "import_cells",
    "messages_without_tools",
    "parse_completion",
    "parse_intent",
    "parse_observation",
    "parse_tool_arguments",
    "portable_paths",
    "replay_cells",
    "sandbox_paths",
    "trim_text",
]
