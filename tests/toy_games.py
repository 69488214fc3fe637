"""Tiny hand-made games for testing the shared machinery (not registered)."""

import jax
import jax.numpy as jnp
from flax import struct

from jaxgames import core


@struct.dataclass
class DuelState(core.State):
    current_player: jnp.ndarray     # int32 []
    observation: jnp.ndarray        # int32 [1]  moves made so far
    rewards: jnp.ndarray            # float32 [2]
    terminated: jnp.ndarray         # bool []
    truncated: jnp.ndarray          # bool []
    legal_action_mask: jnp.ndarray  # bool [3]
    step_count: jnp.ndarray         # int32 []


class Duel(core.Env):
    """Two players. Seat 0 moves once: action 1 wins (+1/-1), action 0 loses; action 2 is
    never legal. Lets a test know exactly who should win each game."""

    id = "duel"
    num_players = 2
    num_actions = 3

    def _init(self, key):
        return DuelState(current_player=jnp.int32(0), observation=jnp.zeros(1, jnp.int32),
                         rewards=jnp.zeros(2, jnp.float32), terminated=jnp.bool_(False),
                         truncated=jnp.bool_(False),
                         legal_action_mask=jnp.array([True, True, False]), step_count=jnp.int32(0))

    def _step(self, state, action, key):
        sign = jnp.where(action == 1, 1.0, -1.0)
        return state.replace(rewards=jnp.array([1.0, -1.0]) * sign, terminated=jnp.bool_(True),
                             current_player=jnp.int32(1))

    def _observe(self, state, player_id):
        return state.step_count.reshape(1)


@struct.dataclass
class HighCardState(core.State):
    current_player: jnp.ndarray     # int32 []
    observation: jnp.ndarray        # float32 [4]  own card one-hot, bet made
    rewards: jnp.ndarray            # float32 [2]
    terminated: jnp.ndarray         # bool []
    truncated: jnp.ndarray          # bool []
    legal_action_mask: jnp.ndarray  # bool [2]
    step_count: jnp.ndarray         # int32 []
    cards: jnp.ndarray              # int32 [2]  each seat's hidden card, 0..2, distinct
    bet: jnp.ndarray                # bool []  seat 0 has bet


class HighCard(core.Env):
    """Two players, a deck of three cards (0 < 1 < 2), one hidden card each. Seat 0 checks (0:
    showdown for 1) or bets (1); after a bet seat 1 folds (0: seat 0 wins 1) or calls (1:
    showdown for 2). The smallest game with hidden cards: ``sample_world`` redeals the
    opponent's card from the two the player does not hold."""

    id = "high_card"
    num_players = 2
    num_actions = 2
    stochastic = True
    perfect_information = False

    def _init(self, key):
        cards = jax.random.permutation(key, 3)[:2].astype(jnp.int32)
        return HighCardState(current_player=jnp.int32(0), observation=jnp.zeros(4, jnp.float32),
                             rewards=jnp.zeros(2, jnp.float32), terminated=jnp.bool_(False),
                             truncated=jnp.bool_(False), legal_action_mask=jnp.ones(2, bool),
                             step_count=jnp.int32(0), cards=cards, bet=jnp.bool_(False))

    def _step(self, state, action, key):
        showdown = jnp.where(state.cards[0] > state.cards[1], 1.0, -1.0) * jnp.array([1.0, -1.0])
        first = state.current_player == 0
        rewards = jnp.where(first, jnp.where(action == 0, showdown, 0.0),
                            jnp.where(action == 0, jnp.array([1.0, -1.0]), 2 * showdown))
        done = ~first | (action == 0)
        return state.replace(rewards=rewards.astype(jnp.float32), terminated=done,
                             bet=state.bet | (first & (action == 1)),
                             current_player=jnp.where(done, state.current_player, 1).astype(jnp.int32))

    def _observe(self, state, player_id):
        own = jax.nn.one_hot(state.cards[player_id], 3)
        return jnp.concatenate([own, state.bet[None].astype(jnp.float32)])

    def sample_world(self, state, player_id, key):
        own = state.cards[player_id]
        others = jnp.where(jnp.arange(2) < own, jnp.arange(2), jnp.arange(2) + 1)  # the 2 cards != own
        other = others[jax.random.randint(key, (), 0, 2)]
        cards = jnp.where(jnp.arange(2) == player_id, own, other).astype(jnp.int32)
        return state.replace(cards=cards)


@struct.dataclass
class TakeState(core.State):
    current_player: jnp.ndarray     # int32 []
    observation: jnp.ndarray        # int32 [1]  moves made so far
    rewards: jnp.ndarray            # float32 [4]
    terminated: jnp.ndarray         # bool []
    truncated: jnp.ndarray          # bool []
    legal_action_mask: jnp.ndarray  # bool [2]
    step_count: jnp.ndarray         # int32 []


