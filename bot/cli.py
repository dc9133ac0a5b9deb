"""The `quizmaster` command line."""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from pydantic import ValidationError

from bot.adapters.console import texts as say
from bot.config import Settings, describe_errors, load_settings
from bot.domain.rules import MAX_QUESTIONS, MAX_SECONDS, MIN_QUESTIONS, MIN_SECONDS
from bot.domain.spaced_repetition import MAX_REVIEW_COUNT, MIN_REVIEW_COUNT
from bot.i18n import from_environment, speak_by_default
from bot.quiz import texts

T = TypeVar("T")

# Help on a bare command and on -h as well as --help; errors in plain lines.
_HELP = {"help_option_names": ["-h", "--help"]}
app = typer.Typer(
    help="Quizmaster: a quiz-master bot for Discord, Slack and the terminal.",
    context_settings=_HELP,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
questions_app = typer.Typer(
    help="Validate, list, export and import question banks.", context_settings=_HELP
)
db_app = typer.Typer(help="Database maintenance.", context_settings=_HELP)
export_app = typer.Typer(
    help="Export a member's questions for study elsewhere.", context_settings=_HELP
)


def _help_when_bare(ctx: typer.Context) -> None:
    """A command group typed alone asks what it can do: its help, exit 0."""
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())
        raise typer.Exit(0)


for _group in (app, questions_app, db_app, export_app):
    _group.callback(invoke_without_command=True)(_help_when_bare)
app.add_typer(questions_app, name="questions")
app.add_typer(db_app, name="db")
app.add_typer(export_app, name="export")


def _settings() -> Settings:
    try:
        return load_settings()
    except ValidationError as error:
        for line in describe_errors(error):
            typer.echo(f"Bad setting {line}", err=True)
        raise typer.Exit(2) from None


def _usage(problem: str) -> typer.Exit:
    """A usage error: one line, exit 2."""
    typer.echo(problem, err=True)
    return typer.Exit(2)


def _nothing_to_do(problem: str) -> typer.Exit:
    typer.echo(problem, err=True)
    return typer.Exit(1)


def _check_range(flag: str, value: int, low: int, high: int) -> None:
    if not low <= value <= high:
        raise _usage(say.flag_out_of_range(flag, value, low, high))


def _check_platform(name: str) -> None:
    from bot.platforms import PLATFORMS

    known = [package.NAME for package in PLATFORMS] + ["console"]
    if name not in known:
        raise _usage(say.unknown_platform(name, known))


def _check_choice(settings: Settings, bank: str | None, tag: str | None) -> None:
    """What `play` would find to ask, checked before a database is opened: no banks
    at all is nothing to do (1); an unknown bank or tag is a usage error (2)."""
    from bot.quiz.bank import load_banks

    catalog, _ = load_banks([settings.questions_dir], log_problems=False)
    if not catalog.banks:
        raise _nothing_to_do(say.no_banks(str(settings.questions_dir)))
    if bank is not None and bank not in catalog.banks and bank != "community":
        raise _usage(say.unknown_bank(bank, sorted(catalog.banks)))
    banks = [catalog.banks[bank]] if bank in catalog.banks else list(catalog.banks.values())
    tags = sorted({t for b in banks for q in b.questions for t in q.tags})
    if tag is not None and tag not in tags and bank != "community":
        raise _usage(say.unknown_tag(tag, tags))


def _cannot_start(problem: str) -> typer.Exit:
    """Say why start-up failed, in one line, and exit 2."""
    typer.echo(f"Cannot start: {problem}", err=True)
    return typer.Exit(2)


def _run_on_database(settings: Settings, main: Coroutine[Any, Any, T]) -> T:
    """Run `main`; a database that cannot be reached or written (or any other
    start-up problem) ends it in one line."""
    from bot.platforms import StartError
    from bot.storage.db import describe_database_error

    try:
        return asyncio.run(main)
    except StartError as error:
        raise _cannot_start(str(error)) from None
    except Exception as error:
        problem = describe_database_error(error, settings.resolved_database_url)
        if problem is None:
            raise
        raise _cannot_start(problem) from None


