"""Hearts in the browser: the person at one seat, the three others the computer.

:func:`seat_view` is the only place a position becomes JSON and it reads the seat's
observation (``env.observe``): its own hand, the cards it passed and received, and the cards
played (public). The other hands never leave the server. Moves: ``{"card": 0..51}`` (a pass
while passing, else a play); the computer seats then move until the person's turn again.
"""

from __future__ import annotations

import functools
import secrets

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.hearts import bots
from jaxgames.hearts.cards import NO_PASS, NUM_PLAYERS, PASS_SIZE, PASS_WORDS, card_name
from jaxgames.hearts.game import MAX_TARGET_SCORE, VARIANTS, Hearts
from jaxgames.player import jitted
from jaxgames.web.cards import card, cards
from jaxgames.web.errors import BadRequest, check_keys, require

OPPONENTS = ("pretrained", "agent") + tuple(bots.BOT_NAMES)
OPTIONS = ("opponent", "seat", "variant", "moon", "target_score", "worlds", "seed")
LEARNED = ("pretrained", "agent")
#: most computer moves one request may make (a whole hand of three seats is 3 * 13 + 9)
MAX_COMPUTER_MOVES = 200


@functools.lru_cache(maxsize=None)
def _env(variant: str, moon: bool, target_score: int | None) -> Hearts:
    return Hearts(variant=variant, moon=moon, target_score=target_score)


def opponent(name: str, env: Hearts, worlds: int, agents):
    """The player at the three computer seats (cached by ``agents``)."""
    key = ("hearts", name, env.variant, env.moon, env.target_score, worlds)
    if name == "pretrained":
        from jaxgames import pretrained
        return agents.get(key, lambda: pretrained.load("hearts").playing(env, num_worlds=worlds))
    if name == "agent":
        from jaxgames.hearts.agent import load_agent
        run = agents.run("hearts")
        return agents.get(key + (run,), lambda: load_agent(run, env=env, num_worlds=worlds))
    options = {"num_worlds": worlds} if name == "iie" else {}
    return agents.get(key, lambda: bots.make_bot(env, name, **options))


def _passing(obs) -> bool:
    return int(obs.pass_dir) != NO_PASS and int(obs.num_passed) < NUM_PLAYERS * PASS_SIZE


