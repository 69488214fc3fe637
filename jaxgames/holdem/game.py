"""Heads-up no-limit Texas hold'em as a :class:`jaxgames.core.Env`.

The HUNL of the computer-poker competitions and of AlphaHoldem: two seats, stacks of 20,000
chips reset every hand, blinds 50/100. The button posts the small blind, acts first preflop
and second on the flop, turn and river. Nine actions (``betting.py``): fold, check, call,
raises of ½, ¾, 1, 1½ and 2 pots, all-in. The whole deal is shuffled in ``init`` and kept in
the state (``cards.py`` says which deck position goes where), so ``step`` is deterministic and
duplicate play (same deal, seats swapped) needs nothing more. Rewards are chips: each seat's
net gain, paid on the step that ends the hand. Rules as implemented: docs/rules/holdem.md.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxgames import core, rng
from jaxgames.holdem import betting
from jaxgames.holdem import cards as C
from jaxgames.holdem import hand_eval

Array = jax.Array

PREFLOP, FLOP, TURN, RIVER, SHOWDOWN = range(5)
STREET_NAMES = ("preflop", "flop", "turn", "river", "showdown")


@struct.dataclass
class Observation:
    """What one seat sees: its own cards and everything public. -1 marks what it cannot see."""

    player: Array          # int8 []  the observing seat
    hole: Array            # int8 [2]  its hole cards
    board: Array           # int8 [5]  flop, turn, river; -1 not dealt yet
    street: Array          # int8 []  0 preflop, 1 flop, 2 turn, 3 river, 4 showdown
    button: Array          # int8 []  the seat on the button (small blind)
    to_act: Array          # int8 []  the seat to act (after the end: the one that would be next)
    stacks: Array          # int32 [2]  chips behind, per seat
    bets: Array            # int32 [2]  chips put in on this street, per seat (blinds included)
    committed: Array       # int32 [2]  chips put in this hand, per seat
    pot: Array             # int32 []  committed.sum()
    history: Array         # int8 [H, 3]  per action: seat, action id, street; -1 rows after the last
    history_chips: Array   # int32 [H]  chips each action put in; -1 after the last
    history_legal: Array   # bool [H, 9]  the legal mask each action was chosen from; False after the last


@struct.dataclass
class State(core.State):
    current_player: Array      # int32 []  seat to act (after the end: the one that would be next)
    observation: Observation   # the mover's view (``observe(state, current_player)``)
    rewards: Array             # float32 [2]  net chips won, on the step that ends the hand
    terminated: Array          # bool []
    truncated: Array           # bool []  never True: max_steps is a proven bound on a hand
    legal_action_mask: Array   # bool [9]
    step_count: Array          # int32 []  actions played this hand
    deck: Array                # int8 [52]  the shuffled deck; positions in cards.py
    button: Array              # int32 []  seat of the button (posts the small blind)
    street: Array              # int8 []  0 preflop … 3 river, 4 showdown
    stacks: Array              # int32 [2]  chips behind
    bets: Array                # int32 [2]  chips put in on this street
    committed: Array           # int32 [2]  chips put in this hand
    min_raise: Array           # int32 []  smallest legal raise increment: the street's last bet or raise, >= big blind
    acted: Array               # bool [2]  acted on this street since the last bet or raise
    showdown: Array            # int8 []  seat 0's showdown result from the deal: +1 wins, -1 loses, 0 split
    history: Array             # int8 [H, 3]  seat, action, street per action; -1 padding
    history_chips: Array       # int32 [H]  chips put in per action; -1 padding
    history_legal: Array       # bool [H, 9]  the mover's legal mask at each action; False padding


def _positive_int(name: str, value) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"holdem {name} must be a positive integer number of chips, got {value!r}")
    return int(value)


class Holdem(core.Env):
    """``stack`` (20,000), ``small_blind`` (50), ``big_blind`` (100): whole chips, with
    ``small_blind <= big_blind < stack <= 100,000,000``."""

    id = "holdem"
    num_players = 2
    num_actions = betting.NUM_ACTIONS
    stochastic = False            # the deal happens in init; step only bets
    perfect_information = False

    def __init__(self, *, stack: int = 20_000, small_blind: int = 50, big_blind: int = 100):
        self.stack = _positive_int("stack", stack)
        self.small_blind = _positive_int("small_blind", small_blind)
        self.big_blind = _positive_int("big_blind", big_blind)
        if self.small_blind > self.big_blind:
            raise ValueError(f"holdem small_blind ({small_blind}) must not exceed big_blind ({big_blind})")
        if not self.big_blind < self.stack <= betting.MAX_STACK:
            raise ValueError(f"holdem stack must be above the big blind ({big_blind}) and at most "
                             f"{betting.MAX_STACK:,}, got {stack}")
        #: the most actions a hand can take (a proven, tight bound): history rows and max_steps
        self.history_length = betting.max_actions(self.stack, self.small_blind, self.big_blind)
        self.max_steps = self.history_length
        #: an illegal action loses the hand at its worst legal cost: the whole stack
        self.illegal_action_penalty = -float(self.stack)

    # -- the deal -----------------------------------------------------------------------------

    def shuffle(self, key: core.PRNGKey) -> Array:
        """int8 [52]: a random deck: the nine dealt positions a uniformly random draw without
        replacement, the 43 other cards after them in increasing order (``cards.deal_deck``)."""
        return C.deal_deck(jnp.full(C.NUM_DEALT, -1, jnp.int32), rng.random_words(key, C.NUM_DEALT))

    def deal(self, deck: Array, button: Array | int = 0, stacks: Array | None = None) -> State:
        """The first decision of a hand dealt from ``deck`` (int8 [52]) with ``button`` on the
        button and ``stacks`` (int32 [2] before the blinds; default the option ``stack`` each;
        each above the big blind and at most ``stack``, which the history bound assumes).
        Jittable; ``init`` and ``reset`` use it, tests build hands with it. A ``button`` other
        than 0 or 1 is a ValueError where it is known at trace time; a traced one is clipped
        to 0 .. 1."""
        deck = jnp.asarray(deck, jnp.int8)
        button, _ = self._check_seat(button, "deal")
        if stacks is None:
            stacks = jnp.full(2, self.stack, jnp.int32)
        if not isinstance(stacks, jax.core.Tracer):  # checked where it can be: outside jit
            given = np.asarray(stacks)
            if given.shape != (2,) or not ((given > self.big_blind) & (given <= self.stack)).all():
                raise ValueError(f"holdem stacks must be two chip counts above the big blind "
                                 f"({self.big_blind}) and at most the stack option ({self.stack}), got {given}")
        stacks = jnp.asarray(stacks, jnp.int32)
        seats = jnp.arange(2, dtype=jnp.int32)
        blinds = jnp.minimum(jnp.where(seats == button, self.small_blind, self.big_blind), stacks)
        h = self.history_length
        state = State(
            current_player=button,
            observation=None,
            rewards=jnp.zeros(2, jnp.float32),
            terminated=jnp.bool_(False),
            truncated=jnp.bool_(False),
            legal_action_mask=jnp.zeros(self.num_actions, jnp.bool_),
            step_count=jnp.int32(0),
            deck=deck,
            button=button,
            street=jnp.int8(PREFLOP),
            stacks=stacks - blinds,
            bets=blinds,
            committed=blinds,
            min_raise=jnp.int32(self.big_blind),
            acted=jnp.zeros(2, jnp.bool_),
            showdown=self._showdown_at_deal(deck),
            history=jnp.full((h, 3), -1, jnp.int8),
            history_chips=jnp.full(h, -1, jnp.int32),
            history_legal=jnp.zeros((h, self.num_actions), jnp.bool_),
        )
        state = state.replace(legal_action_mask=self._legal_mask(state))
        return state.replace(observation=self._own_observation(state))

    @staticmethod
    def _showdown_at_deal(deck: Array) -> Array:
        # a hook only so that bench/holdem_env.py can time the alternative (at the last step)
        return showdown_result(deck)

    # -- core.Env -----------------------------------------------------------------------------

    def _init(self, key: core.PRNGKey) -> State:
        return self.deal(self.shuffle(key), 0)

    def reset(self, key: core.PRNGKey, previous: State) -> State:
        """The next hand of a sequence: a new deal, the button on the other seat, stacks reset."""
        return self.deal(self.shuffle(key), 1 - previous.button)

    def _legal_mask(self, state: State) -> Array:
        me = state.current_player
        to_call = jnp.maximum(state.bets[1 - me] - state.bets[me], 0)
        return betting.legal_mask(state.committed.sum(), to_call, state.stacks[me],
                                  state.stacks[1 - me], state.min_raise)

    def _step(self, state: State, action: Array, key: core.PRNGKey) -> State:
        del key  # the deal is in the state
        me = state.current_player
        opp = 1 - me
        is_me = jnp.arange(2) == me
        to_call = jnp.maximum(state.bets[opp] - state.bets[me], 0)
        put = betting.amounts(state.committed.sum(), to_call, state.stacks[me])[action]
        bets = state.bets + jnp.where(is_me, put, 0)
        committed = state.committed + jnp.where(is_me, put, 0)
        stacks = state.stacks - jnp.where(is_me, put, 0)
        raised = bets[me] > bets[opp]
        min_raise = jnp.where(raised, jnp.maximum(state.min_raise, bets[me] - bets[opp]), state.min_raise)
        acted = is_me | (state.acted & ~raised)  # a raise reopens the opponent's action

        folded = action == betting.FOLD
        broke = stacks == 0
        # The street is over when each seat has acted since the last raise (or is all-in) and
        # the bets are equal, or the smaller bet is an all-in.
        settled = (bets[0] == bets[1]) | ((bets[0] < bets[1]) & broke[0]) | ((bets[1] < bets[0]) & broke[1])
        street_over = (acted | broke).all() & settled & ~folded
        # No more betting once a seat is all-in: the board is run out to the showdown.
        at_showdown = street_over & (broke.any() | (state.street == RIVER))
        next_street = street_over & ~at_showdown

        # Rewards: a fold loses what the folder put in (the winner's uncalled chips come back);
        # a showdown contests the smaller commitment (the excess is uncalled) and splits on a tie.
        fold_rewards = jnp.where(is_me, -committed[me], committed[me])
        contested = jnp.minimum(committed[0], committed[1])
        win0 = state.showdown.astype(jnp.int32) * contested
        showdown_rewards = jnp.stack([win0, -win0])
        rewards = jnp.where(folded, fold_rewards, jnp.where(at_showdown, showdown_rewards, 0))

        row = state.step_count - 1  # core incremented it already
        history = state.history.at[row].set(jnp.stack([me, action, state.street.astype(jnp.int32)]).astype(jnp.int8))
        history_chips = state.history_chips.at[row].set(put)
        # the mask the mover chose from (the state's, before the action): AlphaHoldem's
        # action encoding shows it beside each past action (encode.py)
        history_legal = state.history_legal.at[row].set(state.legal_action_mask)

        new = state.replace(
            current_player=jnp.where(next_street, 1 - state.button, opp).astype(jnp.int32),
            rewards=rewards.astype(jnp.float32),
            terminated=folded | at_showdown,
            street=jnp.where(at_showdown, SHOWDOWN, state.street + next_street).astype(jnp.int8),
            stacks=stacks,
            bets=jnp.where(next_street, 0, bets),
            committed=committed,
            min_raise=jnp.where(next_street, self.big_blind, min_raise).astype(jnp.int32),
            acted=acted & ~next_street,
            history=history,
            history_chips=history_chips,
            history_legal=history_legal,
        )
        return new.replace(legal_action_mask=self._legal_mask(new))

    def _observe(self, state: State, player_id: Array) -> Observation:
        hole = jax.lax.dynamic_slice(state.deck, (2 * player_id,), (2,))
        visible = jnp.asarray(C.BOARD_VISIBLE)[state.street]
        board = jnp.where(jnp.arange(5) < visible, state.deck[4:9], -1).astype(jnp.int8)
        return Observation(
            player=player_id.astype(jnp.int8),
            hole=hole,
            board=board,
            street=state.street,
            button=state.button.astype(jnp.int8),
            to_act=state.current_player.astype(jnp.int8),
            stacks=state.stacks,
            bets=state.bets,
            committed=state.committed,
            pot=state.committed.sum(),
            history=state.history,
            history_chips=state.history_chips,
            history_legal=state.history_legal,
        )

    # -- hidden information -------------------------------------------------------------------

    def sample_world(self, state: State, player_id: Array, key: core.PRNGKey) -> State:
        """The same hand with every card ``player_id`` has not seen redealt: the opponent's
        hole cards and the undealt board are drawn uniformly from the cards it has not seen
        (``cards.deal_deck``, which also rebuilds the never-dealt tail).

        Reads only ``player_id``'s own cards and the dealt board, so the real arrangement of
        the hidden cards never matters. ``player_id`` is checked by :mod:`jaxgames.core`: a
        seat other than 0 or 1 is a ValueError, or, traced, gives ``blank_world``."""
        player_id = jnp.asarray(player_id, jnp.int32)
        pos = jnp.arange(C.NUM_DEALT)
        visible = jnp.asarray(C.BOARD_VISIBLE)[state.street]
        known_pos = ((pos // 2) == player_id) | ((pos >= 4) & (pos < 4 + visible))
        dealt = jnp.where(known_pos, state.deck[:C.NUM_DEALT].astype(jnp.int32), -1)
        deck = C.deal_deck(dealt, rng.random_words(key, C.NUM_DEALT))
        world = state.replace(deck=deck, showdown=showdown_result(deck))
        return world.replace(observation=self._own_observation(world))

    # -- helpers ------------------------------------------------------------------------------

    def action_name(self, action: int) -> str:
        return betting.ACTION_NAMES[int(action)]


def showdown_result(deck: Array) -> Array:
    """int8 []: seat 0's result if the hand dealt from ``deck`` goes to a showdown: +1 its
    best five of seven cards beat seat 1's, -1 they lose, 0 a split pot.

    Computed once per hand, at the deal: under ``vmap`` a showdown evaluated where the hand
    ends would run on every step of every game (a select computes both sides)."""
    deck = deck.astype(jnp.int32)
    board = deck[4:9]
    hands = jnp.stack([jnp.concatenate([deck[0:2], board]), jnp.concatenate([deck[2:4], board])])
    values = hand_eval.evaluate(hands)
    return jnp.sign(values[0] - values[1]).astype(jnp.int8)
