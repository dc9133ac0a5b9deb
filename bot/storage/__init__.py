"""Persistence: SQLAlchemy models, engine set-up, migrations and queries."""
