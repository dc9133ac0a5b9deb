"""Statements compiled once and run as the driver's own executemany.

The answer path writes a few thousand rows a second into the read models;
SQLAlchemy's per-row parameter handling would cost more than the database
work itself. Here the statement is compiled once per backend, each row becomes
a plain tuple (with the column types' own conversions, such as UTC datetimes),
and the driver gets the whole batch in one call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from operator import itemgetter
from typing import Any

from sqlalchemy import Dialect
from sqlalchemy.ext.asyncio import AsyncConnection


class Prepared:
    def __init__(self, statement: Any, dialect: Dialect, columns: Sequence[str]) -> None:
        compiled = statement.compile(dialect=dialect, column_keys=list(columns))
        self.sql = str(compiled)
        names = list(compiled.positiontup or ())
        unknown = set(names) - set(columns)
        # Every parameter must be a column value: literals belong in the SQL.
        assert not unknown, f"parameters that are not columns: {unknown}"
        self._values = itemgetter(*names)
        # One conversion per column type, so a value repeated in several
        # columns of that type is converted once per row.
        by_type: dict[str, Callable[[Any], Any] | None] = {}
        self._convert: list[tuple[int, Callable[[Any], Any]]] = []
        for index, name in enumerate(names):
            column_type = compiled.binds[name].type
            kind = repr(column_type)
            if kind not in by_type:
                by_type[kind] = column_type.bind_processor(dialect)
            if (process := by_type[kind]) is not None:
                self._convert.append((index, process))

    def row(self, values: Mapping[str, Any]) -> tuple[Any, ...]:
        found = self._values(values)
        row: tuple[Any, ...] = found if isinstance(found, tuple) else (found,)
        if not self._convert:
            return row
        converted = list(row)
        done: dict[tuple[int, int], Any] = {}
        for index, process in self._convert:
            value = converted[index]
            key = (id(process), id(value))
            if key not in done:
                done[key] = process(value)
            converted[index] = done[key]
        return tuple(converted)

    async def run(self, connection: AsyncConnection, rows: Sequence[Mapping[str, Any]]) -> None:
        if rows:
            await connection.exec_driver_sql(self.sql, [self.row(values) for values in rows])
