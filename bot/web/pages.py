"""The dashboard's routes and `/metrics`, mounted on the health server's app.

Every dashboard page checks its link's token first: missing, expired,
tampered, or for another community (or, for a member page, not a member's
token) is 403 with a page that shows nothing of the community. Pages carry no
script; the period switch is a link, the charts inline SVG."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import jinja2
from aiohttp import web

from bot.chat import Target
from bot.health import Mount
from bot.i18n import DEFAULT, day_and_time, language, speaking, supported, t, tn
from bot.metrics import CONTENT_TYPE
from bot.quiz.service import QuizService
from bot.web.links import PREFIX, DashboardLinks
from bot.web.tokens import Grant, Signer
from bot.web.views import (
    BOARD_PERIODS,
    HARDEST_MIN_ANSWERS,
    PERIOD_TITLES,
    QUESTION_PERIODS,
    DashboardViews,
    ReviewCounts,
)

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

HERE = Path(__file__).resolve().parent
SECURITY_HEADERS = {
    # The token is in the address: never send it on to another site.
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Robots-Tag": "noindex, nofollow",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; "
        "form-action 'none'; frame-ancestors 'none'"
    ),
}


def template_environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("bot.web", "templates"),
        autoescape=jinja2.select_autoescape(["html"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=["jinja2.ext.i18n"],
    )
    # `_()` and `ngettext()` are the catalogs' t() and tn(): named `{placeholders}`,
    # in the language `speaking()` set around the rendering.
    environment.install_gettext_callables(t, tn, newstyle=False)  # type: ignore[attr-defined]
    environment.filters["day_and_time"] = day_and_time  # names and order of the language
    return environment


def page_language(request: web.Request, community_language: str) -> str:
    """The chrome's language: the browser's first Accept-Language we ship, else
    the language of the link's community."""
    for part in sorted(
        _weighted(request.headers.get("Accept-Language", "")), key=lambda pair: -pair[1]
    ):
        code = supported(part[0])
        if code is not None:
            return code
    return community_language


def _weighted(header: str) -> list[tuple[str, float]]:
    found = []
    for item in header.split(",")[:20]:  # a header is the visitor's text: bounded
        code, _, weight = item.strip().partition(";q=")
        try:
            quality = float(weight) if weight else 1.0
        except ValueError:
            continue
        if code and code != "*":
            found.append((code.strip(), quality))
    return found


