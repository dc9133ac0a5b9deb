"""Question health: "Report a problem" on revealed questions, the moderators'
`/quiz reports` queue, and `/quiz health` over the item analysis kept at close
(bot/storage/item_analysis.py; the flags are bot/domain/item_analysis.py)."""

from __future__ import annotations

import logging

from bot.chat import Command, FormReply, FormSubmission, Interaction, OutMessage, Target
from bot.domain.item_analysis import MIN_REPORTS, ItemCounts, findings, severity
from bot.i18n import speaking
from bot.quiz import buttons, texts
from bot.quiz.context import Context
from bot.quiz.delivery import within_deadline
from bot.quiz.surface.spec import ButtonRoute, CommandSpec, FormRoute, Option, Pressed, Variant
from bot.quiz.texts.health import Judged
from bot.storage.reports import ReportInfo

log = logging.getLogger(__name__)

MAX_OPEN_REPORTS = 5  # per member and community
HEALTH_LIST = 10
_STATUS = {"dismiss": "dismissed", "fixed": "fixed", "remove": "removed"}


def parse_reason(value: str) -> str | None:
    """One of the reasons, from what was typed ("Wrong", "typo!", "wrong answer")."""
    words = "".join(c if c.isalnum() else " " for c in value.lower()).split()
    if not words:
        return None
    for reason in texts.health.REASONS:
        if reason.split()[0] == words[0]:
            return reason
    return None


class QuestionHealth:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.store = ctx.repository.reports

    # -- members --------------------------------------------------------------------

    async def report_form(self, click: Interaction, post_id: int) -> OutMessage:
        target = click.target
        if await self.store.post_question(post_id, target.platform, target.community) is None:
            return texts.health.not_revealed()
        return texts.health.report_form(buttons.REPORT_FORM.id(post_id))

    async def card_report_form(self, click: Interaction, session: int, step: int) -> OutMessage:
        target = click.target
        if await self.store.card_question(session, step, target.platform, click.user_id) is None:
            return texts.health.card_moved_on()
        return texts.health.report_form(buttons.REPORT_CARD_FORM.id(session, step))

    async def reported(self, form: FormSubmission, pressed: Pressed) -> FormReply:
        """A submitted report on a post (`qm:f:report`) or a review card."""
        reason = parse_reason(form.values.get("reason", ""))
        if reason is None:
            problem = texts.health.bad_reason(form.values.get("reason", ""))
            return FormReply({"reason": problem}, texts.common.private(problem))
        if pressed.kind is buttons.REPORT_CARD_FORM:
            question_id = await self.store.card_question(
                pressed.number("session"),
                pressed.number("step"),
                form.target.platform,
                form.user_id,
            )
            if question_id is None:
                return FormReply({}, texts.health.card_moved_on())
        else:
            question_id = await self.store.post_question(
                pressed.number("post"), form.target.platform, form.target.community
            )
            if question_id is None:
                return FormReply({}, texts.health.not_revealed())
        details = " ".join(form.values.get("text", "").split())[: texts.health.MAX_TEXT]
        target = form.target
        saved = await self.store.report(
            platform=target.platform,
            community=target.community,
            channel=target.channel,
            question_id=question_id,
            user_id=form.user_id,
            reason=reason,
            text=details or None,
            now=self.ctx.clock.now(),
            limit=MAX_OPEN_REPORTS,
        )
        if saved is None:
            return FormReply({}, texts.health.too_many_reports(MAX_OPEN_REPORTS))
        return FormReply({}, texts.health.reported(question_id))

    # -- moderators -------------------------------------------------------------------

    async def queue(
        self, target: Target, *, after: int | None = None, note: str = ""
    ) -> OutMessage:
        """The oldest open report, with its question's analysis and flags."""
        report, total = await self.store.oldest_open(target.platform, target.community, after)
        if report is None:
            return texts.health.no_reports(note)
        judged = await self.judge(target, report.question_id)
        dialect = self.ctx.connections.dialect(target)
        return texts.health.report_card(report, judged, total, dialect, note)

    async def resolve(self, click: Interaction, report_id: int, verb: str) -> OutMessage:
        target = click.target
        if verb == "skip":
            return await self.queue(target, after=report_id)
        status = _STATUS[verb]
        done = await self.store.resolve(
            target.platform,
            target.community,
            report_id,
            status,
            click.user_id,
            self.ctx.clock.now(),
        )
        if done is None:
            return await self.queue(target, note=texts.health.already_resolved())
        if status == "removed":
            self.ctx.questions.changed(target)
        # The reporter is not in this exchange: the community's language.
        with speaking(await self.ctx.channels.language(target)):
            told = texts.health.reporter_told(done, status)
        await self._tell_reporter(done, told)
        return await self.queue(target, note=texts.health.resolved_note(done, status))

    async def restore(self, target: Target, question_id: str) -> OutMessage:
        """Put a question a moderator removed back in this community's draw."""
        wanted = question_id.strip()
        await self.ctx.questions.ensure([wanted])
        if self.ctx.questions.question(wanted) is None:
            return texts.health.unknown_question(wanted)
        if not await self.store.restore(target.platform, target.community, wanted):
            return texts.health.not_withdrawn(wanted)
        self.ctx.questions.changed(target)
        return texts.health.restored(wanted)

    async def health(self, target: Target, question_id: str | None) -> OutMessage:
        dialect = self.ctx.connections.dialect(target)
        wanted = (question_id or "").strip()
        if wanted:
            await self.ctx.questions.ensure([wanted])
            if self.ctx.questions.question(wanted) is None:
                return texts.health.unknown_question(wanted)
            return texts.health.health_detail(await self.judge(target, wanted), dialect)
        # The worst ten by the flags stored at close (an index read, whatever
        # the history), with the reported questions, judged again here.
        reports = await self.store.open_reports(target.platform, target.community)
        reported = [q for q, n in reports.items() if n >= MIN_REPORTS]
        analyses = await self.store.worst(target.platform, target.community, HEALTH_LIST, reported)
        await self.ctx.questions.ensure([*analyses, *reported])
        judged = [
            self._judged(question_id, analyses.get(question_id), reports.get(question_id, 0))
            for question_id in {*analyses, *reported}
        ]
        flagged = [item for item in judged if item.found]
        flagged.sort(key=lambda item: (-severity(item.found), item.question_id))
        return texts.health.health_list(flagged[:HEALTH_LIST], dialect)

    async def every_question(self, platform: str, community: str) -> list[Judged]:
        """Every question this community may draw and every one it has answered,
        judged, in id order (`quizmaster questions health`)."""
        target = Target(platform, community, "")
        analyses = await self.store.analyses(platform, community)
        reports = await self.store.open_reports(platform, community)
        drawn = await self.ctx.questions.pool(target, None, None)
        await self.ctx.questions.ensure([*analyses, *reports])
        return [
            self._judged(question_id, analyses.get(question_id), reports.get(question_id, 0))
            for question_id in sorted({*drawn, *analyses, *reports})
        ]

    async def judge(self, target: Target, question_id: str) -> Judged:
        counts = await self.store.analysis(target.platform, target.community, question_id)
        reports = await self.store.open_reports(target.platform, target.community)
        return self._judged(question_id, counts, reports.get(question_id, 0))

    def _judged(self, question_id: str, counts: ItemCounts | None, reports: int) -> Judged:
        question = self.ctx.questions.question(question_id)
        found = []
        if question is not None:
            labels = [texts.health.option_label(question, n) for n in range(len(question.options))]
            empty = ItemCounts(0, 0, (0,) * 5, 0, 0, (0,) * 5, 0, 0, (0,) * 5)
            found = findings(
                counts or empty, len(question.options), question.answer_index, reports, labels
            )
        return Judged(question_id, question, counts, found, reports)

    async def _tell_reporter(self, report: ReportInfo, message: OutMessage) -> None:
        """A private word to the reporter; a closed DM is logged (the decision stands)."""
        adapter = self.ctx.connections.get(report.platform)
        if adapter is None:
            return
        where = Target(report.platform, report.community, report.channel)
        try:
            await within_deadline(adapter.send_direct(where, report.user_id, message))
        except Exception as error:
            log.info("could not tell %s about their report: %s", report.user_id, error)


