"""Schedule rules: what people may type for times, zones and days, and when a
scheduled post goes out, including across daylight-saving changes."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.domain.schedule_rules import (
    ALL_DAYS,
    DAY_NAMES,
    Rule,
    ScheduleError,
    catch_up,
    fire_time_on,
    format_days,
    next_fire,
    parse_days,
    parse_time,
    parse_weekday,
    parse_zone,
)

BERLIN = ZoneInfo("Europe/Berlin")  # CET +1, CEST +2 from 2026-03-29 to 2026-10-25
NEW_YORK = ZoneInfo("America/New_York")  # EST -5, EDT -4 from 2026-03-08 to 2026-11-01
KOLKATA = ZoneInfo("Asia/Kolkata")  # +05:30, no daylight saving time
AUCKLAND = ZoneInfo("Pacific/Auckland")  # NZDT +13 in January
MON, TUE, WED, THU, FRI, SAT, SUN = range(7)


def utc(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC)


def fires(rule: Rule, after: datetime, count: int) -> list[datetime]:
    """The rule's next `count` fire instants after `after`."""
    instants = []
    for _ in range(count):
        after = next_fire(after, rule)
        instants.append(after)
    return instants


# --- times ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [("9:05", time(9, 5)), ("09:00", time(9)), ("00:00", time(0)), (" 23:59 ", time(23, 59))],
)
def test_a_24_hour_time_with_minutes_is_accepted(text: str, expected: time) -> None:
    assert parse_time(text) == expected


@pytest.mark.parametrize("text", ["24:00", "12:60", "25:00", "9", "9am", "9:00pm", "ab:cd"])
def test_anything_else_is_refused_naming_what_was_typed(text: str) -> None:
    with pytest.raises(ScheduleError, match="is not a time of day: use HH:MM") as caught:
        parse_time(text)
    assert str(caught.value).startswith(text)


@pytest.mark.parametrize("text", ["", "   ", "12:00:00", "١٢:٠٠"])
def test_seconds_other_digits_and_blanks_are_refused(text: str) -> None:
    with pytest.raises(ScheduleError, match="use HH:MM, like 09:00"):
        parse_time(text)


def test_a_pasted_essay_is_not_echoed_in_full() -> None:
    with pytest.raises(ScheduleError) as caught:
        parse_time("x" * 5000)
    assert len(str(caught.value)) < 100


# --- zones ------------------------------------------------------------------


@pytest.mark.parametrize("text", ["Europe/Berlin", "America/New_York", "UTC", "utc"])
def test_iana_zones_and_utc_are_accepted(text: str) -> None:
    assert parse_zone(text).utcoffset(datetime(2026, 1, 1)) is not None


@pytest.mark.parametrize(
    "text", ["Mars/Olympus", "../etc/passwd", "/etc/passwd", "Europe/", "Europe", "zone.tab"]
)
def test_unknown_zones_and_paths_are_refused_naming_them(text: str) -> None:
    with pytest.raises(ScheduleError) as caught:
        parse_zone(text)
    assert str(caught.value) == (
        f"{text} is not a time zone I know: use an IANA name like Europe/Berlin or America/New_York"
    )


def test_an_empty_zone_is_refused() -> None:
    with pytest.raises(ScheduleError, match="use an IANA name like Europe/Berlin"):
        parse_zone("")


# --- days -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mon-fri", {MON, TUE, WED, THU, FRI}),
        ("weekdays", {MON, TUE, WED, THU, FRI}),
        ("weekends", {SAT, SUN}),
        ("daily", set(range(7))),
        ("Everyday", set(range(7))),
        ("every day", set(range(7))),
        ("fri-mon", {FRI, SAT, SUN, MON}),
        ("Mon,Wed,Fri", {MON, WED, FRI}),
        ("monday, wednesday , FRIDAY", {MON, WED, FRI}),
        ("tue,tues,tuesday", {TUE}),
        ("thu,thur,thurs", {THU}),
        ("sat", {SAT}),
        ("mon-wed,fri", {MON, TUE, WED, FRI}),
        ("weekends,wed", {WED, SAT, SUN}),
    ],
)
def test_days_can_be_written_many_ways(text: str, expected: set[int]) -> None:
    assert parse_days(text) == expected


@pytest.mark.parametrize(
    "text", ["mon-xyz", "funday", "", "mo", "mon-", "mon,,fri", "mon-wed-fri", "tuesdays"]
)
def test_unknown_days_are_refused_naming_what_was_typed(text: str) -> None:
    with pytest.raises(ScheduleError) as caught:
        parse_days(text)
    assert str(caught.value) == (
        f"'{text}' is not a list of days: use names like mon-fri or mon,wed,fri"
    )


@pytest.mark.parametrize(
    ("days", "shown"),
    [
        (set(range(7)), "every day"),
        ({MON, TUE, WED, THU, FRI}, "mon-fri"),
        ({MON, WED, FRI}, "mon,wed,fri"),
        ({MON, TUE, WED, FRI}, "mon-wed,fri"),
        ({SAT, SUN}, "sat,sun"),
        ({MON, TUE}, "mon,tue"),
        ({FRI, SAT, SUN, MON}, "mon,fri-sun"),
        ({THU}, "thu"),
    ],
)
def test_days_are_shown_briefly_and_read_back_the_same(days: set[int], shown: str) -> None:
    assert format_days(frozenset(days)) == shown
    assert parse_days(shown) == days


