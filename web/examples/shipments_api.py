"""A stand-in for a shop's warehouse API: the endpoint of the relay-tool example.

`relay-tools.toml` beside this file makes it the relay tool `get_shipments`
(docs/configuration.md, "An example to run"). Standard library only:

    SHIPMENTS_API_KEY=some-long-random-text python shipments_api.py [--port 8765]

It answers ``POST /shipments {"month": 3}`` with that month's shipments, as JSON, and
only to a caller that sends its key in ``X-Api-Key``: the relay reads the key from the
same variable and sends it; the browser never sees it. It listens on 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import hmac
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

KEY_ENV = "SHIPMENTS_API_KEY"
# The orders of examples/tools.js that left the warehouse (1004 was refunded, 1007 is open).
SHIPMENTS = [
    {"order": 1001, "month": 1, "day": 6, "carrier": "PostNord", "kg": 1.2},
    {"order": 1002, "month": 1, "day": 21, "carrier": "DHL", "kg": 0.4},
    {"order": 1003, "month": 2, "day": 3, "carrier": "DHL", "kg": 3.5},
    {"order": 1005, "month": 3, "day": 5, "carrier": "PostNord", "kg": 2.0},
    {"order": 1006, "month": 3, "day": 16, "carrier": "UPS", "kg": 0.9},
]
MAX_BODY = 10_000


class Shipments(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        if self.path != "/shipments":
            self.answer(404, {"error": "this API has one route: POST /shipments"})
            return
        key = os.environ.get(KEY_ENV, "")
        if not key or not hmac.compare_digest(self.headers.get("X-Api-Key", ""), key):
            self.answer(401, {"error": "send the API's key in X-Api-Key"})
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self.answer(413, {"error": f"a request is at most {MAX_BODY} bytes"})
            return
        try:
            month = json.loads(self.rfile.read(length) or b"{}").get("month")
        except (ValueError, AttributeError):
            month = None
        if not isinstance(month, int) or isinstance(month, bool):
            self.answer(400, {"error": 'send {"month": <1 to 12>}'})
            return
        self.answer(200, [s for s in SHIPMENTS if s["month"] == month])

    def answer(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        # One line a request, without the client's headers (the key is one of them).
        sys.stderr.write(f"shipments API: {format % args}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The warehouse API of the relay-tool example.")
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free one")
    args = parser.parse_args(argv)
    if not os.environ.get(KEY_ENV):
        print(f"set {KEY_ENV} to the API's key first (any long random text)", file=sys.stderr)
        return 2
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Shipments)
    print(f"shipments API on http://127.0.0.1:{server.server_port}/shipments", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