async def _reports(health: QuestionHealth, command: Command) -> OutMessage:
    return await health.queue(command.target)


async def _health(health: QuestionHealth, command: Command) -> OutMessage:
    return await health.health(command.target, command.args.get("id"))


async def _restore(health: QuestionHealth, command: Command) -> OutMessage:
    return await health.restore(command.target, command.args.get("id", ""))


async def _report_clicked(
    health: QuestionHealth, click: Interaction, pressed: Pressed
) -> OutMessage:
    return await health.report_form(click, pressed.number("post"))


async def _review_clicked(
    health: QuestionHealth, click: Interaction, pressed: Pressed
) -> OutMessage:
    return await health.resolve(click, pressed.number("report"), pressed.verb)


async def _card_report_clicked(
    health: QuestionHealth, click: Interaction, pressed: Pressed
) -> OutMessage:
    return await health.card_report_form(click, pressed.number("session"), pressed.number("step"))


async def _report_sent(health: QuestionHealth, form: FormSubmission, pressed: Pressed) -> FormReply:
    return await health.reported(form, pressed)


COMMANDS = (
    # Its remove button takes a question out of the whole community's draw, and
    # its cards show members' words from every channel: a community moderator's.
    CommandSpec(
        "reports",
        QuestionHealth,
        _reports,
        (Variant(("reports",)),),
        moderator=True,
        community_wide=True,
    ),
    CommandSpec(
        "health",
        QuestionHealth,
        _health,
        (Variant(("health",), (Option("question", arg="id", placeholder="question-id"),)),),
        moderator=True,
    ),
    # Removal is per community, so is putting back: its moderators decide.
    CommandSpec(
        "restore",
        QuestionHealth,
        _restore,
        (
            Variant(
                ("restore",),
                (Option("question", arg="id", required=True, placeholder="question-id"),),
            ),
        ),
        moderator=True,
        community_wide=True,
    ),
)
BUTTONS = (
    ButtonRoute(buttons.REPORT, QuestionHealth, _report_clicked),
    ButtonRoute(buttons.REPORT_CARD, QuestionHealth, _card_report_clicked),
    ButtonRoute(buttons.REPORT_REVIEW, QuestionHealth, _review_clicked, "reports"),
)
FORMS = (
    FormRoute(buttons.REPORT_FORM, QuestionHealth, _report_sent),
    FormRoute(buttons.REPORT_CARD_FORM, QuestionHealth, _report_sent),
)
