from bot.chat import Command, Interaction
from bot.quiz.service import QuizService
from tests.conftest import CHANNEL
from tests.fakes.clock import FakeClock
from tests.fakes.recording import RecordingAdapter


async def test_live_quiz_round_trip(
    service: QuizService, adapter: RecordingAdapter, clock: FakeClock
) -> None:
    reply = await service.handle_command(
        Command("start", CHANNEL, "mod", is_moderator=True, args={"questions": "2", "seconds": "10"})
    )
    assert "Starting a quiz" in reply.text
    button = adapter.button_id(CHANNEL, "A")
    reply = await service.handle_click(Interaction(CHANNEL, "u1", button))
    assert reply.text.startswith("Locked in A")
    clock.advance(11)
    await service.tick()
    assert len(adapter.questions(CHANNEL)) == 2
    assert "(closed)" in (adapter.questions(CHANNEL)[0].latest.title or "")
    clock.advance(11)
    await service.tick()
    print(adapter.sent[-1].message.text)
    assert "final scores" in adapter.sent[-1].message.text
