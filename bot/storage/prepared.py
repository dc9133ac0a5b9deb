"""Statements compiled once and run as the driver's own executemany.

The answer path writes a few thousand rows a second into the read models;
SQLAlchemy's per-row parameter handling would cost more than the database
work itself. Here the statement is compiled once per backend, each row becomes
a plain tuple (with the column types' own conversions, such as UTC datetimes),
and the driver gets the whole batch in one call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import Dialect
from sqlalchemy.ext.asyncio import AsyncConnection


class Prepared:
    def __init__(self, statement: Any, dialect: Dialect, columns: Sequence[str]) -> None:
        compiled = statement.compile(dialect=dialect, column_keys=list(columns))
        self.sql = str(compiled)
        # A parameter that is not a column is a value the statement itself
        # binds (a literal such as a CASE's 0).
        binds = [compiled.binds[name] for name in compiled.positiontup or ()]
        self._slots: list[tuple[str, Callable[[Any], Any] | None, Any]] = [
            (bind.key, bind.type.bind_processor(dialect), bind.value) for bind in binds
        ]
        self._columns = set(columns)

    def row(self, values: Mapping[str, Any]) -> tuple[Any, ...]:
        return tuple(
            (process(values[name]) if process else values[name]) if name in self._columns else fixed
            for name, process, fixed in self._slots
        )

    async def run(self, connection: AsyncConnection, rows: Sequence[Mapping[str, Any]]) -> None:
        if rows:
            await connection.exec_driver_sql(self.sql, [self.row(values) for values in rows])
