"""Chart geometry for the dashboard's inline SVG: plain numbers the templates
draw (templates/charts.html), so every label is escaped by Jinja and no script
or outside library is needed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

BAR_HEIGHT = 22
BAR_GAP = 6
LABEL_WIDTH = 220
BAR_AREA = 360
VALUE_WIDTH = 70


@dataclass(frozen=True)
class Bar:
    label: str
    value_text: str
    y: int
    width: float  # px of BAR_AREA
    tone: str  # a CSS class: good, bad, plain


@dataclass(frozen=True)
class BarChart:
    """Horizontal bars, one per row, scaled to the largest value (or to `full`)."""

    title: str
    bars: list[Bar]
    height: int
    width: int = LABEL_WIDTH + BAR_AREA + VALUE_WIDTH
    label_width: int = LABEL_WIDTH
    bar_height: int = BAR_HEIGHT


def bar_chart(
    title: str,
    rows: Sequence[tuple[str, float, str]],
    *,
    full: float | None = None,
    tones: Sequence[str] | None = None,
) -> BarChart:
    """`rows` are (label, value, value as shown); `full` is the value of a full bar."""
    top = full if full is not None else max((value for _, value, _ in rows), default=0.0)
    bars = []
    for index, (label, value, shown) in enumerate(rows):
        width = 0.0 if top <= 0 else max(0.0, min(1.0, value / top)) * BAR_AREA
        tone = tones[index] if tones is not None else "plain"
        bars.append(Bar(_short(label, 30), shown, index * (BAR_HEIGHT + BAR_GAP), width, tone))
    height = max(1, len(bars)) * (BAR_HEIGHT + BAR_GAP)
    return BarChart(title, bars, height)


def share_tone(share: float) -> str:
    """Green when most answer right, red when most do not."""
    if share >= 0.7:
        return "good"
    if share < 0.4:
        return "bad"
    return "plain"


@dataclass(frozen=True)
class Segment:
    letter: str
    x: float  # percent
    width: float  # percent
    votes: int
    correct: bool


@dataclass(frozen=True)
class VoteSplit:
    """One question's votes over its options (bank order) as one stacked bar."""

    segments: list[Segment]
    total: int


def vote_split(votes: Sequence[int], correct_index: int, letters: Sequence[str]) -> VoteSplit:
    total = sum(votes)
    segments = []
    x = 0.0
    for index, count in enumerate(votes):
        width = 0.0 if total == 0 else 100.0 * count / total
        segments.append(Segment(letters[index], x, width, count, index == correct_index))
        x += width
    return VoteSplit(segments, total)


LINE_WIDTH = 640
LINE_HEIGHT = 220
PAD_LEFT = 48
PAD_BOTTOM = 28
PAD_TOP = 12
PAD_RIGHT = 12


@dataclass(frozen=True)
class Tick:
    at: float
    label: str


@dataclass(frozen=True)
class LineChart:
    """A cumulative line over days: `points` is the SVG polyline attribute."""

    title: str
    points: str
    area: str
    x_ticks: list[Tick]
    y_ticks: list[Tick]
    last_x: float
    last_y: float
    width: int = LINE_WIDTH
    height: int = LINE_HEIGHT
    left: int = PAD_LEFT
    bottom: int = LINE_HEIGHT - PAD_BOTTOM
    right: int = LINE_WIDTH - PAD_RIGHT
    top: int = PAD_TOP


def line_chart(title: str, series: Sequence[tuple[date, int]]) -> LineChart | None:
    """`series`: (day, value) in day order; None when there is nothing to draw."""
    if not series:
        return None
    first, last = series[0][0], series[-1][0]
    days = max(1, (last - first).days)
    top = max(1, max(value for _, value in series))
    inner_w = LINE_WIDTH - PAD_LEFT - PAD_RIGHT
    inner_h = LINE_HEIGHT - PAD_TOP - PAD_BOTTOM

    def x(day: date) -> float:
        return PAD_LEFT + inner_w * (day - first).days / days

    def y(value: float) -> float:
        return PAD_TOP + inner_h * (1 - value / top)

    coords = [(x(day), y(value)) for day, value in series]
    if len(coords) == 1:  # one day: a flat line across
        coords = [(PAD_LEFT, coords[0][1]), (LINE_WIDTH - PAD_RIGHT, coords[0][1])]
    points = " ".join(f"{cx:.1f},{cy:.1f}" for cx, cy in coords)
    bottom = LINE_HEIGHT - PAD_BOTTOM
    area = f"{coords[0][0]:.1f},{bottom} {points} {coords[-1][0]:.1f},{bottom}"
    x_ticks = [Tick(x(day), f"{day:%d %b}") for day in _spread(first, last)]
    y_ticks = [Tick(y(top * n / 4), f"{round(top * n / 4):,}") for n in range(5)]
    return LineChart(title, points, area, x_ticks, y_ticks, coords[-1][0], coords[-1][1])


def _spread(first: date, last: date, count: int = 5) -> list[date]:
    span = (last - first).days
    if span == 0:
        return [first]
    picks = {first + (last - first) * n / (count - 1) for n in range(count)}
    return sorted(picks)


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