def _logging(settings: Settings, *, quiet: bool = False) -> None:
    """Log to stderr; `quiet` keeps a terminal game free of INFO lines unless debugging."""
    level = "WARNING" if quiet and settings.log_level != "DEBUG" else settings.log_level
    logging.basicConfig(
        level=level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    if settings.log_level != "DEBUG":
        # Each migration's INFO line is detail for debugging, not for every start.
        logging.getLogger("alembic").setLevel(logging.WARNING)


@app.command()
def run() -> None:
    """Start every platform whose credentials are set, plus GET /healthz."""
    from bot.runner import run_bot

    settings = _settings()
    _logging(settings)
    raise typer.Exit(asyncio.run(run_bot(settings)))


@app.command()
def play(
    questions: Annotated[int, typer.Option(help="How many questions (1–50)")] = 5,
    seconds: Annotated[int, typer.Option(help="Seconds per question (2–3600)")] = 30,
    bank: Annotated[str | None, typer.Option(help="Only this bank id")] = None,
    tag: Annotated[str | None, typer.Option(help="Only questions with this tag")] = None,
) -> None:
    """Play a live quiz in the terminal; your stats are kept between runs."""
    from bot.adapters.console.frontends import play as play_quiz
    from bot.runner import open_runtime

    _check_range("--questions", questions, MIN_QUESTIONS, MAX_QUESTIONS)
    _check_range("--seconds", seconds, MIN_SECONDS, MAX_SECONDS)
    settings = _settings()
    _logging(settings, quiet=True)
    _check_choice(settings, bank, tag)

    async def main() -> int:
        async with open_runtime(settings) as runtime:
            return await play_quiz(
                runtime.service,
                questions=questions,
                seconds=seconds,
                bank=bank,
                tag=tag,
                start_line=runtime.start_line(),
            )

    raise typer.Exit(_run_on_database(settings, main()))


@app.command()
def review(
    count: Annotated[int, typer.Option(help="How many cards at most (1–50)")] = 10,
) -> None:
    """Review your due questions in the terminal (platform console, user local)."""
    from bot.adapters.console.frontends import review as review_cards
    from bot.runner import open_runtime

    _check_range("--count", count, MIN_REVIEW_COUNT, MAX_REVIEW_COUNT)
    settings = _settings()
    _logging(settings, quiet=True)

    async def main() -> int:
        async with open_runtime(settings) as runtime:
            return await review_cards(runtime.service, count=count)

    raise typer.Exit(_run_on_database(settings, main()))


@export_app.command("anki")
def export_anki(
    platform: Annotated[str, typer.Option(help="discord, slack or console")],
    user: Annotated[str, typer.Option(help="The member's platform user id (console: local)")],
    out: Annotated[Path, typer.Option(help="The .apkg file to write")],
    every: Annotated[
        bool, typer.Option("--all", help="Every answered question, not only the missed ones")
    ] = False,
) -> None:
    """Write a member's missed (or all answered) questions as an Anki package."""
    from bot.runner import open_runtime

    _check_platform(platform)
    settings = _settings()
    _logging(settings, quiet=True)

    async def main() -> tuple[int, bytes]:
        async with open_runtime(settings) as runtime:
            return await runtime.service.study.package(platform, user, every=every)

    count, data = _run_on_database(settings, main())
    if not count:
        raise _nothing_to_do(say.nothing_to_export(every))
    try:
        out.write_bytes(data)
    except OSError as error:
        typer.echo(f"Cannot write {out}: {error.strerror or error}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"Wrote {count} question(s) to {out}.")


@app.command("forget-user")
def forget_user(
    platform: Annotated[str, typer.Argument(help="discord, slack or console")],
    user_id: Annotated[str, typer.Argument(help="The member's platform user id")],
) -> None:
    """Delete every answer, statistic, review card and submission of one member."""
    from bot.storage.db import open_database, upgrade
    from bot.storage.repository import Repository

    _check_platform(platform)
    settings = _settings()

    async def main() -> int:
        database = open_database(settings.resolved_database_url)
        try:
            await upgrade(database.writer)
            repository = Repository(database)
            return await repository.forget_member(platform, user_id)
        finally:
            await database.dispose()

    deleted = _run_on_database(settings, main())
    typer.echo(f"Deleted {deleted} answer(s) of {platform} user {user_id}.")


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Create or upgrade the database schema."""
    from bot.storage.db import create_engine, upgrade

    settings = _settings()

    async def main() -> None:
        engine = create_engine(settings.resolved_database_url)
        try:
            await upgrade(engine)
        finally:
            await engine.dispose()

    _run_on_database(settings, main())
    typer.echo("Database is up to date.")


@db_app.command("check")
def db_check() -> None:
    """Recompute leaderboards, stats and streaks from the answers and report any
    difference from the stored read models (exit 1 if there is one)."""
    from bot.storage.db import (
        NoDatabase,
        check_read_models,
        current_revision,
        head_revision,
        open_database,
    )

    settings = _settings()
    url = settings.resolved_database_url

    async def main() -> tuple[list[str], int] | str:
        # A check never writes: an unmigrated (or missing) database is refused.
        try:
            revision = await current_revision(url)
        except NoDatabase as missing:
            return say.no_database(str(missing))
        if revision != head_revision():
            return say.not_migrated(revision, head_revision())
        database = open_database(url)
        try:
            # On SQLite a read-only snapshot: a running bot keeps writing meanwhile.
            return await check_read_models(database.reader)
        finally:
            await database.dispose()

    checked = _run_on_database(settings, main())
    if isinstance(checked, str):
        typer.echo(checked, err=True)
        raise typer.Exit(2)
    lines, total = checked
    for line in lines:
        typer.echo(line)
    if total:
        typer.echo(f"{total} difference(s) between the read models and the answers.", err=True)
        typer.echo("`quizmaster db rebuild` recomputes them from the answers.", err=True)
        raise typer.Exit(1)
    typer.echo("Read models match the answers.")


@db_app.command("rebuild")
def db_rebuild() -> None:
    """Recompute every leaderboard, stats and streak row from the answers."""
    from bot.storage.db import create_engine, rebuild_read_models, upgrade

    settings = _settings()

    async def main() -> None:
        engine = create_engine(settings.resolved_database_url)
        try:
            await upgrade(engine)
            await rebuild_read_models(engine)
        finally:
            await engine.dispose()

    _run_on_database(settings, main())
    typer.echo("Read models rebuilt from the answers.")


def _bank_paths(paths: list[Path] | None) -> list[Path]:
    return paths or [_settings().questions_dir]


def _community_banks() -> list[dict[str, Any]]:
    """Every community's accepted submissions, from the database (none when the
    SQLite file does not exist yet: listing banks never creates a database).
    A database that cannot be read is reported on stderr; the files still list."""
    from sqlalchemy.engine import make_url

    from bot.quiz.questions import export_community
    from bot.storage.db import open_database, upgrade
    from bot.storage.repository import Repository

    settings = _settings()
    url = make_url(settings.resolved_database_url)
    if url.get_backend_name() == "sqlite" and not Path(url.database or "").exists():
        return []

    async def main() -> list[dict[str, Any]]:
        database = open_database(settings.resolved_database_url)
        try:
            await upgrade(database.writer)
            return export_community(await Repository(database).submissions.all_community_banks())
        finally:
            await database.dispose()

    try:
        return asyncio.run(main())
    except Exception as error:
        typer.echo(f"community banks not listed: {error}", err=True)
        return []


@questions_app.command("validate")
def questions_validate(
    paths: Annotated[list[Path] | None, typer.Argument(help="Files or folders")] = None,
) -> None:
    """Check bank files; exit 1 listing every problem."""
    from bot.quiz.bank import load_banks

    folders = _bank_paths(paths)
    catalog, problems = load_banks(folders, log_problems=False)  # printed here
    if not catalog.banks and not problems:
        raise _nothing_to_do(say.nothing_to_validate([str(folder) for folder in folders]))
    for problem in problems:
        typer.echo(str(problem), err=True)
    count = sum(len(bank.questions) for bank in catalog.banks.values())
    typer.echo(
        f"{len(catalog.banks)} bank(s), {count} question(s) valid; {len(problems)} problem(s)."
    )
    if problems:
        raise typer.Exit(1)


@questions_app.command("lint")
def questions_lint(
    paths: Annotated[list[Path] | None, typer.Argument(help="Files or folders")] = None,
    warn_only: Annotated[
        bool, typer.Option("--warn-only", help="Report findings but exit 0")
    ] = False,
) -> None:
    """What a reviewer would flag in each question before anyone answers it;
    exit 1 on findings (a `<bank>.lint` file beside a bank lists kept ones)."""
    from bot.quiz.bank import load_banks
    from bot.quiz.lint import REVIEWED_SUFFIX, lint, reviewed

    catalog, problems = load_banks(_bank_paths(paths), log_problems=False)
    for problem in problems:
        typer.echo(str(problem), err=True)
    found = kept = 0
    for bank in catalog.banks.values():
        beside = bank.path.with_suffix(REVIEWED_SUFFIX)
        known = reviewed(beside.read_text(encoding="utf-8")) if beside.is_file() else set()
        for finding in lint(bank.questions):
            if (finding.question_id, finding.rule) in known:
                kept += 1
                continue
            found += 1
            typer.echo(f"{bank.path.name}: {finding.line()}")
    count = sum(len(bank.questions) for bank in catalog.banks.values())
    note = f" ({kept} kept by review)" if kept else ""
    typer.echo(f"{count} question(s) linted: {found} finding(s){note}, {len(problems)} problem(s).")
    if (found or problems) and not warn_only:
        raise typer.Exit(1)


@questions_app.command("health")
def questions_health(
    platform: Annotated[str, typer.Option(help="discord, slack or console")],
    community: Annotated[str, typer.Option(help="The server or workspace id (console: local)")],
    csv_out: Annotated[
        bool, typer.Option("--csv", help="CSV on stdout, for a spreadsheet")
    ] = False,
) -> None:
    """Every question's item analysis in one community, for bank authors:
    answers, share right, discrimination, option shares and flags."""
    import csv

    from bot.runner import open_runtime

    settings = _settings()
    _logging(settings, quiet=True)

    async def main() -> list[list[str]]:
        async with open_runtime(settings) as runtime:
            judged = await runtime.service.health.every_question(platform, community)
            return [texts.health.table_row(item) for item in judged]

    rows = _run_on_database(settings, main())
    if not rows:
        typer.echo(texts.health.nothing_answered(platform, community), err=True)
        raise typer.Exit(1)
    if csv_out:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(texts.health.TABLE_COLUMNS)
        writer.writerows(rows)
        return
    for row in [list(texts.health.TABLE_COLUMNS), *rows]:
        typer.echo("\t".join(row))


@questions_app.command("list")
def questions_list() -> None:
    """List the loaded banks with their question counts and tags."""
    from bot.quiz.bank import load_banks

    catalog, problems = load_banks(_bank_paths(None), log_problems=False)  # printed below
    for bank in catalog.banks.values():
        tags = sorted({tag for q in bank.questions for tag in q.tags})
        typer.echo(
            f"{bank.id}\t{len(bank.questions)} questions\t{bank.title}\ttags: {', '.join(tags)}"
        )
    for community in _community_banks():
        tags = sorted({tag for q in community["questions"] for tag in q["tags"]})
        typer.echo(
            f"{community['id']}\t{len(community['questions'])} questions\t{community['title']} "
            f"({community['platform']} {community['community']})\ttags: {', '.join(tags)}"
        )
    for problem in problems:
        typer.echo(f"skipped: {problem}", err=True)


@questions_app.command("schema")
def questions_schema() -> None:
    """Print the JSON Schema of the bank format (for editors)."""
    from bot.quiz.bank import json_schema

    typer.echo(json_schema())


@questions_app.command("export")
def questions_export(
    format: Annotated[str, typer.Option("--format", help="Only json is supported")] = "json",
) -> None:
    """Print every bank with its answers as JSON."""
    from bot.quiz.bank import export, load_banks

    if format != "json":
        typer.echo(f"Unknown format {format!r}; use json.", err=True)
        raise typer.Exit(2)
    catalog, _ = load_banks(_bank_paths(None))
    exported = export(catalog)
    exported["banks"].extend(_community_banks())
    typer.echo(json.dumps(exported, indent=2, ensure_ascii=False))


@questions_app.command("import")
def questions_import(
    file: Annotated[Path, typer.Argument(help="The file to import")],
    format: Annotated[str, typer.Option("--format", help="opentdb, aiken, gift, csv, red or json")],
    bank: Annotated[str, typer.Option("--bank", help="Id of the new bank")],
    title: Annotated[str | None, typer.Option(help="Title of the new bank")] = None,
    out: Annotated[
        Path | None, typer.Option(help="Write the bank here (default: standard output)")
    ] = None,
    encoding: Annotated[str, typer.Option(help="The file's text encoding")] = "utf-8",
    field_encoding: Annotated[
        str,
        typer.Option(
            help="opentdb only: how each field is encoded (auto, html, url3986, urllegacy, "
            "base64; auto detects it)"
        ),
    ] = "auto",
    force: Annotated[bool, typer.Option(help="Replace --out if it exists")] = False,
) -> None:
    """Turn another quiz format into one bank file; report each question skipped and why
    (exit 1 only if none could be imported)."""
    from bot.quiz.importers import BadArguments, ImportFailed, import_file

    if out is not None and out.exists() and not force:
        typer.echo(f"{out} exists; pass --force to replace it.", err=True)
        raise typer.Exit(2)
    try:
        result = import_file(file, format, bank, title, encoding, field_encoding)
    except BadArguments as error:
        typer.echo(f"Cannot import: {error}.", err=True)
        raise typer.Exit(2) from None
    except ImportFailed as error:
        typer.echo(f"Nothing imported: {error}", err=True)
        raise typer.Exit(1) from None
    for skipped in result.skipped:
        typer.echo(f"skipped {skipped}", err=True)
    for note in result.notes:
        typer.echo(f"note: {note}", err=True)
    summary = f"{result.imported} question(s) imported, {len(result.skipped)} skipped"
    if result.bank is not None:
        _warn_if_bank_id_taken(bank, out)
    if result.bank is None:
        typer.echo(f"Nothing imported from {file}: {summary}.", err=True)
        raise typer.Exit(1)
    if out is None:
        typer.echo(result.yaml_text, nl=False)
        typer.echo(f"{summary}.", err=True)
        return
    try:
        _write_atomically(out, result.yaml_text)
    except OSError as error:
        typer.echo(f"Cannot write {out}: {error.strerror or error}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"Wrote bank {bank} to {out}: {summary}.")
    if out.suffix not in (".yaml", ".yml"):
        typer.echo("note: the bot loads only .yaml and .yml files from a folder.", err=True)


def _warn_if_bank_id_taken(bank_id: str, out: Path | None) -> None:
    """Two banks with one id: the bot would load only the first, so say so now."""
    from bot.quiz.bank import load_banks

    try:
        folder = load_settings().questions_dir
    except ValidationError:  # bad settings do not stop an import
        return
    catalog, _ = load_banks([folder], log_problems=False)
    taken = catalog.banks.get(bank_id)
    if taken is not None and (out is None or taken.path.resolve() != out.resolve()):
        typer.echo(
            f"note: bank id {bank_id} is already used by {taken.path}; "
            "the bot loads only one bank per id",
            err=True,
        )


def _write_atomically(path: Path, text: str) -> None:
    """A reader (or a bot loading banks) never sees half a file."""
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)


def main() -> None:
    # Let SIGTERM unwind like Ctrl-C where no loop handler is installed yet.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    # The terminal game speaks the terminal's language (LANG, LANGUAGE).
    speak_by_default(from_environment())
    app()
