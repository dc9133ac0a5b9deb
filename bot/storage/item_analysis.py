"""Item analysis per question and community, kept at close (`question_analysis`).

Each close adds its post's answers: the count and right answers overall, the
votes per bank option, and the same in the upper and lower groups of that
post's answerers. The groups are the classical upper/lower 27 % method applied
to each post: its answerers ranked by their community record *before* the
post (right share smoothed as (right + 1) / (answers + 2), so a newcomer sits
in the middle; then more answers first, then user id). The close reads that
record from `community_scores` before adding the post to it; the recount
replays every community's closed posts in closing order (`closed_at`, then
post id) to arrive at the same rows, which `quizmaster db check` compares.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, NamedTuple

from sqlalchemy import (
    Connection,
    Float,
    Integer,
    and_,
    bindparam,
    case,
    cast,
    delete,
    func,
    insert,
    select,
    tuple_,
    update,
)

from bot.domain.item_analysis import OPTIONS, ItemCounts, findings, severity
from bot.storage.models import (
    Answer,
    Channel,
    ClosingPost,
    CommunityScore,
    Post,
    QuestionAnalysis,
)
from bot.storage.sql import insert_for

GROUP_SHARE = 0.27
MIN_GROUPED = 4  # fewer answerers than this: nobody is put in a group

COUNT_COLUMNS = (
    "answered",
    "correct",
    *(f"option_{n}" for n in range(OPTIONS)),
    "upper_answered",
    "upper_correct",
    *(f"upper_{n}" for n in range(OPTIONS)),
    "lower_answered",
    "lower_correct",
    *(f"lower_{n}" for n in range(OPTIONS)),
)
KEY_COLUMNS = ("platform", "community", "question_id")
JUDGED_COLUMNS = ("options", "answer", "severity", "flags")

AnalysisKey = tuple[str, str, str]  # platform, community, question


class PostAnswer(NamedTuple):
    """One answer of a closing post, with its answerer's record before the post
    (a tuple: a close makes one per answer, 10,000 at once)."""

    user_id: str
    option: int  # in bank order
    correct: bool
    prior_correct: int
    prior_answered: int


def group_size(answerers: int) -> int:
    return 0 if answerers < MIN_GROUPED else max(1, round(GROUP_SHARE * answerers))


def post_counts(answers: Sequence[PostAnswer]) -> list[int]:
    """What one post adds to its row, in COUNT_COLUMNS order."""
    ranked = sorted(
        answers,
        key=lambda a: (
            -(a.prior_correct + 1) / (a.prior_answered + 2),
            -a.prior_answered,
            a.user_id,
        ),
    )
    size = group_size(len(ranked))
    upper, lower = ranked[:size], ranked[len(ranked) - size :] if size else []
    return [*_tally(_each(ranked)), *_tally(_each(upper)), *_tally(_each(lower))]


def _each(answers: Sequence[PostAnswer]) -> Iterator[tuple[int, bool, int]]:
    return ((answer.option, answer.correct, 1) for answer in answers)


def _tally(answers: Iterable[tuple[int, bool, int]]) -> list[int]:
    """[answered, right, votes per bank option] of (option, right, how many)."""
    tally = [0] * (2 + OPTIONS)
    for option, right, count in answers:
        tally[0] += count
        tally[1] += count if right else 0
        if 0 <= option < OPTIONS:
            tally[2 + option] += count
    return tally


def _bank_option(order: Sequence[int], slot: int) -> int:
    return order[slot] if 0 <= slot < len(order) else -1


def judged(counts: Sequence[int], options: int, answer: int) -> tuple[int, str]:
    """The severity and flags (reports aside) a row's counts earn, stored with it."""
    found = findings(to_counts(counts), options, answer, 0, list("ABCDE"[:options]))
    return severity(found), ", ".join(f.flag.value for f in found)


# -- kept at close (bot/storage/closing.py) -----------------------------------------------


@dataclass(frozen=True, slots=True)
class PostAnalysis:
    """What one closing post adds to its question's row."""

    platform: str
    community: str
    question_id: str
    counts: dict[str, int]
    options: int
    answer: int


