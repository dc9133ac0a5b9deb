"""Small SQL pieces several stores and read models build statements from."""

from __future__ import annotations

from typing import Any

from sqlalchemy import String, bindparam, cast
from sqlalchemy.dialects import postgresql, sqlite


def insert_for(dialect: str, table: Any) -> Any:
    """An INSERT into `table` (a Table or a mapped class) that supports ON
    CONFLICT on this backend."""
    module = postgresql if dialect == "postgresql" else sqlite
    return module.insert(getattr(table, "__table__", table))


def text_param(name: str, length: int) -> Any:
    """A bound text parameter typed in the SQL: PostgreSQL cannot tell a bare
    parameter's type in a select list."""
    return cast(bindparam(name), String(length))
