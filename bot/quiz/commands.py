"""The `/quiz` command table: each sub-command's handler, and whether (and for
what) it needs a moderator. Adding a command is one entry here."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from bot.chat import Command, FormReply, FormSubmission, Interaction, OutMessage, Target
from bot.quiz import buttons, texts
from bot.quiz.channels import ChannelSettings
from bot.quiz.live import LiveQuizzes
from bot.quiz.scheduler import Scheduler
from bot.quiz.scores import Scores
from bot.quiz.study import Study
from bot.quiz.submissions import Submissions

Handler = Callable[[Command], Awaitable[OutMessage]]


def _never(args: Mapping[str, str]) -> bool:
    return False


def _showing_schedule(args: Mapping[str, str]) -> bool:
    return args.get("action", "show").lower() in ("show", "")


class DashboardLinks(Protocol):
    """Signed dashboard links (bot/web/links.py); absent when the dashboard is off."""

    def community(self, target: Target) -> str: ...

    def member(self, target: Target, user_id: str) -> str: ...

    @property
    def hours(self) -> int: ...


@dataclass(frozen=True)
class CommandSpec:
    handler: Handler
    # What a member who is not a moderator is told they cannot do; None: anyone may.
    moderator_action: str | None = None
    # Argument sets a moderator command lets anyone run (looking, not changing).
    open_to_all: Callable[[Mapping[str, str]], bool] = _never


class Commands:
    def __init__(
        self,
        channels: ChannelSettings,
        live: LiveQuizzes,
        scores: Scores,
        scheduler: Scheduler,
        study: Study,
        submissions: Submissions,
        links: DashboardLinks | None = None,
    ) -> None:
        self.study = study
        self.links = links
        self.channels = channels
        self.live = live
        self.scores = scores
        self.scheduler = scheduler
        self.submissions = submissions
        self.table: dict[str, CommandSpec] = {
            "start": CommandSpec(self._start, "start a quiz"),
            "stop": CommandSpec(self._stop, "stop a quiz"),
            "skip": CommandSpec(self._skip, "skip a question"),
            "leaderboard": CommandSpec(self._leaderboard),
            "stats": CommandSpec(self._stats),
            "forget-me": CommandSpec(self._forget_me),
            "review": CommandSpec(self._review),
            "export": CommandSpec(self._export),
            "config": CommandSpec(self._config, "change channel settings"),
            # Anyone may look at the schedule; only changing it needs a moderator.
            "schedule": CommandSpec(self._schedule, "change the schedule", _showing_schedule),
            "dashboard": CommandSpec(self._dashboard),
            "help": CommandSpec(self._help),
            "submit": CommandSpec(self._submit),
            # Its Accept, Reject and Skip buttons and the reject form need the same.
            "submissions": CommandSpec(self._submissions, "review submissions"),
            "remove-question": CommandSpec(self._remove_question, "remove community questions"),
        }

    async def run(self, command: Command) -> OutMessage:
        spec = self.table.get(command.name)
        if spec is None:
            return texts.usage.unknown_command(command.name)
        if not spec.open_to_all(command.args):
            refusal = await self._refusal(spec, command)
            if refusal is not None:
                return refusal
        return await spec.handler(command)

    async def _refusal(
        self, spec: CommandSpec, event: Command | Interaction | FormSubmission
    ) -> OutMessage | None:
        """The private refusal for a member who is not a moderator, if `spec` needs one."""
        if spec.moderator_action is None:
            return None
        channel = await self.channels.channel(event.target)
        if await event.by_moderator(channel.moderator_role):
            return None
        return texts.common.not_moderator(spec.moderator_action, channel.moderator_role)

    # -- review buttons and forms -------------------------------------------------

    async def click(self, click: Interaction) -> OutMessage:
        """A review button (`buttons.submission_custom_id`)."""
        parsed = buttons.parse_numbered_id(
            click.custom_id, buttons.SUBMISSION_PREFIX, buttons.SUBMISSION_VERBS
        )
        if parsed is None:
            return texts.questions.unknown_question()
        verb, number = parsed
        if verb == "edit":  # the author's own draft: anyone, for their own
            return await self.submissions.reopen(click, number)
        refusal = await self._refusal(self.table["submissions"], click)
        if refusal is not None:
            return refusal
        if verb == "accept":
            return await self.submissions.accept(click, number)
        if verb == "reject":
            return self.submissions.reject_form(number)
        return await self.submissions.skip(click, number)

    async def form(self, form: FormSubmission) -> FormReply:
        if form.form_id == buttons.SUBMIT_FORM:
            return await self.submissions.submitted(form)
        parsed = buttons.parse_numbered_id(form.form_id, buttons.FORM_PREFIX, ("reject",))
        if parsed is None:
            return FormReply({}, texts.questions.unknown_question())
        refusal = await self._refusal(self.table["submissions"], form)
        if refusal is not None:
            return FormReply({}, refusal)
        return await self.submissions.reject(form, parsed[1])

    async def _start(self, command: Command) -> OutMessage:
        args = command.args
        return await self.live.start(
            command.target,
            command.user_id,
            questions=args.get("questions"),
            seconds=args.get("seconds"),
            bank=args.get("bank") or None,
            tag=args.get("tag") or None,
        )

    async def _stop(self, command: Command) -> OutMessage:
        return await self.live.stop(command.target)

    async def _skip(self, command: Command) -> OutMessage:
        return await self.live.skip(command.target)

    async def _leaderboard(self, command: Command) -> OutMessage:
        args = command.args
        return await self.scores.leaderboard(
            command.target, args.get("scope", "channel"), args.get("period", "week")
        )

    async def _stats(self, command: Command) -> OutMessage:
        return await self.scores.stats(command.target, command.args.get("user") or command.user_id)

    async def _forget_me(self, command: Command) -> OutMessage:
        forgotten = await self.scores.forget_user(command.target.platform, command.user_id)
        return texts.boards.forgotten(forgotten)

    async def _review(self, command: Command) -> OutMessage:
        return await self.study.start_review(
            command.target, command.user_id, command.args.get("count")
        )

    async def _export(self, command: Command) -> OutMessage:
        return await self.study.export(command.target, command.user_id, command.args.get("which"))

    async def _config(self, command: Command) -> OutMessage:
        args = command.args
        return await self.channels.configure(command.target, args.get("key"), args.get("value"))

    async def _schedule(self, command: Command) -> OutMessage:
        return await self.scheduler.command(command.target, command.user_id, command.args)

    async def _dashboard(self, command: Command) -> OutMessage:
        if self.links is None:
            return texts.usage.dashboard_off()
        return texts.usage.dashboard_links(
            self.links.community(command.target),
            self.links.member(command.target, command.user_id),
            self.links.hours,
        )

    async def _help(self, command: Command) -> OutMessage:
        return texts.usage.help_message()

    async def _submit(self, command: Command) -> OutMessage:
        return await self.submissions.open_form(command)

    async def _submissions(self, command: Command) -> OutMessage:
        return await self.submissions.queue(command.target)

    async def _remove_question(self, command: Command) -> OutMessage:
        return await self.submissions.remove(
            command.target, command.user_id, command.args.get("id")
        )
