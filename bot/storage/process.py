"""This process's name in the database: the posts it makes carry it, so each
process closes and reveals its own posts on time and leaves the others' to
their makers unless those are late (their process died or lags)."""

from __future__ import annotations

import os
import socket
import uuid

# New at every start: a restarted process takes its earlier posts over like any other's.
PROCESS = f"{socket.gethostname()[:12]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"[:40]
