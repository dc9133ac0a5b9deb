"""`quizmaster questions import`, format by format: every construct each format
has, the malformed entries it gets, and the bank loaded back as the bot loads it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.quiz.bank import export, load_banks
from bot.quiz.importers import ImportFailed
from tests.importing import load_back, right_option, run_import, skipped_at

ROOT = Path(__file__).resolve().parent.parent

# --- Open Trivia DB -----------------------------------------------------------

OPENTDB = {
    "response_code": 0,
    "results": [
        {
            "type": "multiple",
            "difficulty": "hard",
            "category": "Entertainment: Video Games",
            "question": "Which &quot;plumber&quot; stars in &#039;Super Mario Bros.&#039;?",
            "correct_answer": "Mario",
            "incorrect_answers": ["Luigi", "Wario", "Toad &amp; Co"],
        },
        {
            "type": "boolean",
            "difficulty": "easy",
            "category": "Science &amp; Nature",
            "question": "The Sun is a planet.",
            "correct_answer": "False",
            "incorrect_answers": ["True"],
        },
        {"type": "text", "question": "Free text?", "correct_answer": "x", "incorrect_answers": []},
        {"type": "multiple", "question": 7, "correct_answer": "x", "incorrect_answers": []},
        {
            "type": "boolean",
            "question": "Maybe?",
            "correct_answer": "Perhaps",
            "incorrect_answers": ["False"],
        },
        {
            "type": "multiple",
            "question": "Same twice?",
            "correct_answer": "A",
            "incorrect_answers": ["A", "B", "C"],
        },
        "not an object",
    ],
}


def test_opentdb_unescapes_keeps_difficulty_tags_category_and_credits_the_source(
    tmp_path: Path,
) -> None:
    result = run_import(tmp_path, "trivia.json", json.dumps(OPENTDB), "opentdb")
    bank = load_back(tmp_path, result)

    mario, sun = bank.questions
    assert mario.prompt == "Which \"plumber\" stars in 'Super Mario Bros.'?"
    assert sorted(mario.options) == ["Luigi", "Mario", "Toad & Co", "Wario"]
    assert right_option(bank, 0) == "Mario"
    assert mario.difficulty.value == "hard"
    assert mario.tags == ["entertainment-video-games"]
    assert sun.options == ["True", "False"]
    assert right_option(bank, 1) == "False"
    assert sun.difficulty.value == "easy"
    assert sun.tags == ["science-nature"]
    assert "Open Trivia DB" in bank.description
    assert "CC BY-SA 4.0" in bank.description
    assert mario.explanation == "The answer is Mario."


def test_opentdb_reports_each_bad_result_by_its_index(tmp_path: Path) -> None:
    result = run_import(tmp_path, "trivia.json", json.dumps(OPENTDB), "opentdb")
    skipped = skipped_at(result)
    assert set(skipped) == {f"results[{i}]" for i in (2, 3, 4, 5, 6)}
    assert "neither 'multiple' nor 'boolean'" in skipped["results[2]"]
    assert "must be text" in skipped["results[3]"]
    assert "True or False" in skipped["results[4]"]
    assert "unique" in skipped["results[5]"]
    assert "not a question object" in skipped["results[6]"]
    assert result.imported == 2


def test_opentdb_output_is_the_same_every_time(tmp_path: Path) -> None:
    first = run_import(tmp_path, "trivia.json", json.dumps(OPENTDB), "opentdb")
    second = run_import(tmp_path, "trivia.json", json.dumps(OPENTDB), "opentdb")
    assert first.yaml_text == second.yaml_text


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ('{"results": [', "not valid JSON (line 1"),
        ('{"response_code": 1}', '"results" list'),
        ("[" * 200_000, "nested too deeply"),
        ('{"results": [' + "9" * 10_000 + "]}", "not valid JSON"),
    ],
)
def test_opentdb_file_that_is_not_opentdb_is_refused_with_a_reason(
    tmp_path: Path, content: str, said: str
) -> None:
    with pytest.raises(ImportFailed) as caught:
        run_import(tmp_path, "bad.json", content, "opentdb")
    assert said in str(caught.value)


# --- Aiken --------------------------------------------------------------------

AIKEN = """What is 2 + 2?
A. 3
B. 4
C. 5
ANSWER: B

Which planet is called the red planet,
written over two lines?
A) Venus
B) Mars
ANSWER: b
Question straight after an answer line?\r
A. yes\r
B. no\r
ANSWER: A\r

