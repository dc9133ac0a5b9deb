"""The play features in the core: team dealing by recent points, hints on
questions without one, the bank schema's new fields, their round trip through
`questions export` and `import`, Anki's True/False, and the terminal's `?`."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import timedelta
from pathlib import Path

import yaml

from bot.chat import Interaction
from bot.domain.rules import reading_seconds
from bot.quiz.anki import anki_fields, package
from bot.quiz.bank import parse_bank_text
from bot.quiz.teams import choose_team, dealt
from tests.conftest import CHANNEL, Host
from tests.play_banks import HINT, IMAGE, IMAGE_ALT, play_catalog
from tests.test_cli import run_cli


def test_round_robin_deals_a_ranked_list_and_a_member_joins_a_smallest_team() -> None:
    assert dealt(["u1", "u2", "u3", "u4", "u5"], 2) == {
        "u1": 1,
        "u2": 2,
        "u3": 1,
        "u4": 2,
        "u5": 1,
    }
    assert choose_team({1: 1, 2: 1, 3: 1}, 3) == 3  # the dealt team, as it is a smallest
    assert choose_team({1: 1, 2: 2, 3: 2}, 3) == 1  # full: the smallest instead
    assert choose_team({1: 2, 2: 1, 3: 1}, None) == 2  # no plan: lowest-numbered smallest


async def test_teams_are_dealt_by_the_last_thirty_days_points_and_latecomers_fill_gaps(
    host: Host,
) -> None:
    members = [f"u{n}" for n in range(1, 7)]
    # History: u1 right three times, u2 twice, u3 once, u4..u6 never; one more
    # quiz, older than 30 days, must not count (it would put u6 first).
    old_start = host.clock.now()
    await host.start(questions=3, seconds=30)
    for _ in range(3):
        await host.answer("u6", correct=True)
        await host.close_current()
    host.clock.set(old_start + timedelta(days=31))
    await host.start(questions=3, seconds=30)
    for number in range(3):
        for rank, user in enumerate(members):
            await host.answer(user, correct=rank < 3 - number)
        await host.close_current()

    started = await host.start(questions=2, seconds=30, teams=2)
    assert "Team game, 2 teams" in started.text
    # Ranked u1..u6 (ties by id), dealt 1, 2, 1, 2, 1, 2. They answer out of order.
    told = {}
    for user in ("u2", "u4", "u1", "u3", "u5"):
        reply = await host.answer(user, correct=True)
        told[user] = reply.text.splitlines()[-1]
    assert told == {
        "u2": "You play for Team 2 (of 2).",  # dealt 2, both empty
        "u4": "You play for Team 1 (of 2).",  # dealt 2, but Team 2 is the bigger
        "u1": "You play for Team 1 (of 2).",  # dealt 1, both at one
        "u3": "You play for Team 2 (of 2).",  # dealt 1, but Team 1 has two
        "u5": "You play for Team 1 (of 2).",  # dealt 1, both at two
    }
    await host.close_current()
    late = await host.answer("u6", correct=False)  # joins mid-quiz: the smallest team
    assert late.text.endswith("You play for Team 2 (of 2).")
    again = await host.answer("u1", correct=True)
    assert "You play for" not in again.text  # told once
    await host.close_current()

    scores = [m for m in host.adapter.sent if "final scores" in m.message.text][-1].message
    [board] = [field.value for field in scores.fields if field.name == "Teams"]
    # Team 1: u1 (15+15), u4 (15), u5 (15) = 60 over 3; Team 2: u2, u3 (15), u6 (0) = 30 over 3.
    assert board.splitlines() == [
        "1. Team 1: 20.0 points per member (60 points, 3 members)",
        "2. Team 2: 10.0 points per member (30 points, 3 members)",
    ]


async def test_a_hint_click_on_a_question_without_a_hint_gets_one_line(host: Host) -> None:
    await host.start(questions=1, seconds=30)
    [button] = host.current().message.buttons[:1]
    post = button.custom_id.split(":")[2]
    assert "Hint" not in [b.label for b in host.current().message.buttons]
    reply = await host.service.handle_click(Interaction(CHANNEL, "u1", f"qm:h:{post}"))
    assert reply.text == "This question has no hint."


def _bank(**fields: object) -> str:
    question = {
        "id": "q-1",
        "prompt": "Which?",
        "options": ["a", "b"],
        "answer": "A",
        "explanation": "Because.",
        **fields,
    }
    return yaml.safe_dump({"id": "b", "title": "B", "questions": [question]})


def test_the_validator_refuses_a_bad_picture_or_a_long_hint_with_one_line_each() -> None:
    def problems(**fields: object) -> list[str]:
        bank, found = parse_bank_text(_bank(**fields), Path("b.yaml"))
        assert (bank is None) == bool(found)
        return [str(problem) for problem in found]

    assert problems(hint="Think.", image=IMAGE, image_alt=IMAGE_ALT) == []
    [insecure] = problems(image="http://images.example.org/a.png", image_alt="A picture")
    assert insecure.endswith("question: image must be an https:// URL")
    [no_alt] = problems(image=IMAGE)
    assert "image needs image_alt" in no_alt
    [long_alt] = problems(image=IMAGE, image_alt="x" * 201)
    assert "image_alt" in long_alt and "200" in long_alt
    [long_hint] = problems(hint="x" * 301)
    assert "hint" in long_hint and "300" in long_hint


def test_reading_time_is_a_second_per_fifteen_words_up_to_a_minute() -> None:
    assert reading_seconds("one two", "three") == 0
    assert reading_seconds(" ".join(["w"] * 29), "x") == 2
    assert reading_seconds(" ".join(["w"] * 5000)) == 60


def test_export_and_import_keep_hints_and_pictures(tmp_path: Path) -> None:
    play_catalog(tmp_path / "banks")
    env = {"QUIZ_QUESTIONS_DIR": str(tmp_path / "banks")}
    exported = run_cli("questions", "export", "--format", "json", cwd=tmp_path, env=env)
    assert exported.returncode == 0, exported.stderr
    banks = {bank["id"]: bank for bank in json.loads(exported.stdout)["banks"]}
    [hinted] = banks["hints"]["questions"]
    assert hinted["hint"] == HINT
    [pictured] = banks["pictures"]["questions"]
    assert (pictured["image"], pictured["image_alt"]) == (IMAGE, IMAGE_ALT)
    assert "hint" not in pictured  # left out when unset

    (tmp_path / "export.json").write_text(exported.stdout, encoding="utf-8")
    result = run_cli(
        "questions", "import", "export.json", "--format", "json", "--bank", "copy", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    imported = {q["prompt"]: q for q in yaml.safe_load(result.stdout)["questions"]}
    assert imported[hinted["prompt"]]["hint"] == HINT
    again = imported[pictured["prompt"]]
    assert (again["image"], again["image_alt"]) == (IMAGE, IMAGE_ALT)
    assert "hint" not in again and "image" not in imported[hinted["prompt"]]


def test_anki_shows_true_and_false_without_letters(tmp_path: Path) -> None:
    catalog = play_catalog(tmp_path / "banks")
    question = catalog.question("tf-01")
    assert question is not None
    _, options, answer, _ = anki_fields(question)
    assert options == "True<br>False"
    assert answer == "<b>True</b>"
    bank = catalog.bank_of("tf-01")
    assert bank is not None
    with zipfile.ZipFile(io.BytesIO(package([(bank, question)], 1_700_000_000.0))) as made:
        assert "collection.anki2" in made.namelist()


def test_the_terminal_takes_a_question_mark_for_the_hint_and_shows_a_picture(
    tmp_path: Path,
) -> None:
    play_catalog(tmp_path / "banks")
    env = {"QUIZ_QUESTIONS_DIR": str(tmp_path / "banks")}
    hinted = run_cli(
        "play", "--questions", "1", "--bank", "hints", cwd=tmp_path, env=env, stdin="?\nD\n"
    )
    assert hinted.returncode == 0, hinted.stderr
    assert "Type one of A, B, C, D, ? and press Enter." in hinted.stdout
    assert f"Hint: {HINT}" in hinted.stdout
    # The options are shuffled: whatever D is, the reply says the hint halves it.
    assert "You took the hint, so a right answer earns half its points." in hinted.stdout
    pictured = run_cli(
        "play", "--questions", "1", "--bank", "pictures", cwd=tmp_path, env=env, stdin="A\n"
    )
    assert pictured.returncode == 0, pictured.stderr
    assert f"Picture: {IMAGE_ALT} ({IMAGE})" in pictured.stdout


async def test_help_describes_hints_true_false_study_reading_time_pictures_and_teams(
    host: Host,
) -> None:
    shown = (await host.command("help", user="u1", moderator=False)).text
    for words in (
        "Hint button (`?` in the terminal)",
        "half its points",
        "True and False buttons",
        "`config set mode study`",
        "`config set reading-time on`",
        "Pictures:",
        "teams=2",
        "round(5 × time left ÷ time allowed)",
    ):
        assert words in shown, words
