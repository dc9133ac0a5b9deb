"""A YAML node tree built from libyaml's event stream, without recursion.

The bank loader composes nodes in pure Python, which is fine for bank files
but takes tens of seconds on a megabyte-sized trivia list. libyaml parses
fast, and building the tree here from its events keeps the two promises the
bank loader makes: nesting deeper than MAX_DEPTH stops with the line where it
happened, and every node keeps its source line for the report.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from bot.quiz.bank import MAX_DEPTH, NestedTooDeep

# libyaml when PyYAML was built with it; the same events in pure Python otherwise.
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_OPEN = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_CLOSE = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


@dataclass
class _Open:
    node: yaml.SequenceNode | yaml.MappingNode
    key: yaml.Node | None = None  # a mapping's key waiting for its value
    items: list[Any] = field(default_factory=list)


def _undefined(event: Any) -> yaml.YAMLError:
    return yaml.composer.ComposerError(
        None, None, f"found undefined alias {event.anchor!r}", event.start_mark
    )


def _opened(event: Any) -> _Open:
    kind = yaml.SequenceNode if isinstance(event, yaml.SequenceStartEvent) else yaml.MappingNode
    items: list[Any] = []
    return _Open(kind(event.tag or "", items, event.start_mark, event.end_mark), items=items)


def _line(event: Any) -> int:
    return int(event.start_mark.line) + 1


def _scalar(event: Any) -> yaml.ScalarNode:
    return yaml.ScalarNode(
        event.tag or "", event.value, event.start_mark, event.end_mark, event.style
    )


def compose_fast(text: str) -> yaml.Node | None:
    """The first document's node tree (None for an empty stream). Raises
    yaml.YAMLError for bad YAML and NestedTooDeep past MAX_DEPTH."""
    stack: list[_Open] = []
    anchors: dict[str, yaml.Node] = {}
    # Any: libyaml's events carry its own Mark type, which the stubs do not know.
    events: Iterator[Any] = yaml.parse(text, Loader=_Loader)
    for event in events:
        if isinstance(event, _OPEN):
            if len(stack) >= MAX_DEPTH:
                raise NestedTooDeep(_line(event))
            stack.append(_opened(event))
            if event.anchor:
                anchors[event.anchor] = stack[-1].node
            continue
        if isinstance(event, _CLOSE):
            node: yaml.Node = stack.pop().node
        elif isinstance(event, yaml.ScalarEvent):
            node = _scalar(event)
            if event.anchor:
                anchors[event.anchor] = node
        elif isinstance(event, yaml.AliasEvent):
            if event.anchor not in anchors:
                raise _undefined(event)
            node = anchors[event.anchor]
        else:
            continue  # stream and document events
        if not stack:
            return node  # the root is complete: later documents are not read
        parent = stack[-1]
        if isinstance(parent.node, yaml.SequenceNode):
            parent.items.append(node)
        elif parent.key is None:
            parent.key = node
        else:
            parent.items.append((parent.key, node))
            parent.key = None
    return None