class Dashboard:
    def __init__(
        self, service: QuizService, signer: Signer, reviews: ReviewCounts | None = None
    ) -> None:
        self.service = service
        self.signer = signer
        self.views = DashboardViews(service, reviews)
        self.templates = template_environment()

    def mount(self, app: web.Application) -> None:
        base = PREFIX + "/{platform}/{community}"
        app.router.add_get(base, self._speaking(self.community))
        app.router.add_get(base + "/questions", self._speaking(self.questions))
        app.router.add_get(base + "/questions/{question_id}", self._speaking(self.question))
        app.router.add_get(base + "/me", self._speaking(self.member))
        app.router.add_static(PREFIX + "/static", HERE / "static", append_version=False)

    async def community(self, request: web.Request) -> web.Response:
        grant = self._grant(request)
        period = self._choice(request, BOARD_PERIODS, "week")
        page = await self.views.community(grant.platform, grant.community, period)
        return self._page(request, "community.html", grant, "boards", page=page, period=period)

    async def questions(self, request: web.Request) -> web.Response:
        grant = self._grant(request)
        period = self._choice(request, QUESTION_PERIODS, "month")
        page = await self.views.questions(grant.platform, grant.community, period)
        return self._page(
            request,
            "questions.html",
            grant,
            "questions",
            page=page,
            period=period,
            hardest_min=HARDEST_MIN_ANSWERS,
        )

    async def question(self, request: web.Request) -> web.Response:
        grant = self._grant(request)
        question_id = request.match_info["question_id"]
        page = await self.views.question_health(grant.platform, grant.community, question_id)
        if page is None:
            body = self._render(
                "refused.html",
                title=t("No such question"),
                reason=t("No bank has that question."),
            )
            raise web.HTTPNotFound(text=body, content_type="text/html", headers=SECURITY_HEADERS)
        return self._page(request, "question.html", grant, "questions", page=page, period="")

    async def member(self, request: web.Request) -> web.Response:
        grant = self._grant(request)
        if grant.member is None:
            raise self._refused(t("This link opens the community's pages, not a member's own."))
        issued = grant.expires - self.signer.lifetime
        if await self.service.repository.forgotten_since(grant.platform, grant.member, issued):
            raise self._refused(t("This link was issued before its member asked to be forgotten."))
        page = await self.views.member(grant.platform, grant.community, grant.member)
        return self._page(request, "member.html", grant, "me", page=page, period="")

    # -- helpers ----------------------------------------------------------------------

    def _speaking(self, handler: Handler) -> Handler:
        """The page, refusals included, in `page_language` (looked up once per request)."""

        async def in_language(request: web.Request) -> web.StreamResponse:
            where = Target(
                request.match_info.get("platform", ""), request.match_info.get("community", ""), ""
            )
            try:
                community = await self.service.channels.language(where)
            except Exception:
                log.warning("could not read the language of %s", where, exc_info=True)
                community = DEFAULT
            with speaking(page_language(request, community)):
                return await handler(request)

        return in_language

    def _grant(self, request: web.Request) -> Grant:
        platform = request.match_info["platform"]
        community = request.match_info["community"]
        grant = self.signer.verify(request.query.get("t"), platform, community)
        if grant is None:
            raise self._refused(
                t(
                    "This link is not valid: it may have expired (links last 24 hours), "
                    "or be for another community."
                )
            )
        return grant

    def _choice(self, request: web.Request, allowed: tuple[str, ...], default: str) -> str:
        chosen = request.query.get("period", default).lower()
        if chosen not in allowed:
            body = self._render(
                "refused.html",
                title=t("Unknown period"),
                reason=t("The period must be one of: {periods}.", periods=", ".join(allowed)),
            )
            raise web.HTTPBadRequest(text=body, content_type="text/html", headers=SECURITY_HEADERS)
        return chosen

    def _refused(self, reason: str) -> web.HTTPForbidden:
        body = self._render("refused.html", title=t("Link not valid"), reason=reason)
        return web.HTTPForbidden(text=body, content_type="text/html", headers=SECURITY_HEADERS)

    def _page(
        self, request: web.Request, name: str, grant: Grant, section: str, **values: Any
    ) -> web.Response:
        body = self._render(
            name,
            grant=grant,
            token=request.query.get("t", ""),
            section=section,
            base=request.path.split("/questions")[0].removesuffix("/me"),
            static=PREFIX + "/static",
            titles=PERIOD_TITLES,
            board_periods=BOARD_PERIODS,
            question_periods=QUESTION_PERIODS,
            **values,
        )
        return web.Response(text=body, content_type="text/html", headers=SECURITY_HEADERS)

    def _render(self, name: str, **values: Any) -> str:
        values.setdefault("static", PREFIX + "/static")
        values.setdefault("lang", language().replace("_", "-"))
        return self.templates.get_template(name).render(**values)


def mount_metrics(app: web.Application, service: QuizService) -> None:
    async def metrics(_request: web.Request) -> web.Response:
        try:
            state = await service.metrics_state()
        except Exception:
            # The counters still say something; the database figures wait.
            log.warning("metrics: could not read the database figures", exc_info=True)
            raise web.HTTPServiceUnavailable(text="database unavailable\n") from None
        body = service.metrics.exposition(state)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE})

    app.router.add_get("/metrics", metrics)


def web_mounts(
    service: QuizService, links: DashboardLinks | None, reviews: ReviewCounts | None = None
) -> list[Mount]:
    """/metrics always; the dashboard when its links can be signed (QUIZ_WEB_SECRET)."""
    mounts: list[Mount] = [lambda app: mount_metrics(app, service)]
    if links is not None:
        mounts.append(Dashboard(service, links.signer, reviews).mount)
    return mounts
