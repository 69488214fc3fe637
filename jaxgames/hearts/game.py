"""Hearts as a :class:`jaxgames.core.Env`: four players, 52 cards, 13 tricks a hand.

Rules as implemented, with every option: ``docs/rules/hearts.md``. In short:

* Actions are cards (``4 * rank + suit``, :mod:`jaxgames.hearts.cards`): a pass during the
  passing phase, the card played otherwise. Seats play in the order 0 -> 1 -> 2 -> 3.
* ``variant="standard"``: each player passes three cards (left, right, across, none in
  rotation over the hands of a game; seat 0 passes its three first, then 1, 2, 3, one card a
  step, hidden from the others); the 2♣ leads the first trick; no heart or Q♠ on the first
  trick unless a player has nothing else; hearts may be led only once a heart has been played
  (or the leader holds nothing but hearts). ``variant="paper"`` (Sturtevant & White): no
  passing, any card may be led at any time (seat ``hand_number % 4`` leads the first trick).
* Follow suit if possible; the highest card of the led suit takes the trick. Each heart is
  1 point, the Q♠ 13. ``moon=True``: a player who takes all 26 scores 0 and each other 26.
* Rewards are minus the points taken, paid to the trick's taker as each trick is taken; the
  moon's correction comes on the hand's last trick, so a hand's rewards sum to -26 (-78 when
  the moon is shot). ``target_score=None`` plays one hand; ``target_score=T`` plays hands
  until some score reaches ``T``.

The deal is drawn in ``init`` (every later hand of a ``target_score`` game too, stored packed
in the state), so ``step`` is deterministic and needs no key.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxgames import core, rng
from jaxgames.hearts import deal as D
from jaxgames.hearts.cards import (
    HAND_SIZE,
    HEARTS,
    IS_POINT,
    NEXT_PASS,
    NO_PASS,
    NUM_CARDS,
    NUM_PLAYERS,
    PASS_NAMES,
    PASS_SIZE,
    QUEEN_OF_SPADES,
    SUIT,
    TOTAL_POINTS,
    TWO_OF_CLUBS,
)

Array = jax.Array

VARIANTS = ("standard", "paper")
#: passes made in a passing hand (3 by each of the 4 players)
NUM_PASSES = NUM_PLAYERS * PASS_SIZE
#: most ``target_score`` allowed (the later hands' deals are stored in the state)
MAX_TARGET_SCORE = 1000

_CARDS = np.arange(NUM_CARDS)
_SEATS = np.arange(NUM_PLAYERS)

# play_mask's tables. The legal set is the hand cut by one of these card sets, numbered as
# bits of _ALLOWED[c]: 0..3 the suit, then the cards without points, the non-hearts, all, the 2♣.
_NO_POINTS, _NOT_HEARTS, _ANY, _ONLY_TWO_OF_CLUBS = 4, 5, 6, 7
_ALLOWED = ((1 << SUIT.astype(np.int32)) | (np.where(IS_POINT, 0, 1) << _NO_POINTS)
            | (np.where(SUIT == HEARTS, 0, 1) << _NOT_HEARTS) | (1 << _ANY)
            | (np.where(_CARDS == TWO_OF_CLUBS, 1, 0) << _ONLY_TWO_OF_CLUBS)).astype(np.int32)
# What a hand holds, in one sum: 6 bits per suit (counts < 64), then the cards without points.
_COUNT_BITS, _COUNT_MASK = 6, 63
_SAFE_SHIFT = 4 * _COUNT_BITS
_OTHER_SUITS = sum(_COUNT_MASK << (_COUNT_BITS * s) for s in range(4) if s != HEARTS)   # the non-heart counts
_COUNT_CODE = ((1 << (_COUNT_BITS * SUIT.astype(np.int32))) + np.where(IS_POINT, 0, 1 << _SAFE_SHIFT)).astype(np.int32)


@struct.dataclass
class Observation:
    """What one player sees: nothing it cannot know. Seats are absolute (0..3)."""

    seat: Array            # int8 []        the observing player
    hand: Array            # bool [52]      cards it holds
    played_by: Array       # int8 [52]      seat that played each card this hand, -1 unplayed
    play_order: Array      # int8 [52]      when: 0..51 (trick = // 4, place in it = % 4), -1
    taken_by: Array        # int8 [52]      seat that took each card (its trick's winner), -1
    trick: Array           # int8 [4]       the current trick's cards by seat, -1 not played
    leader: Array          # int8 []        seat that leads (led) the current trick, -1 while passing
    passed: Array          # bool [52]      cards it passed this hand
    received: Array        # bool [52]      cards passed to it this hand (once all 12 are made)
    pass_dir: Array        # int8 []        0 none, 1 left, 2 across, 3 right (receiver - passer)
    num_passed: Array      # int8 []        passes made this hand, 0..12
    hearts_broken: Array   # bool []        a heart has been played this hand
    cannot_hold: Array     # bool [4, 52]   public inferences: seat s holds no card c (voids ...)
    points: Array          # int16 [4]      points taken this hand so far (before the moon)
    scores: Array          # int16 [4]      points of the finished hands (the moon applied)
    hand_number: Array     # int16 []       0 for the first hand


@struct.dataclass
class State(core.State):
    current_player: Array      # int32 []       seat to move (after the end: the last trick's taker)
    observation: Observation   # observe(state, current_player)
    rewards: Array             # float32 [4]    minus the points taken on this step
    terminated: Array          # bool []
    truncated: Array           # bool []        always False (every game ends by itself)
    legal_action_mask: Array   # bool [52]
    step_count: Array          # int32 []
    owner: Array               # int8 [52]      seat holding each card; -1 played or being passed
    passed_by: Array           # int8 [52]      seat that passed each card this hand, -1
    played_by: Array           # int8 [52]      seat that played each card this hand, -1
    play_order: Array          # int8 [52]      0..51 the order of play this hand, -1
    taken_by: Array            # int8 [52]      seat that took each card, -1
    trick: Array               # int8 [4]       current trick's cards by seat, -1
    leader: Array              # int8 []        leader of the current trick, -1 while passing
    num_played: Array          # int8 []        cards played this hand, 0..52
    num_passed: Array          # int8 []        passes made this hand, 0..12
    pass_dir: Array            # int8 []        this hand's pass direction (0 none, 1, 2, 3)
    hearts_broken: Array       # bool []
    cannot_hold: Array         # bool [4, 52]   public inferences from the play (see docs)
    points: Array              # int16 [4]      points taken this hand (before the moon)
    scores: Array              # int16 [4]      points of the finished hands (moon applied)
    hand_number: Array         # int16 []
    next_deals: Array          # uint8 [H, 13]  the later hands' deals, packed (H = 0: one hand)


def max_hands(target_score: int | None) -> int:
    """The most hands a game can last: one without a target; with one, every hand adds at
    least 26 points to the four scores, so some score reaches ``T`` within
    ``floor(4 (T - 1) / 26) + 1`` hands."""
    if target_score is None:
        return 1
    return 4 * (target_score - 1) // TOTAL_POINTS + 1


class Hearts(core.Env):
    """Hearts. Options (keyword-only, validated):

    * ``variant``: ``"standard"`` (default) or ``"paper"``;
    * ``moon``: shooting the moon scores (default True);
    * ``target_score``: ``None`` (default) plays one hand; an integer 1..1000 plays hands
      until a score reaches it;
    * ``first_pass``: the first hand's pass direction, ``"left"`` (standard's default),
      ``"right"``, ``"across"``, ``"none"``, or ``"random"`` (drawn in ``init``); later hands
      rotate left -> right -> across -> none. The paper variant never passes.
    """

    id = "hearts"
    num_players = NUM_PLAYERS
    num_actions = NUM_CARDS
    stochastic = False          # the deal is drawn in init; step needs no key
    perfect_information = False

    def __init__(self, *, variant: str = "standard", moon: bool = True,
                 target_score: int | None = None, first_pass: str | None = None):
        if variant not in VARIANTS:
            raise ValueError(f"hearts variant must be one of {', '.join(map(repr, VARIANTS))}, got {variant!r}")
        if not isinstance(moon, (bool, np.bool_)):
            raise ValueError(f"hearts moon must be True or False, got {moon!r}")
        if target_score is not None and (isinstance(target_score, (bool, np.bool_))
                                         or not isinstance(target_score, (int, np.integer))
                                         or not 1 <= target_score <= MAX_TARGET_SCORE):
            raise ValueError(f"hearts target_score must be None (one hand) or an integer from 1 to "
                             f"{MAX_TARGET_SCORE}, got {target_score!r}")
        choices = ("left", "right", "across", "none", "random")
        if first_pass is None:
            first_pass = "left" if variant == "standard" else "none"
        if first_pass not in choices:
            raise ValueError(f"hearts first_pass must be one of {', '.join(map(repr, choices))}, "
                             f"got {first_pass!r}")
        if variant == "paper" and first_pass != "none":
            raise ValueError(f"the paper variant has no passing: first_pass must be 'none', got {first_pass!r}")
        self.variant = variant
        self.standard = variant == "standard"
        self.moon = bool(moon)
        self.target_score = None if target_score is None else int(target_score)
        self.first_pass = first_pass
        self.max_hands = max_hands(self.target_score)
        # Worse than anything a game can cost a player: 26 a hand, or the final score of a game
        # (under target + 26: the last hand starts with every score below the target).
        self.illegal_action_penalty = -27.0 if self.target_score is None else -float(self.target_score + 26)

    # -- core.Env -----------------------------------------------------------------------------

    def _init(self, key: core.PRNGKey) -> State:
        later = jnp.zeros((0, 13), jnp.uint8)
        if self.max_hands > 1:  # a game to target_score: every later hand's deal, drawn now
            key, k_later = rng.split(key, 2)
            later = D.pack_deal(D.deal_owners(k_later, self.max_hands - 1))
        owner = D.deal_owner(key)
        if self.first_pass == "random":
            # a word the deal did not use (the deal reads words 0..51 of the same stream)
            pass_dir = (rng.random_words(key, NUM_CARDS + 1)[NUM_CARDS] % 4).astype(jnp.int8)
        else:
            pass_dir = jnp.int8(PASS_NAMES[self.first_pass])
        return self.from_deal(owner, pass_dir=pass_dir, next_deals=later)

    def from_deal(self, owner, *, pass_dir=None, hand_number=0, scores=None, next_deals=None) -> State:
        """The state at the start of a hand dealt as ``owner`` (int [52]: the seat of each
        card, 13 each). Jittable; for hand-made positions and replays.

        ``pass_dir`` defaults to the first hand's (``first_pass``; ``"random"`` gives left),
        ``scores`` to zeros, ``next_deals`` (uint8 [max_hands - 1, 13], packed) to the given
        deal repeated. An ``owner`` known at trace time that is not 52 seats 0 .. 3, 13 each,
        is a ValueError (a traced one is taken as it is).
        """
        if not isinstance(owner, jax.core.Tracer):
            seats = np.asarray(owner)
            dealt = (seats.shape == (NUM_CARDS,) and np.issubdtype(seats.dtype, np.integer)
                     and bool(((seats >= 0) & (seats < NUM_PLAYERS)).all())
                     and bool((np.bincount(seats, minlength=NUM_PLAYERS) == HAND_SIZE).all()))
            if not dealt:
                raise ValueError(f"hearts from_deal: owner must be the seat (0 to {NUM_PLAYERS - 1}) of "
                                 f"each of the {NUM_CARDS} cards, {HAND_SIZE} cards a seat; got {seats!r}")
        owner = jnp.asarray(owner, jnp.int8)
        if pass_dir is None:
            pass_dir = PASS_NAMES.get(self.first_pass, 1)
        if next_deals is None:
            next_deals = jnp.tile(D.pack_deal(owner)[None], (self.max_hands - 1, 1))
        scores = jnp.zeros(NUM_PLAYERS, jnp.int16) if scores is None else jnp.asarray(scores, jnp.int16)
        hand = self._new_hand(owner, jnp.asarray(pass_dir, jnp.int8), jnp.asarray(hand_number, jnp.int16))
        state = State(
            observation=None,
            legal_action_mask=jnp.zeros(NUM_CARDS, jnp.bool_),
            rewards=jnp.zeros(NUM_PLAYERS, jnp.float32),
            terminated=jnp.bool_(False),
            truncated=jnp.bool_(False),
            step_count=jnp.int32(0),
            scores=scores,
            next_deals=jnp.asarray(next_deals, jnp.uint8),
            **hand,
        )
        state = state.replace(legal_action_mask=self.legal_mask(state))
        return state.replace(observation=self._observe(state, state.current_player))

    def _new_hand(self, owner: Array, pass_dir: Array, hand_number: Array) -> dict:
        """The per-hand fields at the start of a hand, and who moves first."""
        pass_dir = pass_dir if self.standard else jnp.int8(NO_PASS)
        passing = pass_dir != NO_PASS
        if self.standard:
            first = owner[TWO_OF_CLUBS].astype(jnp.int8)       # the 2♣ leads
        else:
            first = (hand_number % NUM_PLAYERS).astype(jnp.int8)
        leader = jnp.where(passing, jnp.int8(-1), first)
        current = jnp.where(passing, jnp.int8(0), first)       # seat 0 passes first
        cannot_hold = jnp.zeros((NUM_PLAYERS, NUM_CARDS), jnp.bool_)
        if self.standard:  # once play starts everyone knows who holds the 2♣
            cannot_hold = _two_of_clubs_known(cannot_hold, first, ~passing)
        fields = dict(
            current_player=current.astype(jnp.int32),
            owner=owner,
            passed_by=jnp.full(NUM_CARDS, -1, jnp.int8),
            played_by=jnp.full(NUM_CARDS, -1, jnp.int8),
            play_order=jnp.full(NUM_CARDS, -1, jnp.int8),
            taken_by=jnp.full(NUM_CARDS, -1, jnp.int8),
            trick=jnp.full(NUM_PLAYERS, -1, jnp.int8),
            leader=leader,
            num_played=jnp.int8(0),
            num_passed=jnp.int8(0),
            pass_dir=pass_dir.astype(jnp.int8),
            hearts_broken=jnp.bool_(False),
            cannot_hold=cannot_hold,
            points=jnp.zeros(NUM_PLAYERS, jnp.int16),
            hand_number=hand_number.astype(jnp.int16),
        )
        return fields

    def _step(self, state: State, action: Array, key: core.PRNGKey) -> State:
        """A pass or a card played, in one branch-free update: the two phases touch mostly
        different fields, so each field is updated under its phase's flag rather than both
        phases computed whole and selected (twice the work)."""
        del key  # every deal was drawn in init
        mover = state.current_player.astype(jnp.int8)
        chosen = _CARDS == action
        suit = jnp.asarray(SUIT)
        # Suits and ranks by bit arithmetic (& 3, >> 2), not table lookups or % and //: a gather
        # under vmap is a slow loop on the CPU, and vector integer division is slow too.
        card_suit = action & 3
        if self.standard:
            passing = (state.pass_dir != NO_PASS) & (state.num_passed < NUM_PASSES)
        else:
            passing = jnp.bool_(False)  # the paper variant never passes
        playing = ~passing
        owner = jnp.where(chosen, jnp.int8(-1), state.owner)

        # A pass: the card leaves the hand into the passing set; the 12th pass makes the exchange.
        if self.standard:
            passed_by = jnp.where(passing & chosen, mover, state.passed_by)
            num_passed = state.num_passed + passing.astype(jnp.int8)
            exchange = passing & (num_passed == NUM_PASSES)
            received = ((passed_by + state.pass_dir) & 3).astype(jnp.int8)
            owner = jnp.where(exchange & (passed_by >= 0), received, owner)
            # The 2♣'s holder after the exchange, from scalars: read back from the new owner
            # vector, it would chain the step's vector work into more loops.
            two_passer = jnp.where(passing & (action == TWO_OF_CLUBS), mover, state.passed_by[TWO_OF_CLUBS])
            first = jnp.where(two_passer >= 0, (two_passer + state.pass_dir) & 3,
                              state.owner[TWO_OF_CLUBS]).astype(jnp.int8)     # leads the first trick
            pass_next = jnp.where(exchange, first, jnp.where(num_passed % PASS_SIZE == 0, mover + 1, mover))
        else:
            passed_by, num_passed = state.passed_by, state.num_passed

        # A card played to the trick.
        leading = state.num_played % NUM_PLAYERS == 0
        leader = jnp.where(playing & leading, mover, state.leader)
        trick = jnp.where(playing & (_SEATS == mover), action.astype(jnp.int8), state.trick)
        led = _led_suit(trick, leader)
        played_by = jnp.where(playing & chosen, mover, state.played_by)
        play_order = jnp.where(playing & chosen, state.num_played, state.play_order)
        num_played = state.num_played + playing.astype(jnp.int8)

        # What the play tells everyone about the mover's remaining cards.
        off_suit = playing & ~leading & (card_suit != led)
        excluded = off_suit & (suit == led)
        if self.standard:
            # a heart led before hearts are broken: the leader holds nothing but hearts
            excluded |= playing & leading & (card_suit == HEARTS) & ~state.hearts_broken & (suit != HEARTS)
            # a point card dropped on the first trick: the player held no card without points
            excluded |= off_suit & (state.num_played < NUM_PLAYERS) & _is_point(action) \
                & ~jnp.asarray(IS_POINT)
        cannot_hold = state.cannot_hold | ((_SEATS == mover)[:, None] & excluded[None, :])
        if self.standard:
            cannot_hold = _two_of_clubs_known(cannot_hold, first, exchange)
        hearts_broken = state.hearts_broken | (playing & (card_suit == HEARTS))

        # The trick, once complete, goes to the highest card of the led suit.
        complete = playing & (num_played % NUM_PLAYERS == 0)
        # Rank and seat in one key, so one max gives the winner (the cards are distinct); not
        # argmax, which XLA's CPU runs as a slow scalar loop.
        best = jnp.where((trick >= 0) & ((trick & 3) == led), (trick & ~3) + _SEATS, -1).max()
        winner = (best & 3).astype(jnp.int8)
        trick_points = _card_points(trick).sum(dtype=jnp.int16)
        gets = complete & (_SEATS == winner)
        won = jnp.where(gets, trick_points, jnp.int16(0))
        points = state.points + won
        rewards = -won.astype(jnp.float32)
        in_trick = play_order >= (num_played - 1) // NUM_PLAYERS * NUM_PLAYERS
        taken_by = jnp.where(complete & in_trick, winner, state.taken_by)

        # The hand's end: the moon, the scores.
        hand_over = playing & (num_played == NUM_CARDS)
        final = points
        if self.moon:
            shooter = points == TOTAL_POINTS
            shot = hand_over & shooter.any()
            final = jnp.where(shot, jnp.where(shooter, 0, TOTAL_POINTS), points).astype(jnp.int16)
            rewards = rewards + jnp.where(shot, jnp.where(shooter, TOTAL_POINTS, -TOTAL_POINTS), 0)
        scores = jnp.where(hand_over, state.scores + final, state.scores)

        nxt = jnp.where(complete, winner, (mover + 1) % NUM_PLAYERS)
        if self.standard:
            nxt = jnp.where(passing, pass_next, nxt)
            leader = jnp.where(exchange, first, leader)
        leader = jnp.where(complete, winner, leader)
        new = state.replace(
            current_player=nxt.astype(jnp.int32),
            rewards=rewards.astype(jnp.float32),
            terminated=hand_over,
            owner=owner,
            passed_by=passed_by,
            played_by=played_by,
            play_order=play_order,
            taken_by=taken_by,
            trick=jnp.where(complete, jnp.int8(-1), trick),
            leader=leader,
            num_played=num_played,
            num_passed=num_passed,
            hearts_broken=hearts_broken,
            cannot_hold=cannot_hold,
            points=points,
            scores=scores,
        )
        if self.target_score is not None:
            new = self._next_hand(new, hand_over)
        # one legal mask, for whichever phase the move led to (core makes it all True at the end)
        return new.replace(legal_action_mask=self.legal_mask(new))

    def _next_hand(self, state: State, hand_over: Array) -> State:
        """A game to ``target_score``: the next hand starts at once unless a score reached it."""
        game_over = hand_over & (state.scores.max() >= self.target_score)
        index = jnp.clip(state.hand_number, 0, max(self.max_hands - 2, 0))
        owner = D.unpack_deal(state.next_deals[index]) if self.max_hands > 1 else state.owner
        fresh = state.replace(**self._new_hand(owner, jnp.asarray(NEXT_PASS)[state.pass_dir],
                                               state.hand_number + 1))
        new_hand = hand_over & ~game_over
        out = jax.tree_util.tree_map(lambda a, b: jnp.where(new_hand, a, b), fresh, state)
        return out.replace(terminated=game_over)

    def _observe(self, state: State, player_id: Array) -> Observation:
        seat = player_id.astype(jnp.int8)
        exchanged = (state.pass_dir != NO_PASS) & (state.num_passed == NUM_PASSES)
        from_seat = ((seat - state.pass_dir) % NUM_PLAYERS).astype(jnp.int8)
        return Observation(
            seat=seat,
            hand=state.owner == seat,
            played_by=state.played_by,
            play_order=state.play_order,
            taken_by=state.taken_by,
            trick=state.trick,
            leader=state.leader,
            passed=state.passed_by == seat,
            received=exchanged & (state.passed_by == from_seat),
            pass_dir=state.pass_dir,
            num_passed=state.num_passed,
            hearts_broken=state.hearts_broken,
            cannot_hold=state.cannot_hold,
            points=state.points,
            scores=state.scores,
            hand_number=state.hand_number,
        )

    # -- rules ----------------------------------------------------------------------------------

    def play_mask(self, owner: Array, seat: Array, trick: Array, leader: Array, num_played: Array,
                  hearts_broken: Array, passing: Array | bool = False) -> Array:
        """bool [52]: the cards ``seat`` may play (jittable); with ``passing``, its whole hand.

        Follow the led suit if possible. Standard variant: the first card of the hand is the
        2♣; on the first trick a player who cannot follow plays no heart and not the Q♠ unless
        it holds nothing else; hearts are led only once broken, unless the leader holds only
        hearts. Paper variant: anything when not following.

        How: every legal set is the hand cut by one of eight static card sets (a suit, the
        cards without points, the non-hearts, all, the 2♣), so one reduction counts what the
        hand holds (``_COUNT_CODE``), scalars pick the set, and one bit test per card applies
        it (``_ALLOWED``): a few operations per card, which is what a step costs on the CPU.
        """
        hand = owner == seat
        counts = jnp.where(hand, jnp.asarray(_COUNT_CODE), 0).sum()
        led = _led_suit(trick, leader)
        can_follow = ((counts >> (_COUNT_BITS * led)) & _COUNT_MASK) > 0
        leading = num_played % NUM_PLAYERS == 0
        if self.standard:
            only_hearts = (counts & _OTHER_SUITS) == 0
            has_safe = (counts >> _SAFE_SHIFT) > 0
            lead = jnp.where(num_played == 0, _ONLY_TWO_OF_CLUBS,
                             jnp.where(hearts_broken | only_hearts, _ANY, _NOT_HEARTS))
            discard = jnp.where((num_played < NUM_PLAYERS) & has_safe, _NO_POINTS, _ANY)
            which = jnp.where(leading, lead, jnp.where(can_follow, led, discard))
            which = jnp.where(passing, _ANY, which)
        else:
            which = jnp.where(~leading & can_follow, led, _ANY)
        return hand & (((jnp.asarray(_ALLOWED) >> which) & 1) == 1)

    def legal_mask(self, state: State) -> Array:
        """bool [52]: the legal actions of ``state`` recomputed from its cards (all True when over)."""
        passing = (state.pass_dir != NO_PASS) & (state.num_passed < NUM_PASSES)
        mask = self.play_mask(state.owner, state.current_player, state.trick, state.leader,
                              state.num_played, state.hearts_broken, passing)
        return jnp.where(state.terminated | state.truncated, True, mask)

    def final_scores(self, state: State) -> Array:
        """int16 [4]: ``scores`` (the finished hands) plus the current hand's points (before
        the moon): a game's result when read at its end."""
        done = state.terminated | state.truncated
        return jnp.where(done, state.scores, state.scores + state.points)

    def winners(self, state: State) -> Array:
        """bool [4]: the players with the lowest score (several on a tie)."""
        scores = state.scores
        return scores == scores.min()

    # -- hidden information ------------------------------------------------------------------

    def sample_world(self, state: State, player_id: Array, key: core.PRNGKey) -> State:
        """A full state that ``player_id`` cannot tell from ``state``, for PIMC.

        The cards ``player_id`` has not seen are dealt to the other three players uniformly at
        random among the deals that keep every hand (and passing set) size, give no player a
        card it is publicly known not to hold (``cannot_hold``: voids shown by not following
        suit, the other inferences of ``docs/rules/hearts.md``), and leave the cards
        ``player_id`` passed, still unplayed, with their receiver. Exactly uniform over those
        deals (:func:`jaxgames.hearts.deal.assign_hidden`); the other players' strategies are
        not modelled. The passes ``player_id`` did not see are redrawn among the cards their
        receivers held after the exchange, the later hands' deals are redrawn. Reads only
        ``observe(state, player_id)`` and public fields. ``player_id`` is checked by
        :mod:`jaxgames.core`: a seat outside 0 .. 3 is a ValueError, or, traced, gives
        ``blank_world``.
        """
        p = jnp.asarray(player_id, jnp.int32)
        seat = p.astype(jnp.int8)
        mine = self._observe(state, p)          # the player's private knowledge
        next_deals = state.next_deals
        if self.max_hands > 1:  # the later hands' deals are unknown to everyone: redrawn
            key, k_later = rng.split(key, 2)
            next_deals = D.pack_deal(D.deal_owners(k_later, self.max_hands - 1))
        words = rng.random_words(key, 2 * NUM_CARDS)   # one hash for the cards and the passes

        passing = (state.pass_dir != NO_PASS) & (state.num_passed < NUM_PASSES)
        exchanged = (state.pass_dir != NO_PASS) & (state.num_passed == NUM_PASSES)
        receiver = ((seat + state.pass_dir) % NUM_PLAYERS).astype(jnp.int8)
        played = state.played_by >= 0
        in_transit = mine.passed & ~played                     # mine, passing or with the receiver
        hidden = ~mine.hand & ~played & ~in_transit
        others = ((p + 1 + jnp.arange(3)) % NUM_PLAYERS).astype(jnp.int8)   # [3] seats
        played_count = (state.played_by[None, :] == others[:, None]).sum(axis=1, dtype=jnp.int32)
        forced = jnp.where(exchanged & (others == receiver), in_transit.sum(dtype=jnp.int32), 0)
        # Cards each other seat has: its hand plus, while passing, its passing set (13).
        capacity = jnp.where(passing, HAND_SIZE, HAND_SIZE - played_count - forced)
        allowed = hidden[None, :] & ~state.cannot_hold[others]
        rel = D.assign_hidden(allowed, capacity, words[:NUM_CARDS])
        dealt = others[jnp.maximum(rel, 0)]
        owner = jnp.where(mine.hand, seat, jnp.int8(-1))
        owner = jnp.where(hidden, dealt, owner)
        owner = jnp.where(in_transit & exchanged, receiver, owner)

        # The passes the player did not see: while passing, each other seat's passing set is
        # drawn from its cards; after the exchange, the three cards each other receiver got
        # are drawn from what it held after the exchange.
        held_after = jnp.where(played, state.played_by, owner)
        unseen_receiver = (held_after >= 0) & (held_after != seat) & (held_after != receiver)
        group = jnp.where(passing, jnp.where(hidden, dealt, -1),
                          jnp.where(exchanged & unseen_receiver, held_after, -1)).astype(jnp.int32)
        order = D.order_ranks(words[NUM_CARDS:], group)
        made = jnp.clip(state.num_passed.astype(jnp.int32) - PASS_SIZE * jnp.arange(NUM_PLAYERS), 0, PASS_SIZE)
        quota = jnp.where(passing, made[jnp.maximum(group, 0)], PASS_SIZE)
        chosen = (group >= 0) & (order < quota)
        passer = jnp.where(passing, group, (group - state.pass_dir) % NUM_PLAYERS).astype(jnp.int8)
        passed_by = jnp.where(mine.passed, seat, jnp.where(
            mine.received, ((seat - state.pass_dir) % NUM_PLAYERS).astype(jnp.int8),
            jnp.where(chosen, passer, jnp.int8(-1))))
        owner = jnp.where(passing & chosen, jnp.int8(-1), owner)

        world = state.replace(owner=owner, passed_by=passed_by, next_deals=next_deals)
        world = world.replace(legal_action_mask=self.legal_mask(world))
        return world.replace(observation=self._observe(world, world.current_player))


def _led_suit(trick: Array, leader: Array) -> Array:
    """The suit of the leader's card in ``trick`` (int8 [4] by seat; 0 when none)."""
    return jnp.where(_SEATS == leader, jnp.maximum(trick, 0), 0).sum() & 3


def _is_point(card: Array) -> Array:
    """Whether ``card`` (int, any shape) carries points: a heart or the Q♠."""
    return ((card & 3) == HEARTS) | (card == QUEEN_OF_SPADES)


def _card_points(card: Array) -> Array:
    """int16: the points of ``card`` (int, any shape; 0 for -1, whose bits read as a spade)."""
    return (jnp.where((card & 3) == HEARTS, 1, 0) + jnp.where(card == QUEEN_OF_SPADES, 13, 0)).astype(jnp.int16)


def _two_of_clubs_known(cannot_hold: Array, holder: Array, known: Array) -> Array:
    """Once play starts, every seat but the 2♣'s holder is known not to hold it."""
    others = (_SEATS != holder)[:, None] & (_CARDS == TWO_OF_CLUBS)[None, :]
    return cannot_hold | (known & others)
