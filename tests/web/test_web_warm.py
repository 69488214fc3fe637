"""The server's warm-up (jaxgames.web.warm): after it, a person's game of the same page and
options compiles nothing; a game whose warm-up fails is skipped with one line and the rest go on."""

import io

import jax
import jax.monitoring

from jaxgames.web.agents import Agents
from jaxgames.web.warm import warm_game, warm_up

_traced: list[str] = []
jax.monitoring.register_event_duration_secs_listener(
    lambda name, *args, **kwargs: _traced.append(name) if name == "/jax/core/compile/jaxpr_trace_duration" else None)


def test_after_the_warm_up_a_game_compiles_nothing():
    agents, log = Agents(), io.StringIO()
    warm_up(agents, games=("ten_half", "2048"), log=log)
    assert [line.split(" ready")[0] for line in log.getvalue().splitlines()] == [
        "jaxgames web: ten_half", "jaxgames web: 2048"]
    before = len(_traced)
    for game in ("ten_half", "2048"):
        warm_game(game, agents)          # a new game: another seed, the same programs
    assert len(_traced) == before
    jax.jit(lambda x: x * 3)(1.0)        # the listener hears a program traced for the first time
    assert len(_traced) > before


def test_a_failed_warm_up_is_one_line_and_the_rest_go_on():
    log, waited = io.StringIO(), []

    def ready():
        waited.append(1)
        return len(waited) > 2            # the server answers on the third look

    warm_up(Agents(), games=("chess", "ten_half"), ready=ready, log=log)
    lines = log.getvalue().splitlines()
    assert len(waited) == 3
    assert lines[0].startswith("jaxgames web: warm-up of chess skipped: BadRequest") and "no game 'chess'" in lines[0]
    assert lines[1].startswith("jaxgames web: ten_half ready (")