A question with a wrong answer letter?
A. one
B. two
ANSWER: D

A question with no answer line
A. one
B. two

ANSWER: A

A question with a stray line?
A. one
this is not an option
B. two
ANSWER: A

A question with a letter used twice?
A. one
A. two
ANSWER: A

No options at all?
ANSWER: A

The file ends in the middle
A. one
"""


def test_aiken_reads_both_option_styles_continued_prompts_and_crlf(tmp_path: Path) -> None:
    result = run_import(tmp_path, "quiz.txt", AIKEN, "aiken")
    bank = load_back(tmp_path, result)

    assert [q.prompt for q in bank.questions] == [
        "What is 2 + 2?",
        "Which planet is called the red planet, written over two lines?",
        "Question straight after an answer line?",
    ]
    assert [right_option(bank, i) for i in range(3)] == ["4", "Mars", "yes"]
    assert bank.questions[0].options == ["3", "4", "5"]


def test_aiken_reports_every_broken_question_with_its_line(tmp_path: Path) -> None:
    result = run_import(tmp_path, "quiz.txt", AIKEN, "aiken")
    skipped = skipped_at(result)
    line = {text: n for n, text in enumerate(AIKEN.splitlines(), 1)}
    wrong_letter = line["A question with a wrong answer letter?"]
    assert "names none of the options A, B" in skipped[f"line {wrong_letter}"]
    assert "no ANSWER line" in skipped[f"line {line['A question with no answer line']}"]
    stray_answer = line["A question with no answer line"] + 4
    assert "an ANSWER line with no question" in skipped[f"line {stray_answer}"]
    assert "neither an option" in skipped[f"line {line['A question with a stray line?']}"]
    assert "appears twice" in skipped[f"line {line['A question with a letter used twice?']}"]
    assert "no options" in skipped[f"line {line['No options at all?']}"]
    assert "file ends" in skipped[f"line {line['The file ends in the middle']}"]
    assert result.imported == 3


# --- GIFT ---------------------------------------------------------------------

GIFT = r"""// A comment line, never a question
$CATEGORY: $course$/top/World Capitals

::Capital:: What is the capital of France? {
  =Paris#Paris has been the capital since the 10th century.
  ~Lyon
  ~Marseille  // not a comment: only whole lines are
}