def count_post(
    connection: Connection, post_id: int, platform: str, community: str
) -> PostAnalysis | None:
    """What a closing post adds to its question's row, counted by the
    database: its answerers ranked by their record before the post (read
    before the post's answers reach `community_scores`), grouped and
    tallied per slot, a few dozen rows back instead of every answer and
    record. Fetching and ranking 10,000 answerers in Python held the GIL
    (and on PostgreSQL the event loop) 15-28 ms at the start of every big
    close. The ranking is `post_counts`'s, which the recount replays; only
    reads, so it runs outside SQLite's write lock. None without answers."""
    statements = _statements(connection.dialect.name)
    values: dict[str, Any] = {"post_id": post_id, "platform": platform, "community": community}
    question_id, order, correct_slot, answered = connection.execute(statements.order, values).one()
    if not answered:
        return None
    size = group_size(answered)
    parts = connection.execute(statements.parts, {**values, "size": size, "lower": answered - size})
    groups: dict[int, list[tuple[int, bool, int]]] = {_ALL: [], _UPPER: [], _LOWER: []}
    for part, slot, right, count in parts:
        entry = (_bank_option(order, slot), bool(right), count)
        groups[_ALL].append(entry)
        if part != _ALL:
            groups[part].append(entry)
    counts = [*_tally(groups[_ALL]), *_tally(groups[_UPPER]), *_tally(groups[_LOWER])]
    return PostAnalysis(
        platform,
        community,
        question_id,
        dict(zip(COUNT_COLUMNS, counts, strict=True)),
        len(order),
        _bank_option(order, correct_slot),
    )


# The groups `_parts` puts each answer in (neither group counts in all only).
_ALL, _UPPER, _LOWER = 0, 1, 2


def add_post_analysis(connection: Connection, post: PostAnalysis) -> None:
    """Add a post's counts to its question's row and judge the row again."""
    statements = _statements(connection.dialect.name)
    layout = {"options": post.options, "answer": post.answer}
    key = {"platform": post.platform, "community": post.community, "question_id": post.question_id}
    added = connection.execute(
        statements.add, {**key, **post.counts, **layout, "severity": 0, "flags": ""}
    )
    *total, stored_severity, stored_flags = added.one()
    grade, flags = judged(total, post.options, post.answer)
    if (grade, flags) == (stored_severity, stored_flags):
        return  # judged the same as before: most closes of a settled question
    connection.execute(
        statements.judge,
        {
            "key_platform": post.platform,
            "key_community": post.community,
            "key_question": post.question_id,
            "new_severity": grade,
            "new_flags": flags,
        },
    )


@dataclass(frozen=True)
class _Statements:
    order: Any
    parts: Any
    add: Any
    judge: Any


@cache
def _statements(dialect: str) -> _Statements:
    """Built once per backend. The answerers' records are read apart from the
    answers, as a semi-join that every plan serves from an index (the answers'
    (post, user) key or the scores' own): a join of the two left PostgreSQL's
    planner, with a community's scores just written and not yet analysed,
    nesting a scan of them inside every answer (9 s for 10,000)."""
    answers = Answer.__table__.c
    answered = select(func.count()).where(answers.post_id == bindparam("post_id"))
    return _Statements(
        order=select(
            Post.question_id, Post.option_order, Post.correct_slot, answered.scalar_subquery()
        ).where(Post.id == bindparam("post_id")),
        parts=_parts(dialect),
        add=_add_statement(dialect),
        judge=update(QuestionAnalysis)
        .where(
            QuestionAnalysis.platform == bindparam("key_platform"),
            QuestionAnalysis.community == bindparam("key_community"),
            QuestionAnalysis.question_id == bindparam("key_question"),
        )
        .values(severity=bindparam("new_severity"), flags=bindparam("new_flags")),
    )


