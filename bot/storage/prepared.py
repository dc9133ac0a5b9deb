"""Statements compiled once and run as the driver's own executemany.

The answer path writes a few thousand rows a second into the read models;
SQLAlchemy's per-row parameter handling would cost more than the database
work itself. Here the statement is compiled once per backend, each row becomes
a plain tuple (with the column types' own conversions, such as UTC datetimes),
and the driver gets the whole batch in one call.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from operator import itemgetter
from typing import Any

from sqlalchemy import Dialect, bindparam
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.storage import autocommit
from bot.storage.db_thread import on_pooled_connection


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


class PreparedRows:
    """A multi-row INSERT … RETURNING for batches of CHUNKS rows.

    A batch goes to the database as a few statements of CHUNKS rows (greedily,
    largest first), each one round trip that returns what it inserted; every
    row becomes its columns' values with the column types' conversions.

    SQLAlchemy compiles the statement for one row and for two; the statement
    for N rows is written from those (the VALUES group repeated, renumbered
    for numbered placeholders) and checked against the two-row compile.
    Compiling 500 rows through SQLAlchemy took 52 ms holding the GIL, paid
    mid-burst by the first batch that large in each process."""

    CHUNKS = (500, 100, 20, 5, 1)

    def __init__(
        self, statement: Callable[[list[dict[str, Any]]], Any], dialect: Dialect, table: Any
    ) -> None:
        self._statement = statement
        self._dialect = dialect
        self._table = table
        self._columns = [column.name for column in table.c if not column.primary_key]
        self._convert: list[tuple[int, Callable[[Any], Any]]] = []
        for position, name in enumerate(self._columns):
            process = table.c[name].type.bind_processor(dialect)
            if process is not None:
                self._convert.append((position, process))
        self._sql: dict[int, str] = {}
        self._repeat: _RowsTemplate | None = _RowsTemplate.derive(
            self._compiled(1), self._compiled(2), len(self._columns), dialect.paramstyle
        )

    def _compiled(self, size: int) -> str:
        """SQLAlchemy's own compile of the statement for `size` rows."""
        rows = [
            {
                name: bindparam(f"{name}_{index}", type_=self._table.c[name].type)
                for name in self._columns
            }
            for index in range(size)
        ]
        compiled = self._statement(rows).compile(dialect=self._dialect)
        expected = [f"{name}_{index}" for index in range(size) for name in self._columns]
        assert list(compiled.positiontup or ()) == expected, "unexpected parameter order"
        return str(compiled)

    def sql(self, size: int) -> str:
        """The statement for `size` rows (built once per size)."""
        if size not in self._sql:
            self._sql[size] = (
                self._repeat.sql(size) if self._repeat is not None else self._compiled(size)
            )
        return self._sql[size]

    def chunks(self, rows: Sequence[Mapping[str, Any]]) -> Iterator[tuple[str, tuple[Any, ...]]]:
        """Each statement of the batch with its parameters."""
        values = itemgetter(*self._columns)
        start = 0
        while start < len(rows):
            size = next(size for size in self.CHUNKS if size <= len(rows) - start)
            sql = self.sql(size)
            flat: list[Any] = []
            for row in rows[start : start + size]:
                one = list(values(row))
                for position, process in self._convert:
                    one[position] = process(one[position])
                flat.extend(one)
            yield sql, tuple(flat)
            start += size

    async def run(
        self, connection: AsyncConnection, rows: Sequence[Mapping[str, Any]]
    ) -> list[tuple[Any, ...]]:
        returned: list[tuple[Any, ...]] = []
        for sql, parameters in self.chunks(rows):
            result = await connection.exec_driver_sql(sql, parameters)
            returned.extend(tuple(found) for found in result)
        return returned


_NUMBERED = re.compile(r"\$(\d+)")


def _closing_paren(text: str, start: int) -> int:
    """Where the parenthesis opened at `start` closes (or the text's end)."""
    depth = 0
    for index in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[index], 0)
        if depth == 0:
            return index
    return len(text) - 1


class _RowsTemplate:
    """A multi-row INSERT's text as head, one VALUES group per row, and tail."""

    def __init__(self, head: str, group: str, tail: str, columns: int, numbered: bool) -> None:
        self.head, self.group, self.tail = head, group, tail
        self.columns, self.numbered = columns, numbered

    @classmethod
    def derive(cls, one: str, two: str, columns: int, paramstyle: str) -> _RowsTemplate | None:
        """From the one- and two-row compiles; None when they are not shaped as
        expected (the caller then compiles every size through SQLAlchemy)."""
        if paramstyle not in ("qmark", "numeric_dollar"):
            return None
        start = one.find(" VALUES (")
        if start < 0:
            return None
        start += len(" VALUES ")
        end = _closing_paren(one, start)
        template = cls(
            one[:start], one[start : end + 1], one[end + 1 :], columns, paramstyle != "qmark"
        )
        return template if template.sql(1) == one and template.sql(2) == two else None

    def sql(self, size: int) -> str:
        return self.head + ", ".join(self._row(index) for index in range(size)) + self.tail

    def _row(self, index: int) -> str:
        if not self.numbered or index == 0:
            return self.group
        shift = index * self.columns
        return _NUMBERED.sub(lambda found: f"${int(found[1]) + shift}", self.group)


class PreparedRead:
    """A one-statement read compiled once per backend and handed straight to
    the driver: no statement built, no cache key computed, no SQLAlchemy
    connection wrapped around it per call. Every click's reply can make one,
    and those layers cost more than the indexed lookup itself.

    Only for results that need no conversion back (integers, counts): rows
    come back as the driver returns them."""

    def __init__(self, statement: Any, parameters: Sequence[str]) -> None:
        self._statement = statement
        self._parameters = list(parameters)
        self._prepared: dict[str, Prepared] = {}

    def _for(self, dialect: Dialect) -> Prepared:
        prepared = self._prepared.get(dialect.name)
        if prepared is None:
            prepared = Prepared(self._statement, dialect, self._parameters)
            self._prepared[dialect.name] = prepared
        return prepared

    async def rows(self, engine: AsyncEngine, values: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        prepared = self._for(engine.dialect)
        parameters = prepared.row(values)
        if engine.dialect.name == "sqlite":
            return await on_pooled_connection(
                engine, lambda db: _read_in_autocommit(db, prepared.sql, parameters)
            )
        # One round trip: no BEGIN and ROLLBACK around a single SELECT.
        return [tuple(row) for row in await autocommit.fetch(engine, prepared.sql, *parameters)]


def _read_in_autocommit(
    db: sqlite3.Connection, sql: str, parameters: tuple[Any, ...]
) -> list[tuple[Any, ...]]:
    """One SELECT outside a transaction is its own snapshot. A read cancelled
    half-way can return its connection still inside one (read connections
    skip the pool's ROLLBACK): end that first, or this would read its old
    snapshot."""
    if db.in_transaction:
        db.execute("ROLLBACK")
    return db.execute(sql, parameters).fetchall()
