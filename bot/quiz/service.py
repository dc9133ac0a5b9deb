"""The quiz service: the one object adapters, the runner, the CLI and the tests
hold. It builds the use cases and hands each entry point to its own:

- `live.LiveQuizzes`: start, stop, skip, next question, scoreboard;
- `answers.Answers`: the click path;
- `posting.Posting`: delivering and closing/revealing posts (live and daily);
- `scheduler.Scheduler`: daily questions and weekly leaderboards;
- `scores.Scores`: leaderboards, stats, streaks, forgetting a member;
- `review.Study`: review cards, `/quiz review` and the Anki export;
- `channels.ChannelSettings`: channel settings;
- `timers.Timers`: the timer loop;
- `submissions.Submissions`: member submissions and their review;
- `commands.Commands`: the `/quiz` command table.

Every use case that draws or shows questions gets `questions.Questions`: the
file banks (`catalog`) plus each community's own bank from the database.

Platform-neutral: it talks to adapters only through `bot.chat`. State lives in
the database (deadlines included), so a restart resumes where it stopped.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable

from bot.chat import Adapter, Command, FormReply, FormSubmission, Interaction, OutMessage, Target
from bot.clock import Clock
from bot.domain.records import ChannelInfo
from bot.domain.rules import is_valid_id
from bot.i18n import speaking, supported
from bot.metrics import Metrics, StateCounts
from bot.quiz import texts
from bot.quiz.answers import Answers
from bot.quiz.bank import Catalog
from bot.quiz.channels import ChannelSettings
from bot.quiz.commands import Commands, DashboardLinks, declared_surface
from bot.quiz.connections import Connections
from bot.quiz.context import Context, Wakeup
from bot.quiz.health import QuestionHealth
from bot.quiz.jobs import Jobs
from bot.quiz.live import LiveQuizzes
from bot.quiz.posting import Posting
from bot.quiz.questions import Questions
from bot.quiz.scheduler import Scheduler
from bot.quiz.scores import Scores
from bot.quiz.study import Study
from bot.quiz.submissions import Submissions
from bot.quiz.timers import DRAIN_SECONDS, Timers
from bot.storage.answer_writer import AnswerWriter
from bot.storage.repository import Repository

log = logging.getLogger(__name__)


class QuizService:
    def __init__(
        self,
        repository: Repository,
        catalog: Catalog,
        clock: Clock,
        rng: random.Random | None = None,
        links: DashboardLinks | None = None,
    ) -> None:
        self.repository = repository
        self.catalog = catalog
        self.clock = clock
        self.rng = rng or random.Random()
        self.metrics = Metrics()
        self.connections = Connections(self.metrics)
        self.metrics.watch_state(lambda: self.connections.adapters)
        self.jobs = Jobs()
        self.answer_writer = AnswerWriter(repository.answers, self.metrics)
        wakeup = Wakeup()
        self.questions = Questions(catalog, repository.submissions, clock, repository.reports)
        questions = self.questions
        self.channels = ChannelSettings(repository.channels, self.connections, clock)
        self.context = Context(
            repository,
            questions,
            clock,
            self.rng,
            self.connections,
            self.channels,
            wakeup,
            self.metrics,
        )
        context = self.context
        self.study = Study(context)
        self.scores = Scores(
            repository.scores,
            self.channels,
            questions,
            clock,
            self.study,
            repository.forget_member,
        )
        self.posting = Posting(context, self.scores, self.study)
        self.live = LiveQuizzes(context, self.posting)
        self.answers = Answers(context, self.answer_writer, self.posting)
        self.scheduler = Scheduler(context, self.posting, self.scores, self.jobs)
        self.timers = Timers(
            repository,
            clock,
            self.connections,
            self.jobs,
            self.posting,
            self.live,
            self.scheduler,
            self.study,
            self.answer_writer,
            wakeup,
        )
        self.submissions = Submissions(
            repository.submissions, questions, self.connections, clock, self.channels.language
        )
        self.health = QuestionHealth(context)
        # Each service has its own registry, so a feature (or a test) can add to it.
        self.surface = declared_surface()
        owners: list[object] = [
            self.live,
            self.answers,
            self.scores,
            self.study,
            self.channels,
            self.scheduler,
            self.submissions,
            self.health,
        ]
        self.commands = Commands(
            self.surface, self.channels, {type(owner): owner for owner in owners}, links
        )

    @property
    def adapters(self) -> dict[str, Adapter]:
        return self.connections.adapters

    def register(self, adapter: Adapter) -> None:
        self.connections.register(adapter)

    def on_quiz_end(self, listener: Callable[[Target], None]) -> None:
        """Call `listener(channel)` whenever a live quiz ends, however it ended."""
        self.live.on_quiz_end(listener)

    # -- entry points for adapters ----------------------------------------------

    async def handle_command(self, command: Command) -> OutMessage:
        """Run a `/quiz` command; the result is the private reply to its author."""
        if not _valid_ids(command.target, command.user_id):
            return texts.common.malformed_id()
        self.metrics.command(command, self.surface.commands)
        with speaking(await self.member_language(command.target, command.locale)):
            try:
                return await self.commands.run(command)
            except Exception:
                log.exception("command %s failed in %s", command.name, command.target)
                return texts.common.failure()

    async def handle_click(self, interaction: Interaction) -> OutMessage:
        """Record a button click; the result is the private reply to the clicker.

        When it returns, an answer that counted is committed; if storing failed,
        the reply says the answer did not count (clicking again is safe)."""
        if not _valid_ids(interaction.target, interaction.user_id):
            return texts.common.malformed_id()
        found = self.surface.button(interaction.custom_id)  # parsed once, here
        answer = found is not None and found[0].kind.answer
        if answer:
            self.metrics.click(interaction)
        with speaking(await self.member_language(interaction.target, interaction.locale)):
            try:
                return await self.commands.click(interaction, found)
            except Exception:
                log.exception("click %s failed in %s", interaction.custom_id, interaction.target)
                return texts.questions.answer_not_counted() if answer else texts.common.failure()

    async def handle_form(self, form: FormSubmission) -> FormReply:
        """A submitted form (a question, a rejection's reason)."""
        if not _valid_ids(form.target, form.user_id):
            return FormReply({}, texts.common.malformed_id())
        with speaking(await self.member_language(form.target, form.locale)):
            try:
                return await self.commands.form(form)
            except Exception:
                log.exception("form %s failed in %s", form.form_id, form.target)
                return FormReply({}, texts.common.failure())

    async def member_language(self, target: Target, locale: str | None) -> str:
        """A private reply's language: the member's own where we ship it, else
        the community's (a failed look-up must not cost the reply)."""
        own = supported(locale)
        if own is not None:
            return own
        try:
            return await self.channels.language(target)
        except Exception:
            log.warning("could not read the language of %s", target, exc_info=True)
            return "en"

    # -- a community's installation --------------------------------------------

    async def community_left(self, platform: str, community: str) -> None:
        """The bot was removed from a community (a workspace uninstalled it):
        nothing more is posted there until it is added again."""
        changed = await self.channels.community_left(
            platform, community, texts.settings.removed_from_community()
        )
        log.info("%s %s removed the bot: %d channels paused", platform, community, changed)

    async def community_back(self, platform: str, community: str) -> None:
        changed = await self.channels.community_back(platform, community)
        if changed:
            log.info("%s %s added the bot again: %d channels resumed", platform, community, changed)

    # -- shortcuts the console, benchmarks and tests use ----------------------------

    async def channel(self, target: Target) -> ChannelInfo:
        return await self.channels.channel(target)

    async def start(
        self,
        target: Target,
        user_id: str,
        *,
        questions: int | str | None = None,
        seconds: int | str | None = None,
        bank: str | None = None,
        tag: str | None = None,
        expected_players: int | None = None,
    ) -> OutMessage:
        return await self.live.start(
            target,
            user_id,
            questions=questions,
            seconds=seconds,
            bank=bank,
            tag=tag,
            expected_players=expected_players,
        )

    async def stop(self, target: Target) -> OutMessage:
        return await self.live.stop(target)

    async def stats(self, target: Target, user_id: str) -> OutMessage:
        return await self.scores.stats(target, user_id)

    # -- timers -------------------------------------------------------------------

    async def tick(self) -> None:
        await self.timers.tick()

    async def start_due_work(self) -> list[asyncio.Task[None]]:
        return await self.timers.start_due_work()

    async def run_timers(self) -> None:
        await self.timers.run()

    def wake(self) -> None:
        self.timers.wake()

    def shutdown(self) -> None:
        self.timers.shutdown()

    async def drain(self, seconds: float = DRAIN_SECONDS) -> None:
        await self.timers.drain(seconds)

    async def metrics_state(self) -> StateCounts:
        """What /metrics reads from the database at each scrape."""
        store = self.repository.dashboard
        return StateCounts(await store.open_questions(), await store.schedule_counts())

    def platforms_here(self) -> list[str]:
        return self.connections.platforms_here()


def _valid_ids(target: Target, user_id: str) -> bool:
    """Ids arrive from outside: refuse empty, overlong or unprintable ones
    before anything is stored under them."""
    return is_valid_id(user_id) and is_valid_id(target.channel) and is_valid_id(target.community)
