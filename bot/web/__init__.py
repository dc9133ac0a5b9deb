"""The bot's web pages: the per-community dashboard and /metrics, on the health server."""
