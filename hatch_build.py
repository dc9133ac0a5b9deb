"""Compiles the message catalogs (bot/locale/*/LC_MESSAGES/messages.po → .mo)
whenever the package is built or installed, editable installs included, so a
fresh clone or a Docker build speaks every shipped language."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


def compile_catalogs(root: Path) -> list[Path]:
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    written = []
    for po in sorted((root / "bot" / "locale").glob("*/LC_MESSAGES/messages.po")):
        with po.open("rb") as source:
            catalog = read_po(source, locale=po.parent.parent.name)
        mo = po.with_suffix(".mo")
        with mo.open("wb") as target:
            write_mo(target, catalog)
        written.append(mo)
    return written


class CatalogsHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        compile_catalogs(Path(self.root))
