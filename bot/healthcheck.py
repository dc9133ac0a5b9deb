"""The Docker HEALTHCHECK: GET /healthz on the port the bot serves it on.

`python -m bot.healthcheck` exits 0 when /healthz answers 200, 1 otherwise. The
port is QUIZ_HEALTH_PORT (as the bot reads it, default 8080); with 0 the bot
serves no health check, so there is nothing to ask and it exits 0."""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request

DEFAULT_PORT = "8080"


def healthy(port: int, timeout: float = 3.0) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=timeout) as reply:
            return bool(reply.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def main() -> int:
    raw = os.environ.get("QUIZ_HEALTH_PORT", DEFAULT_PORT).strip() or DEFAULT_PORT
    try:
        port = int(raw)
    except ValueError:
        print(f"QUIZ_HEALTH_PORT is not a port number: {raw!r}", file=sys.stderr)
        return 1
    if port == 0:
        return 0
    return 0 if healthy(port) else 1


if __name__ == "__main__":
    sys.exit(main())