def _parts(dialect: str) -> Any:
    """(group, slot, right, answers) of a post: its answerers ranked as
    `post_counts` ranks them (right share smoothed, more answers, user id in
    code point order: PostgreSQL's "C" collation, SQLite's own), the first
    `size` the upper group and those after `lower` the lower one."""
    scores = CommunityScore.__table__.c
    answers = Answer.__table__.c
    if dialect == "postgresql":
        # Materialized, then hashed: a plain join let PostgreSQL's planner,
        # with a community's scores just written and not yet analysed, nest a
        # scan of them inside every answer (9 s for 10,000); the semi-join is
        # served from an index.
        records: Any = (
            select(scores.user_id, scores.correct, scores.answered)
            .where(
                scores.platform == bindparam("platform"),
                scores.community == bindparam("community"),
                scores.user_id.in_(
                    select(answers.user_id).where(answers.post_id == bindparam("post_id"))
                ),
            )
            .cte("records")
            .prefix_with("MATERIALIZED")
        )
        joined = records.c.user_id == answers.user_id
        user: Any = answers.user_id.collate("C")
    else:
        # SQLite looks each answerer up by the scores' key (a materialized
        # CTE has no index here: 10,000 x 10,000 comparisons, 8 s).
        records = CommunityScore.__table__
        joined = and_(
            scores.platform == bindparam("platform"),
            scores.community == bindparam("community"),
            scores.user_id == answers.user_id,
        )
        user = answers.user_id
    right = func.coalesce(records.c.correct, 0)
    taken = func.coalesce(records.c.answered, 0)
    place = func.row_number().over(
        order_by=[(cast(right + 1, Float) / cast(taken + 2, Float)).desc(), taken.desc(), user]
    )
    ranked = (
        select(
            case(
                (place <= bindparam("size", type_=Integer), _UPPER),
                (place > bindparam("lower", type_=Integer), _LOWER),
                else_=_ALL,
            ).label("part"),
            answers.slot,
            answers.correct,
        )
        .select_from(Answer.__table__.outerjoin(records, joined))
        .where(answers.post_id == bindparam("post_id"))
        .subquery()
    )
    return select(ranked.c.part, ranked.c.slot, ranked.c.correct, func.count()).group_by(
        ranked.c.part, ranked.c.slot, ranked.c.correct
    )


@cache
def _add_statement(dialect: str) -> Any:
    stmt = insert_for(dialect, QuestionAnalysis)
    row, new = QuestionAnalysis.__table__.c, stmt.excluded
    return stmt.on_conflict_do_update(
        index_elements=list(KEY_COLUMNS),
        set_={
            **{name: row[name] + new[name] for name in COUNT_COLUMNS},
            # The latest close's layout: a bank's fixed key judges from now on.
            "options": new.options,
            "answer": new.answer,
        },
    ).returning(*(row[name] for name in COUNT_COLUMNS), row.severity, row.flags)


# -- replayed from the answers -------------------------------------------------------------


# Closed posts a sliced close has not added to the analysis yet (its step 0):
# left out here as in the table, and added by their close.
_not_analysed = select(ClosingPost.post_id).where(ClosingPost.step == 0)