::Sky:: The sky is green. {F#No, it is not green.#Right: it looks blue.}

Gandhi was born on the {~1st =2nd ~3rd} of October.

::Escapes\:: tricky:: Is 1 \= 1 and is \{this\} a brace \# here? {
=yes \~ surely ~no ~a\#b####General feedback.}

[markdown]Is **this** true? {TRUE}

::Numeric:: What is pi? {#3.14:0.01}

::Match:: Match them {=cat -> meow =dog -> woof ~x}

::Essay:: Write about it. {}

::Short:: Two plus two? {=four =4}

::Weights:: Pick the good ones {~%50%half ~%50%other half ~%-100%wrong}

::Open:: This block is never closed { =a ~b

After an unclosed block the next question still counts {=yes ~no}

Just a description, with no answers.

::Untitled This title is never closed {=a ~b}

Two blocks {=a ~b} in one {=c ~d}

Nested {=a {~b}}
"""


def test_gift_reads_titles_blocks_escapes_true_false_feedback_and_categories(
    tmp_path: Path,
) -> None:
    result = run_import(tmp_path, "moodle.gift", GIFT, "gift")
    bank = load_back(tmp_path, result)
    by_prompt = {q.prompt: q for q in bank.questions}

    capital = by_prompt["What is the capital of France?"]
    assert capital.options == ["Paris", "Lyon", "Marseille // not a comment: only whole lines are"]
    assert capital.answer == "A"
    assert capital.explanation == "Paris has been the capital since the 10th century."
    assert capital.tags == ["world-capitals"]

    sky = by_prompt["The sky is green."]
    assert sky.options == ["True", "False"]
    assert sky.answer == "B"
    assert sky.explanation == "Right: it looks blue."

    gandhi = by_prompt["Gandhi was born on the _____ of October."]
    assert gandhi.options == ["1st", "2nd", "3rd"] and gandhi.answer == "B"

    escapes = by_prompt["Is 1 = 1 and is {this} a brace # here?"]
    assert escapes.options == ["yes ~ surely", "no", "a#b"]
    assert escapes.answer == "A"
    assert escapes.explanation == "General feedback."

    markdown = by_prompt["Is **this** true?"]
    assert markdown.options == ["True", "False"] and markdown.answer == "A"

    assert by_prompt["After an unclosed block the next question still counts"].answer == "A"
    assert len(bank.questions) == 6


def test_gift_reports_unsupported_kinds_and_broken_questions_with_their_lines(
    tmp_path: Path,
) -> None:
    result = run_import(tmp_path, "moodle.gift", GIFT, "gift")
    lines = GIFT.splitlines()

    def reason(starts: str) -> str:
        [number] = [n for n, text in enumerate(lines, 1) if text.startswith(starts)]
        return skipped_at(result)[f"line {number}"]

    for kind in ("::Numeric::", "::Match::", "::Essay::", "::Short::", "::Weights::"):
        assert "only multiple-choice and true/false" in reason(kind), kind
    assert "numeric" in reason("::Numeric::")
    assert "matching" in reason("::Match::")
    assert "essay" in reason("::Essay::")
    assert "short-answer" in reason("::Short::")
    assert "never closed" in reason("::Open::")
    assert "description" in reason("Just a description")
    assert "title" in reason("::Untitled")
    assert "more than one answer block" in reason("Two blocks")
    assert "second {" in reason("Nested")
    assert len(result.skipped) == 10


# --- CSV ----------------------------------------------------------------------

CSV = (
    "prompt,option_a,option_b,option_c,option_d,option_e,answer,explanation,tags,notes\n"
    '"What is 2 + 2?",3,4,,5,,D,"Counting.\nOn two lines.",math;arithmetic basics,x\n'
    "Capital of Italy?,Rome,Milan,Turin,,,a,,geography,\n"
    '"A prompt\nover two lines",yes,no,,,,B,,,\n'
    "Bad letter,a,b,,,,Q,,,\n"
    "Empty right cell,a,b,,,,C,,,\n"
    "Too many cells,a,b,,,,A,,,,,,\n"
    "Only one option,a,,,,,A,,,\n"
)


def test_csv_reads_the_header_columns_empty_cells_tags_and_quoted_lines(tmp_path: Path) -> None:
    result = run_import(tmp_path, "sheet.csv", CSV, "csv")
    bank = load_back(tmp_path, result)

    sums, italy, two_lines = bank.questions
    assert sums.options == ["3", "4", "5"]
    assert right_option(bank, 0) == "5"  # letter D names the column, the empty C is no option
    assert sums.explanation == "Counting.\nOn two lines."
    assert sums.tags == ["math", "arithmetic", "basics"]
    assert right_option(bank, 1) == "Rome"
    assert italy.tags == ["geography"]
    assert two_lines.prompt == "A prompt\nover two lines"
    assert right_option(bank, 2) == "no"
    assert "columns not imported: notes" in result.notes


def test_csv_reports_bad_rows_by_line(tmp_path: Path) -> None:
    result = run_import(tmp_path, "sheet.csv", CSV, "csv")
    skipped = skipped_at(result)
    # the two quoted cells over two lines each count: a row's line is where it starts
    assert "a letter A to E" in skipped["line 7"]
    assert "empty option cell" in skipped["line 8"]
    assert "13 cells" in skipped["line 9"]
    assert "1 option(s)" in skipped["line 10"]
    assert len(skipped) == 4


def test_csv_with_semicolons_and_a_byte_order_mark(tmp_path: Path) -> None:
    text = "\ufeffprompt;option_a;option_b;answer\nIs it;yes;no;A\n"
    bank = load_back(tmp_path, run_import(tmp_path, "excel.csv", text, "csv"))
    assert bank.questions[0].options == ["yes", "no"]


def test_csv_without_the_needed_columns_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ImportFailed, match="lacks option_a, answer"):
        run_import(tmp_path, "sheet.csv", "prompt,option_b\nq,x\n", "csv")


# --- Red-DiscordBot -----------------------------------------------------------

RED = """AUTHOR: Trivia Fan
CONFIG:
  max_score: 10
What is the capital of France?:
- Paris
- paris, france
In which year did the Second World War end?:
- 1945
Who wrote Hamlet?:
- Shakespeare
- William Shakespeare
What is H2O commonly called?:
- Water
In which year did the Berlin wall fall?:
- 1989
How many legs does a spider have?:
- 8
- eight
Which metal is liquid at room temperature?:
- Mercury
Which answer repeats another?:
- PARIS
A question with nested answers:
  deep: map
A question with no answers:
"""


def test_red_draws_three_distractors_from_other_answers_of_the_list(tmp_path: Path) -> None:
    result = run_import(tmp_path, "general.yaml", RED, "red")
    bank = load_back(tmp_path, result)
    accepted = {
        "What is the capital of France?": {"paris", "paris, france"},
        "Who wrote Hamlet?": {"shakespeare", "william shakespeare"},
        "How many legs does a spider have?": {"8", "eight"},
    }
    first_answers = {"Paris", "1945", "Shakespeare", "Water", "1989", "8", "Mercury", "PARIS"}
    for question in bank.questions:
        right = question.options[question.answer_index]
        wrong = [o for o in question.options if o != right]
        assert len(wrong) == 3, question.prompt
        assert set(wrong) <= first_answers
        taken = accepted.get(question.prompt, {right.casefold()})
        assert not {o.casefold() for o in wrong} & taken, question.prompt
    years = next(q for q in bank.questions if q.prompt.startswith("In which year did the Second"))
    # a number gets the list's other numbers first, then words
    assert {"1989", "8"} < set(years.options) - {"1945"}
    assert "Trivia Fan" in bank.description
    assert "drawn" in bank.description
    spider = next(q for q in bank.questions if q.prompt.startswith("How many legs"))
    assert "eight" in spider.explanation


def test_red_says_the_distractors_are_drawn_and_reports_bad_entries(tmp_path: Path) -> None:
    result = run_import(tmp_path, "general.yaml", RED, "red")
    assert any("drawn from other questions' answers" in note for note in result.notes)
    assert any("CONFIG" in note for note in result.notes)
    lines = RED.splitlines()
    nested = lines.index("A question with nested answers:") + 1
    empty = lines.index("A question with no answers:") + 1
    assert "plain text" in skipped_at(result)[f"line {nested}"]
    assert "no accepted answer" in skipped_at(result)[f"line {empty}"]


def test_red_distractors_are_the_same_on_every_import(tmp_path: Path) -> None:
    first = run_import(tmp_path, "general.yaml", RED, "red")
    second = run_import(tmp_path, "general.yaml", RED, "red")
    assert first.yaml_text == second.yaml_text


def test_a_red_list_of_one_question_has_nothing_to_draw_from(tmp_path: Path) -> None:
    result = run_import(tmp_path, "tiny.yaml", "Only question?:\n- Only answer\n", "red")
    assert result.bank is None
    assert "no other answer" in skipped_at(result)["line 1"]


# --- Our own JSON export ------------------------------------------------------


def test_export_then_import_keeps_prompts_options_and_answers(tmp_path: Path) -> None:
    catalog, _ = load_banks([ROOT / "questions"], log_problems=False)
    exported = json.dumps(export(catalog), ensure_ascii=False)
    result = run_import(tmp_path, "export.json", exported, "json", bank_id="restored")
    restored = load_back(tmp_path, result)

    original = catalog.banks["pytorch-distributed-training"]
    assert restored.title == original.title
    assert len(restored.questions) == len(original.questions)
    for back, source in zip(restored.questions, original.questions, strict=True):
        assert back.prompt == source.prompt
        assert back.options == source.options
        assert back.answer == source.answer
        assert back.explanation == source.explanation
        assert back.tags == source.tags
        assert back.difficulty == source.difficulty
    assert result.skipped == []


def test_json_reports_bad_questions_by_their_path(tmp_path: Path) -> None:
    document = {
        "banks": [
            {
                "id": "b",
                "title": "B",
                "questions": [
                    {"prompt": "Fine?", "options": ["yes", "no"], "answer": 0},
                    {"prompt": "Index past the end?", "options": ["yes", "no"], "answer": 2},
                    {"prompt": "Boolean index?", "options": ["yes", "no"], "answer": True},
                    {"prompt": "No options?"},
                ],
            },
            {"id": "c"},
        ]
    }
    result = run_import(tmp_path, "export.json", json.dumps(document), "json")
    skipped = skipped_at(result)
    assert "names no option" in skipped["banks[0].questions[1]"]
    assert "0-based index" in skipped["banks[0].questions[2]"]
    assert "options" in skipped["banks[0].questions[3]"]
    assert "questions" in skipped["banks[1]"]
    assert load_back(tmp_path, result).questions[0].prompt == "Fine?"
