"""The dashboard's addresses, as `/quiz dashboard` hands them out."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote, urlencode

from bot.chat import Target
from bot.web.tokens import Signer

PREFIX = "/dashboard"


def community_path(platform: str, community: str) -> str:
    return f"{PREFIX}/{quote(platform, safe='')}/{quote(community, safe='')}"


@dataclass(frozen=True)
class DashboardLinks:
    """Signed links under `public_url` (QUIZ_PUBLIC_URL)."""

    signer: Signer
    public_url: str

    def community(self, target: Target) -> str:
        token = self.signer.sign(target.platform, target.community)
        return self._url(community_path(target.platform, target.community), token)

    def member(self, target: Target, user_id: str) -> str:
        token = self.signer.sign(target.platform, target.community, user_id)
        return self._url(community_path(target.platform, target.community) + "/me", token)

    @property
    def hours(self) -> int:
        return int(self.signer.lifetime.total_seconds() // 3600)

    def _url(self, path: str, token: str) -> str:
        return f"{self.public_url.rstrip('/')}{path}?{urlencode({'t': token})}"