def seat_view(state, obs, seat: int) -> dict:
    """What ``seat`` may see of ``state``, from its observation ``obs`` (``env.observe(state,
    seat)``) and the public fields of the state (whose turn, the rewards, the legal mask on the
    seat's own turn)."""
    played_by = np.asarray(obs.played_by).astype(int)
    order = np.asarray(obs.play_order).astype(int)
    taken_by = np.asarray(obs.taken_by).astype(int)
    n_played = int((order >= 0).sum())
    tricks = []
    for t in range(n_played // NUM_PLAYERS):
        in_trick = sorted((c for c in range(52) if order[c] // NUM_PLAYERS == t and order[c] >= 0),
                          key=lambda c: order[c])
        tricks.append({"plays": [{"seat": int(played_by[c]), "card": card(c)} for c in in_trick],
                       "taker": int(taken_by[in_trick[0]])})
    trick = np.asarray(obs.trick).astype(int)
    leader = int(obs.leader)
    on_table = [] if leader < 0 else [{"seat": (leader + j) % NUM_PLAYERS, "card": card(trick[(leader + j) % NUM_PLAYERS])}
                                      for j in range(NUM_PLAYERS) if trick[(leader + j) % NUM_PLAYERS] >= 0]
    over = bool(state.terminated)
    to_move = int(state.current_player)
    view = {
        "hand": cards(np.flatnonzero(np.asarray(obs.hand))),
        "passing": _passing(obs),
        "pass_direction": PASS_WORDS[int(obs.pass_dir)],
        "pass_to": (seat + int(obs.pass_dir)) % NUM_PLAYERS,
        "passed": cards(np.flatnonzero(np.asarray(obs.passed))),
        "received": cards(np.flatnonzero(np.asarray(obs.received))),
        "trick": on_table,
        "leader": leader,
        "tricks": tricks,
        "hearts_broken": bool(obs.hearts_broken),
        "points": [int(x) for x in np.asarray(obs.points)],
        "scores": [int(x) for x in np.asarray(obs.scores)],
        "hand_number": int(obs.hand_number) + 1,
        "to_move": None if over else to_move,
        "legal": [],
        "over": over,
    }
    if not over and to_move == seat:
        view["legal"] = cards(np.flatnonzero(np.asarray(state.legal_action_mask)))
    return view


@functools.lru_cache(maxsize=None)
def _learned_values(spec, env: Hearts, worlds: int):
    """Jitted ``values(weights, state, key) -> float32 [52]``: the learned trick search averaged
    over ``worlds`` deals sampled from the mover's view (PIMC, as the agent plays): minus the
    points it expects to take from here, per card."""
    from jaxgames.hearts import learned, trick_maxn
    from jaxgames.search.pimc import pimc_action_values
    search = trick_maxn.trick_search_values(env, learned.value_fn(spec), chunk=learned.LEAF_CHUNK)
    return jax.jit(lambda w, s, k: pimc_action_values(env, s, k, search, num_worlds=worlds, params=w))


@functools.lru_cache(maxsize=None)
def _rule_values(env: Hearts):
    """Jitted ``values(state) -> int32 [52]``: the rule bot's preference per card (passing:
    the passing rule's), from the mover's observation alone."""
    def values(state):
        obs = env.observe(state, state.current_player)
        passing = state.leader < 0
        return jnp.where(passing, bots.pass_scores(obs.hand), bots.rule_scores(obs, state.legal_action_mask))
    return jax.jit(values)


class Game:
    """One game (one hand, or hands to ``target_score``)."""

    def __init__(self, options: dict, agents):
        check_keys(options, OPTIONS, "Hearts option")
        name = require(options, "opponent", str, default="pretrained", choices=OPPONENTS)
        self.seat = require(options, "seat", int, default=0, low=0, high=NUM_PLAYERS - 1)
        variant = require(options, "variant", str, default="standard", choices=VARIANTS)
        moon = require(options, "moon", bool, default=True)
        target = require(options, "target_score", int, low=1, high=MAX_TARGET_SCORE)
        self.worlds = require(options, "worlds", int, default=bots.DEFAULT_WORLDS, low=1, high=200)
        self.seed = require(options, "seed", int, default=secrets.randbelow(2**31), low=0, high=2**32 - 1)
        self.env = _env(variant, moon, target)
        self.opponent_name = name
        self.player = opponent(name, self.env, self.worlds, agents)
        self._step = jitted(self.env.step)
        self._observe = jitted(self.env.observe)
        self._key = jax.random.key(self.seed)
        self.moves = 0
        self.version = 0
        self.hands: list[dict] = []   # the finished hands' points, the last one's too
        self.state = self._computer_moves(self.env.init(jax.random.fold_in(self._key, 0)))

    def _computer_moves(self, state):
        policy = jitted(self.player.policy)
        for _ in range(MAX_COMPUTER_MOVES):
            if bool(state.terminated) or int(state.current_player) == self.seat:
                return state
            self.moves += 1
            action = int(policy(self.player.params, state, jax.random.fold_in(self._key, self.moves)))
            if not bool(np.asarray(state.legal_action_mask)[action]):
                raise RuntimeError(f"{self.player.name} chose the illegal card {action}")
            state = self._step(state, jnp.int32(action))
        raise RuntimeError("the computer seats did not come back to the person")

    def move(self, body: dict) -> None:
        check_keys(body, ("card",), "Hearts move")
        c = require(body, "card", int, low=0, high=51)
        if c is None:
            raise BadRequest('a Hearts move is {"card": 0..51}')
        if bool(self.state.terminated):
            raise BadRequest("the game is over: start a new one", 422)
        if not bool(np.asarray(self.state.legal_action_mask)[c]):
            held = bool(np.asarray(self.state.owner)[c] == self.seat)
            raise BadRequest(f"you cannot {'pass' if self.state.leader < 0 else 'play'} the {card_name(c)} now"
                             + ("" if held else ": you do not hold it"), 422)
        moves = self.moves
        try:
            self.moves += 1
            state = self._computer_moves(self._step(self.state, jnp.int32(c)))
        except Exception:
            self.moves = moves   # nothing happened
            raise
        # a hand ended: the next is dealt, or it was the game's last (one hand, or a score reached
        # the target: the hand number stays, the game is over)
        if int(state.hand_number) > int(self.state.hand_number) or bool(state.terminated):
            before, after = np.asarray(self.state.scores).astype(int), np.asarray(state.scores).astype(int)
            self.hands = self.hands + [{"hand": int(self.state.hand_number) + 1, "points": (after - before).tolist(),
                                        "scores": after.tolist()}]
        self.state = state
        self.version += 1

    def view(self) -> dict:
        return {"game": "hearts", "version": self.version, "opponent": self.player.name, "seed": self.seed,
                "seat": self.seat, "variant": self.env.variant, "target_score": self.env.target_score,
                "hands": self.hands,
                **seat_view(self.state, self._observe(self.state, self.seat), self.seat)}

    def think(self) -> dict:
        """The value of each legal card for the person: the learned player's PIMC values
        (points to come, lower is better) when the opponent is learned, else the rule bot's
        preference (higher is preferred)."""
        s = self.state
        if bool(s.terminated) or int(s.current_player) != self.seat:
            raise BadRequest("not your turn: nothing to think about", 422)
        legal = np.flatnonzero(np.asarray(s.legal_action_mask))
        passing = bool(s.leader < 0)
        if self.opponent_name in LEARNED and not passing:
            values = np.asarray(_learned_values(self.player.spec, self.env, self.worlds)(
                self.player.params, s, jax.random.fold_in(self._key, 10**6 + self.version)))
            return {"who": self.player.name, "kind": f"points it expects you to take from here (PIMC, {self.worlds} worlds)",
                    "lower_is_better": True, "best": card(legal[np.argmax(values[legal])]),
                    "values": [{"card": card(c), "value": float(-values[c])} for c in legal]}
        values = np.asarray(_rule_values(self.env)(s))
        return {"who": "the rule bot" + (" (passing rule)" if passing else ""), "kind": "preference score",
                "lower_is_better": False, "best": card(legal[np.argmax(values[legal])]),
                "values": [{"card": card(c), "value": float(values[c])} for c in legal]}