@pytest.mark.parametrize(("text", "day"), [("mon", MON), ("Friday", FRI), ("sund", SUN)])
def test_a_single_day_for_the_weekly_leaderboard(text: str, day: int) -> None:
    assert parse_weekday(text) == day
    assert DAY_NAMES[day] == text.lower()[:3]


@pytest.mark.parametrize("text", ["mon-fri", "weekends", "fr", ""])
def test_a_single_day_must_be_one_day(text: str) -> None:
    with pytest.raises(ScheduleError, match="is not a day of the week"):
        parse_weekday(text)


def test_a_rule_needs_at_least_one_day() -> None:
    with pytest.raises(ScheduleError):
        Rule(time(9), BERLIN, frozenset())
    assert Rule(time(9), BERLIN).days == ALL_DAYS


# --- when a rule fires ------------------------------------------------------


def test_nine_in_berlin_is_eight_utc_in_winter_and_seven_in_summer() -> None:
    rule = Rule(time(9), BERLIN)
    assert next_fire(utc(2026, 1, 15, 12), rule) == utc(2026, 1, 16, 8)
    assert next_fire(utc(2026, 7, 15, 12), rule) == utc(2026, 7, 16, 7)


@pytest.mark.parametrize(
    ("after", "expected_days"),
    [(utc(2026, 3, 27, 12), (28, 29, 30)), (utc(2026, 10, 23, 12), (24, 25, 26))],
)
def test_a_daily_post_stays_at_nine_local_across_clock_changes(
    after: datetime, expected_days: tuple[int, ...]
) -> None:
    local = [instant.astimezone(BERLIN) for instant in fires(Rule(time(9), BERLIN), after, 3)]
    assert [(moment.day, moment.time()) for moment in local] == [
        (day, time(9)) for day in expected_days
    ]


def test_a_time_skipped_by_spring_forward_fires_when_the_clocks_resume() -> None:
    rule = Rule(time(2, 30), BERLIN)
    fired = next_fire(utc(2026, 3, 28, 12), rule)
    assert fired == utc(2026, 3, 29, 1)
    assert fired.astimezone(BERLIN).time() == time(3)


def test_a_time_repeated_by_fall_back_fires_once_at_the_first() -> None:
    rule = Rule(time(2, 30), BERLIN)
    assert fires(rule, utc(2026, 10, 24, 12), 2) == [
        utc(2026, 10, 25, 0, 30),
        utc(2026, 10, 26, 1, 30),
    ]


def test_new_york_spring_forward_and_fall_back() -> None:
    skipped = Rule(time(2, 30), NEW_YORK)
    assert next_fire(utc(2026, 3, 7, 12), skipped) == utc(2026, 3, 8, 7)  # 03:00 EDT
    repeated = Rule(time(1, 30), NEW_YORK)
    assert fires(repeated, utc(2026, 10, 31, 12), 2) == [
        utc(2026, 11, 1, 5, 30),  # 01:30 EDT, not 01:30 EST an hour later
        utc(2026, 11, 2, 6, 30),  # 01:30 EST the next day
    ]


def test_a_gap_of_any_length_is_handled() -> None:
    # Samoa skipped the whole of 2011-12-30 to cross the date line.
    apia = ZoneInfo("Pacific/Apia")
    fired = fire_time_on(date(2011, 12, 30), Rule(time(9), apia))
    assert fired.astimezone(apia) == datetime(2011, 12, 31, tzinfo=apia)


def test_a_weekday_rule_after_friday_time_waits_for_monday() -> None:
    rule = Rule(time(9), BERLIN, parse_days("mon-fri"))
    friday_noon = utc(2026, 3, 20, 11)
    assert next_fire(friday_noon, rule) == utc(2026, 3, 23, 8)


def test_the_next_fire_is_strictly_after_now() -> None:
    rule = Rule(time(9), BERLIN)
    assert next_fire(utc(2026, 1, 15, 8), rule) == utc(2026, 1, 16, 8)
    assert next_fire(utc(2026, 1, 15, 7, 59, 59), rule) == utc(2026, 1, 15, 8)


def test_half_hour_zones() -> None:
    rule = Rule(time(9), KOLKATA)
    assert next_fire(utc(2026, 1, 15, 0), rule) == utc(2026, 1, 15, 3, 30)


def test_days_are_the_local_days_not_utc_days() -> None:
    # Monday 08:00 in Auckland is still Sunday 19:00 in UTC.
    rule = Rule(time(8), AUCKLAND, frozenset({MON}))
    sunday_noon_utc = utc(2026, 1, 11, 12)  # already Monday 01:00 in Auckland
    fired = next_fire(sunday_noon_utc, rule)
    assert fired == utc(2026, 1, 11, 19)
    assert fired.weekday() == SUN
    assert fired.astimezone(AUCKLAND).weekday() == MON


def test_now_may_be_given_in_any_zone() -> None:
    rule = Rule(time(9), BERLIN)
    assert next_fire(datetime(2026, 1, 15, 9, tzinfo=BERLIN), rule) == utc(2026, 1, 16, 8)


# --- catching up after downtime ---------------------------------------------


@pytest.mark.parametrize(
    ("late", "posted"),
    [(timedelta(minutes=59), True), (timedelta(hours=2), False), (timedelta(hours=5), False)],
)
def test_a_missed_post_goes_out_only_within_the_grace_period(late: timedelta, posted: bool) -> None:
    due = utc(2026, 1, 15, 8)
    assert catch_up(due, due + late, timedelta(hours=2)) is posted