class Take(core.Env):
    """Four players, each moves once in seat order: action 1 takes a point (+1 to the mover),
    action 0 passes. A seat's return is exactly what its own policy chose."""

    id = "take"
    num_players = 4
    num_actions = 2

    def _init(self, key):
        return TakeState(current_player=jnp.int32(0), observation=jnp.zeros(1, jnp.int32),
                         rewards=jnp.zeros(4, jnp.float32), terminated=jnp.bool_(False),
                         truncated=jnp.bool_(False), legal_action_mask=jnp.ones(2, bool),
                         step_count=jnp.int32(0))

    def _step(self, state, action, key):
        rewards = jax.nn.one_hot(state.current_player, 4) * action.astype(jnp.float32)
        done = state.current_player == 3
        return state.replace(rewards=rewards, terminated=done,
                             current_player=jnp.where(done, 3, state.current_player + 1).astype(jnp.int32))

    def _observe(self, state, player_id):
        return state.step_count.reshape(1)


@struct.dataclass
class TallyState(core.State):
    current_player: jnp.ndarray     # int32 []
    observation: jnp.ndarray        # int32 [1]  moves made so far
    rewards: jnp.ndarray            # float32 [3]
    terminated: jnp.ndarray         # bool []
    truncated: jnp.ndarray          # bool []
    legal_action_mask: jnp.ndarray  # bool [3]
    step_count: jnp.ndarray         # int32 []


class Tally(core.Env):
    """Three players in turn 0, 1, 2, 0 ...; every move pays every seat, so a test knows each
    seat's reward of each move (and a sum of them tells which moves were made): the mover gets
    ``1000 * (action + 1)``, each other seat ``10 ** mover * (action + 1)``. Action 2 ends the
    game at once; otherwise it ends after ``length`` moves."""

    id = "tally"
    num_players = 3
    num_actions = 3

    def __init__(self, length: int = 4):
        self.length = length

    def _init(self, key):
        return TallyState(current_player=jnp.int32(0), observation=jnp.zeros(1, jnp.int32),
                          rewards=jnp.zeros(3, jnp.float32), terminated=jnp.bool_(False),
                          truncated=jnp.bool_(False), legal_action_mask=jnp.ones(3, bool),
                          step_count=jnp.int32(0))

    def _step(self, state, action, key):
        mover = state.current_player
        paid = (action + 1).astype(jnp.float32)
        rewards = jnp.where(jnp.arange(3) == mover, 1000.0 * paid, jnp.array([1.0, 10.0, 100.0])[mover] * paid)
        done = (action == 2) | (state.step_count >= self.length)
        return state.replace(rewards=rewards.astype(jnp.float32), terminated=done,
                             current_player=jnp.where(done, mover, (mover + 1) % 3).astype(jnp.int32))

    def _observe(self, state, player_id):
        return state.step_count.reshape(1)


@struct.dataclass
class BitGuessState(core.State):
    current_player: jnp.ndarray     # int32 []
    observation: jnp.ndarray        # float32 [4]  own bit one-hot, own seat one-hot
    rewards: jnp.ndarray            # float32 [2]
    terminated: jnp.ndarray         # bool []
    truncated: jnp.ndarray          # bool []
    legal_action_mask: jnp.ndarray  # bool [2]
    step_count: jnp.ndarray         # int32 []
    bits: jnp.ndarray               # int32 [2]  each seat's private bit
    first: jnp.ndarray              # float32 []  seat 0's score: +1 it named its bit, -1 not


class BitGuess(core.Env):
    """Two players, each dealt a private random bit; seat 0 then seat 1 names a bit, scoring
    +1 for its own and -1 otherwise; at the end seat 0 gets ``(score0 - score1) / 2`` and seat
    1 the opposite. Naming one's own bit is optimal: +1/2 a game against a random player
    (winning half the games, losing none), where random play gets 0 (winning a quarter).
    (No ``sample_world``: not for PIMC.)"""

    id = "bit_guess"
    num_players = 2
    num_actions = 2
    stochastic = True
    perfect_information = False

    def _init(self, key):
        bits = jax.random.randint(key, (2,), 0, 2, dtype=jnp.int32)
        return BitGuessState(current_player=jnp.int32(0), observation=jnp.zeros(4, jnp.float32),
                             rewards=jnp.zeros(2, jnp.float32), terminated=jnp.bool_(False),
                             truncated=jnp.bool_(False), legal_action_mask=jnp.ones(2, bool),
                             step_count=jnp.int32(0), bits=bits, first=jnp.float32(0))

    def _step(self, state, action, key):
        mover = state.current_player
        score = jnp.where(action == state.bits[mover], 1.0, -1.0)
        second = mover == 1
        r0 = (state.first - score) / 2.0
        return state.replace(rewards=jnp.where(second, jnp.stack([r0, -r0]), 0.0).astype(jnp.float32),
                             terminated=second, first=jnp.where(second, state.first, score),
                             current_player=jnp.where(second, mover, 1).astype(jnp.int32))

    def _observe(self, state, player_id):
        return jnp.concatenate([jax.nn.one_hot(state.bits[player_id], 2), jax.nn.one_hot(player_id, 2)])
