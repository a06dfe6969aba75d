"""The ``reckon`` command: ``serve`` and ``token`` from the relay, ``eval`` from the harness.

Above both: ``reckon.server`` never imports the harness, and ``reckon serve`` never
loads it (nor its dependencies): ``reckon eval ...`` is handed to ``reckon.eval``
before the flags are parsed, and parses its own.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from reckon._exceptions import ConfigError
from reckon.server import RelayConfig
from reckon.server._commands import mint, serve
from reckon.server._flags import add_serve_command, add_token_command, config_from_namespace

__all__ = ["config_from_args", "main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        command = self.prog if self.prog != "reckon" else "reckon serve"
        raise ConfigError(f"{message} (see '{command} --help')")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="reckon", description="Reckon: a code interpreter in your browser.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_serve_command(commands)
    # Listed for --help only: main() hands `reckon eval ...` to reckon.eval before parsing.
    commands.add_parser("eval", help="run a question set headless and report (reckon eval -h)")
    add_token_command(commands)
    return parser


def config_from_args(argv: list[str] | None) -> RelayConfig:
    """Parse ``reckon serve`` flags (plus the --config file) into a RelayConfig."""
    return config_from_namespace(_parser().parse_args(argv))


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``reckon`` console script; returns the exit code."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["eval"]:
        from reckon.eval._command import main as eval_main

        return eval_main(argv[1:])
    try:
        args = _parser().parse_args(argv)
        if args.command == "token":
            return mint(args)
        return serve(config_from_namespace(args), open_browser=args.open)
    except ConfigError as exc:
        print(f"reckon: error: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else 0