def _replay(
    connection: Connection,
    communities: Sequence[tuple[str, str]] | None,
    *,
    pending_left_out: bool = True,
) -> dict[AnalysisKey, list[Any]]:
    """Every row the answers say, for these (platform, community) pairs or all:
    the closed posts in closing order, each ranked by the records before it
    (without the posts a close has not analysed yet, unless there can be none:
    migration 0014 runs before their table exists)."""
    query = (
        select(
            Post.id,
            Channel.platform,
            Channel.community,
            Post.question_id,
            Post.option_order,
            Post.correct_slot,
            Answer.user_id,
            Answer.slot,
            Answer.correct,
        )
        .join(Post, Post.id == Answer.post_id)
        .join(Channel, Channel.id == Post.channel_id)
        .where(Post.closed_at.is_not(None))
        .order_by(Post.closed_at, Post.id)
    )
    if pending_left_out:
        query = query.where(Post.id.not_in(_not_analysed))
    if communities is not None:
        query = query.where(tuple_(Channel.platform, Channel.community).in_(list(communities)))
    records: dict[tuple[str, str, str], tuple[int, int]] = {}
    rows: dict[AnalysisKey, list[int]] = {}
    layouts: dict[AnalysisKey, tuple[int, int]] = {}
    for post in _by_post(connection.execute(query, execution_options={"yield_per": 5_000})):
        platform, community, question_id = post[0][1], post[0][2], post[0][3]
        order, correct_slot = post[0][4], post[0][5]
        answers = []
        for *_, user, slot, right in post:
            prior = records.get((platform, community, user), (0, 0))
            answers.append(PostAnswer(user, _bank_option(order, slot), bool(right), *prior))
        counts = post_counts(answers)
        key = (platform, community, question_id)
        held = rows.get(key)
        rows[key] = counts if held is None else [a + b for a, b in zip(held, counts, strict=True)]
        layouts[key] = (len(order), _bank_option(order, correct_slot))
        for answer in answers:  # the post now counts in its answerers' records
            record = (platform, community, answer.user_id)
            right, answered = records.get(record, (0, 0))
            records[record] = (right + answer.correct, answered + 1)
    return {
        key: [*counts, *layouts[key], *judged(counts, *layouts[key])]
        for key, counts in rows.items()
    }


def _by_post(rows: Iterable[Any]) -> Iterator[list[Any]]:
    current: list[Any] = []
    for row in rows:
        if current and row[0] != current[0][0]:
            yield current
            current = []
        current.append(row)
    if current:
        yield current


def expected_and_stored(
    connection: Connection,
) -> tuple[str, dict[AnalysisKey, tuple[Any, ...]], dict[AnalysisKey, tuple[Any, ...]]]:
    """The table's name, its rows as the answers say and as stored (`db check`)."""
    wanted = {key: tuple(counts) for key, counts in _replay(connection, None).items()}
    return "question_analysis", wanted, _stored(connection)


def _stored(connection: Connection) -> dict[AnalysisKey, tuple[Any, ...]]:
    table = QuestionAnalysis.__table__.c
    columns = [table[name] for name in (*KEY_COLUMNS, *COUNT_COLUMNS, *JUDGED_COLUMNS)]
    return {
        (row[0], row[1], row[2]): (*(int(n) for n in row[3:-1]), row[-1])
        for row in connection.execute(select(*columns))
    }


def _write(connection: Connection, rows: dict[AnalysisKey, list[Any]]) -> None:
    values = [
        dict(zip((*KEY_COLUMNS, *COUNT_COLUMNS, *JUDGED_COLUMNS), (*key, *counts), strict=True))
        for key, counts in rows.items()
    ]
    for start in range(0, len(values), 2_000):
        connection.execute(insert(QuestionAnalysis), values[start : start + 2_000])


def backfill_analysis(connection: Connection) -> None:
    """Replace every row with the replay (migration 0014, `quizmaster db rebuild`)."""
    connection.execute(delete(QuestionAnalysis))
    _write(connection, _replay(connection, None, pending_left_out=False))


def recount_communities(connection: Connection, communities: Sequence[tuple[str, str]]) -> None:
    """Replay these communities again (after forget-me removed a member's
    answers, which moves others between groups)."""
    if not communities:
        return
    table = QuestionAnalysis.__table__.c
    connection.execute(
        delete(QuestionAnalysis).where(
            tuple_(table.platform, table.community).in_(list(communities))
        )
    )
    _write(connection, _replay(connection, communities))


# -- read --------------------------------------------------------------------------------


def to_counts(row: Any) -> ItemCounts:
    """A `question_analysis` row (its COUNT_COLUMNS after the key) as counts."""
    n = OPTIONS
    values = [int(v) for v in row]
    return ItemCounts(
        answered=values[0],
        correct=values[1],
        votes=tuple(values[2 : 2 + n]),
        upper_answered=values[2 + n],
        upper_correct=values[3 + n],
        upper_votes=tuple(values[4 + n : 4 + 2 * n]),
        lower_answered=values[4 + 2 * n],
        lower_correct=values[5 + 2 * n],
        lower_votes=tuple(values[6 + 2 * n : 6 + 3 * n]),
    )
