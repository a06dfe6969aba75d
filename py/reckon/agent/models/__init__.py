"""Talking to models: the OpenAI-compatible client, its stream, tool calls and code
blocks in a reply, thinking, the context window, token counts, what was sent."""
