"""The `/quiz` surface assembled from what each feature declares beside its
handlers (`COMMANDS`, `BUTTONS`, `FORMS` in live, scores, study, channels,
scheduler, submissions, answers), and the dispatcher that runs them: one
look-up, one moderator check, the owning feature's handler."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from bot.chat import Command, FormReply, FormSubmission, Interaction, OutMessage, Target
from bot.quiz import (
    answers,
    channels,
    health,
    live,
    scheduler,
    scores,
    study,
    submissions,
    texts,
)
from bot.quiz.surface.registry import Surface
from bot.quiz.surface.spec import ButtonRoute, CommandSpec, Pressed, Variant


class DashboardLinks(Protocol):
    """Signed dashboard links (bot/web/links.py); absent when the dashboard is off."""

    def community(self, target: Target) -> str: ...

    def member(self, target: Target, user_id: str) -> str: ...

    @property
    def hours(self) -> int: ...


class Commands:
    """Runs what the surface routes: each handler gets its feature's object."""

    def __init__(
        self,
        surface: Surface,
        channels: channels.ChannelSettings,
        owners: Mapping[type, object],
        links: DashboardLinks | None = None,
    ) -> None:
        self.surface = surface
        self.channels = channels
        self.links = links
        self.owners: dict[type, object] = {Commands: self, **owners}

    def own(self, owner: object) -> None:
        """Make `owner` the object that handles what its type declares."""
        self.owners[type(owner)] = owner

    async def run(self, command: Command) -> OutMessage:
        spec = self.surface.commands.get(command.name)
        if spec is None:
            return texts.usage.unknown_command(command.name, self.surface)
        if spec.moderator and not spec.open_to_all(command.args):
            refusal = await self._refusal(spec.name, command)
            if refusal is not None:
                return refusal
        return await spec.handler(self.owners[spec.owner], command)

    async def click(
        self, click: Interaction, found: tuple[ButtonRoute, Pressed] | None
    ) -> OutMessage:
        """A button `found` in the surface (None: an id we never made)."""
        if found is None:
            return texts.questions.unknown_question()
        route, pressed = found
        if route.moderators_of is not None and not route.open_to_all(pressed):
            refusal = await self._refusal(route.moderators_of, click)
            if refusal is not None:
                return refusal
        return await route.handler(self.owners[route.owner], click, pressed)

    async def form(self, form: FormSubmission) -> FormReply:
        found = self.surface.form(form.form_id)
        if found is None:
            return FormReply({}, texts.questions.unknown_question())
        route, pressed = found
        if route.moderators_of is not None:
            refusal = await self._refusal(route.moderators_of, form)
            if refusal is not None:
                return FormReply({}, refusal)
        return await route.handler(self.owners[route.owner], form, pressed)

    async def _refusal(
        self, command_name: str, event: Command | Interaction | FormSubmission
    ) -> OutMessage | None:
        """The private refusal for a member who is not a moderator of `command_name`
        (of the community, for a community-wide one: the channel's role is not asked)."""
        spec = self.surface.commands.get(command_name)
        if spec is not None and spec.community_wide:
            if await event.by_moderator(None):
                return None
            action = texts.usage.moderator_action(command_name)
            return texts.common.not_community_moderator(action)
        channel = await self.channels.channel(event.target)
        if await event.by_moderator(channel.moderator_role):
            return None
        action = texts.usage.moderator_action(command_name)
        return texts.common.not_moderator(action, channel.moderator_role)

    async def dashboard(self, command: Command) -> OutMessage:
        if self.links is None:
            return texts.usage.dashboard_off()
        return texts.usage.dashboard_links(
            self.links.community(command.target),
            self.links.member(command.target, command.user_id),
            self.links.hours,
        )

    async def help(self, command: Command) -> OutMessage:
        return texts.usage.help_message(self.surface)


async def _dashboard(commands: Commands, command: Command) -> OutMessage:
    return await commands.dashboard(command)


async def _help(commands: Commands, command: Command) -> OutMessage:
    return await commands.help(command)


COMMANDS = (
    CommandSpec("dashboard", Commands, _dashboard, (Variant(("dashboard",)),)),
    CommandSpec("help", Commands, _help, (Variant(("help",)),)),
)


def declared_surface() -> Surface:
    """A new registry of everything the features declare (a service may extend its own)."""
    return Surface(
        (
            *live.COMMANDS,
            *scores.COMMANDS,
            *study.COMMANDS,
            *channels.COMMANDS,
            *scheduler.COMMANDS,
            *submissions.COMMANDS,
            *health.COMMANDS,
            *COMMANDS,
        ),
        (*answers.BUTTONS, *study.BUTTONS, *submissions.BUTTONS, *health.BUTTONS),
        (*submissions.FORMS, *health.FORMS),
    )


SURFACE = declared_surface()
