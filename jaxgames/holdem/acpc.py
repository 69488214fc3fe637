"""ACPC ``MATCHSTATE`` strings for heads-up no-limit, and their replay onto a hold'em state.

    ms = parse_matchstate("MATCHSTATE:1:7:r300c/r450:Ks2h|/8c6h2s")
    ms.text()                                   # the same string back
    wire = Wire(env)                            # env: the game the agent plays
    state = wire.to_state(ms)                   # a game State with the hand's real chips
    wire.action_text(state, ms, action)         # our action id as the ACPC action to send

The protocol (the ACPC dealer's, version 2.0.0, as its ``game.c`` prints and reads states):
``MATCHSTATE:<position>:<hand number>:<betting>:<cards>``. ``position`` is the client's seat
in this hand (0 or 1); ``betting`` is one group of actions per round so far, separated by
``/`` (``c`` check or call, ``f`` fold, ``r<N>`` raise *to* N chips: N counts everything the
raiser has put in this hand, blinds included); ``cards`` is ``<hole 0>|<hole 1>`` then one
``/<cards>`` per round after preflop (hole cards not shown are empty). A round that ends opens
the next at once (``cc/``); a call of an all-in jumps to the river (``r20000c///``). Lines of
the HUNL game ``holdem.nolimit.2p.reverse_blinds.game``: stacks 20,000, position 0 posts the
big blind 100, position 1 the small blind 50 and is the button: it acts first preflop and
second on the flop, turn and river (:data:`ACPC_TABLE`).

A MATCHSTATE is checked as it is parsed: syntax, cards (names, counts per round, no card
twice) and the betting by the no-limit rules (raise sizes, fold only facing a bet, the rounds
where they end). Anything wrong is an :class:`ACPCError` (a ``ValueError``) naming what.

Replay (:class:`Wire`): game seat = ACPC position, the button on seat 1; the game's state keeps
the *real* chips of every action (stacks, bets, pot, minimum raise), so the pot the agent sees
is the table's. The action ids in its history are our nine (the network reads those): an
opponent's raise to an amount none of our actions puts in is labelled with one of our raises
by the pseudo-harmonic mapping (:func:`pseudo_harmonic`, :class:`Translator`), while its chips
stay real. Our own actions are stepped on that real state, so a ``½ pot`` raise is half of the
real pot, sent as its real raise-to amount. Amounts are scaled by the ratio of the game's big
blind to the table's (1 for the shipped agent: both are 20,000 with blinds 50/100).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from fractions import Fraction
from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.holdem import betting, hand_eval
from jaxgames.holdem.cards import RANKS, SUITS, card_name, deck_from
from jaxgames.holdem.game import RIVER, SHOWDOWN, Holdem, State

__all__ = ["ACPCError", "ACPC_TABLE", "Action", "Betting", "MatchState", "Table", "Translator", "Wire",
           "parse_action", "parse_matchstate", "parse_reply", "pseudo_harmonic", "track"]

#: cards dealt to the board at the start of each round
BOARD_PER_ROUND = (0, 3, 1, 1)
NUM_ROUNDS = 4


class ACPCError(ValueError):
    """A MATCHSTATE, action or table that is not valid, with what is wrong."""


# -- the table -------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class Table:
    """The wire's game: equal stacks reset every hand, blinds, and which position is the button."""

    stack: int = 20_000
    small_blind: int = 50
    big_blind: int = 100
    button: int = 1         # the position that posts the small blind and acts first preflop


#: holdem.nolimit.2p.reverse_blinds.game, the ACPC competitions' HUNL (Slumbot's too)
ACPC_TABLE = Table()


# -- actions and the betting rules -------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Action:
    """One ACPC action: ``kind`` ``"f"``, ``"c"`` or ``"r"``; ``amount`` the raise-to (``r`` only)."""

    kind: str
    amount: int | None = None

    def text(self) -> str:
        return f"r{self.amount}" if self.kind == "r" else self.kind


_ACTION = re.compile(r"f|c|r[0-9]+")


def parse_action(text: str) -> Action:
    """``"f"``, ``"c"`` or ``"r<N>"`` (N a whole number of chips, no sign, no leading zero)."""
    if not isinstance(text, str) or not _ACTION.fullmatch(text) or (text[:2] == "r0"):
        raise ACPCError(f"bad ACPC action {text!r}: expected f, c or r<chips> (raise to)")
    return Action("r", int(text[1:])) if text[0] == "r" else Action(text)


@dataclasses.dataclass(frozen=True)
class Betting:
    """Where a hand's betting stands after some actions, by the no-limit rules (wire chips).

    spent:  chips each position has put in this hand (blinds included)
    round:  0 preflop … 3 river; a round that ends opens the next (an all-in call: the river)
    to_act: the position to act; -1 once the hand is over
    folded: the position that folded, or -1
    """

    table: Table
    spent: tuple[int, int]
    round: int = 0
    to_act: int = 1
    last_raise: int = 0             # the round's largest raise increment so far (min raise basis)
    acted: tuple[bool, bool] = (False, False)
    folded: int = -1

    @classmethod
    def start(cls, table: Table = ACPC_TABLE) -> "Betting":
        spent = [table.big_blind, table.big_blind]
        spent[table.button] = table.small_blind
        return cls(table=table, spent=tuple(spent), to_act=table.button, last_raise=table.big_blind)

    @property
    def over(self) -> bool:
        return self.to_act < 0

    @property
    def showdown(self) -> bool:
        return self.over and self.folded < 0

    @property
    def to_call(self) -> int:
        return max(self.spent) - self.spent[self.to_act]

    def raise_bounds(self) -> tuple[int, int] | None:
        """``(smallest, largest)`` raise-to of the position to act; None if it may not raise."""
        if self.over or max(self.spent) >= self.table.stack:
            return None
        smallest = max(self.spent) + max(self.last_raise, self.table.big_blind)
        return min(smallest, self.table.stack), self.table.stack   # all-in is always allowed

    def apply(self, action: Action) -> "Betting":
        """The betting after ``action`` by the position to act; ACPCError if it is not legal."""
        me = self.to_act
        if self.over:
            raise ACPCError(f"action {action.text()} after the hand is over")
        spent, acted = list(self.spent), list(self.acted)
        last_raise = self.last_raise
        if action.kind == "f":
            if self.to_call == 0:
                raise ACPCError("fold with nothing to call (check instead)")
            return dataclasses.replace(self, to_act=-1, folded=me)
        if action.kind == "c":
            spent[me] = max(spent)
        else:
            bounds = self.raise_bounds()
            if bounds is None:
                raise ACPCError(f"raise r{action.amount}: no raise is possible (a position is all-in)")
            if not bounds[0] <= action.amount <= bounds[1]:
                raise ACPCError(f"raise r{action.amount}: the raise-to must be {bounds[0]}..{bounds[1]} "
                                f"(position {me} has put in {spent[me]}, the most put in is {max(spent)})")
            last_raise = max(last_raise, action.amount - max(spent))
            spent[me] = action.amount
            acted = [False, False]
        acted[me] = True
        nxt = dataclasses.replace(self, spent=tuple(spent), acted=tuple(acted), last_raise=last_raise,
                                  to_act=1 - me)
        if not (all(acted) and spent[0] == spent[1]):
            return nxt
        # the round is over: the next opens, or, at the river or with a seat all-in, the showdown
        if self.round == NUM_ROUNDS - 1 or max(spent) >= self.table.stack:
            return dataclasses.replace(nxt, round=NUM_ROUNDS - 1, to_act=-1)
        return dataclasses.replace(nxt, round=self.round + 1, to_act=1 - self.table.button,
                                   last_raise=self.table.big_blind, acted=(False, False))


def track(rounds: Sequence[Sequence[Action]], table: Table = ACPC_TABLE) -> Betting:
    """The betting after ``rounds`` (one group of actions per round, as the string has them),
    each round checked to be the one its actions were taken in."""
    state = Betting.start(table)
    for r, actions in enumerate(rounds):
        # a call of an all-in jumps to the river: the rounds between are empty
        if state.over and state.round < r:
            raise ACPCError(f"round {r + 1} of the betting after the hand ended in round {state.round + 1}")
        if state.round < r or (state.round > r and actions):
            raise ACPCError(f"round {r + 1} of the betting starts before round {state.round + 1} has ended")
        for action in actions:
            if state.round != r:
                raise ACPCError(f"action {action.text()} in round {r + 1} after that round ended (missing '/')")
            state = state.apply(action)
    if state.round != len(rounds) - 1:
        raise ACPCError(f"the betting has {len(rounds)} round(s) but its actions reach round {state.round + 1} "
                        f"(a '/' is missing)")
    return state


# -- MATCHSTATE ----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class MatchState:
    """A parsed ``MATCHSTATE``; ``hole`` per position (empty: not shown), ``board`` per round
    after preflop (3, 1, 1 cards), cards as integers 0..51 (``cards.py``)."""

    position: int
    hand_number: int
    rounds: tuple[tuple[Action, ...], ...]
    hole: tuple[tuple[int, ...], tuple[int, ...]]
    board: tuple[tuple[int, ...], ...] = ()
    table: Table = ACPC_TABLE

    @property
    def betting(self) -> Betting:
        return track(self.rounds, self.table)

    @property
    def actions(self) -> tuple[Action, ...]:
        return tuple(a for r in self.rounds for a in r)

    def text(self) -> str:
        bets = "/".join("".join(a.text() for a in r) for r in self.rounds)
        cards = "|".join(_cards(h) for h in self.hole) + "".join("/" + _cards(b) for b in self.board)
        return f"MATCHSTATE:{self.position}:{self.hand_number}:{bets}:{cards}"


def _cards(cards: Sequence[int]) -> str:
    return "".join(card_name(c) for c in cards)


def _parse_cards(text: str, what: str) -> tuple[int, ...]:
    if len(text) % 2:
        raise ACPCError(f"bad cards {text!r} in {what}: two characters a card (rank {RANKS}, suit {SUITS})")
    out = []
    for i in range(0, len(text), 2):
        rank, suit = RANKS.find(text[i]), SUITS.find(text[i + 1])
        if rank < 0 or suit < 0:
            raise ACPCError(f"bad card {text[i:i + 2]!r} in {what}: rank one of {RANKS}, suit one of {SUITS}")
        out.append(4 * rank + suit)
    return tuple(out)


def parse_matchstate(text: str, table: Table = ACPC_TABLE) -> MatchState:
    """The MATCHSTATE ``text`` (a trailing line break allowed); ACPCError naming what is wrong."""
    if not isinstance(text, str):
        raise ACPCError(f"a MATCHSTATE is a string, got {type(text).__name__}")
    line = text.rstrip("\r\n")
    fields = line.split(":")
    if fields[0] != "MATCHSTATE":
        raise ACPCError(f"not a MATCHSTATE: {line[:60]!r} (expected 'MATCHSTATE:<position>:<hand>:<betting>:<cards>')")
    if len(fields) != 5:
        raise ACPCError(f"a MATCHSTATE has 5 fields separated by ':', got {len(fields)} in {line[:80]!r}")
    _, position, hand, bets, cards = fields
    if position not in ("0", "1"):
        raise ACPCError(f"bad position {position!r}: heads-up positions are 0 and 1")
    if not hand.isdigit() or not hand.isascii():
        raise ACPCError(f"bad hand number {hand!r}: a whole number")
    rounds = tuple(tuple(parse_action(a) for a in re.findall(r"r[0-9]*|.", group)) for group in bets.split("/"))
    if len(rounds) > NUM_ROUNDS:
        raise ACPCError(f"the betting {bets!r} has {len(rounds)} rounds; hold'em has {NUM_ROUNDS}")
    groups = cards.split("/")
    holes = groups[0].split("|")
    if len(holes) != 2:
        raise ACPCError(f"bad hole cards {groups[0]!r}: two positions' cards separated by one '|'")
    hole = tuple(_parse_cards(h, f"position {p}'s hole cards") for p, h in enumerate(holes))
    for p, h in enumerate(hole):
        if len(h) not in (0, 2):
            raise ACPCError(f"position {p} shows {len(h)} hole cards: two, or none when hidden")
    if not hole[int(position)]:
        raise ACPCError(f"the client's own hole cards (position {position}) are missing")
    board = tuple(_parse_cards(b, f"round {r + 1}'s board") for r, b in enumerate(groups[1:], 1))
    for r, b in enumerate(board, 1):
        if r >= NUM_ROUNDS or len(b) != BOARD_PER_ROUND[r]:
            raise ACPCError(f"round {r + 1}'s board has {len(b)} cards, expected "
                            f"{BOARD_PER_ROUND[r] if r < NUM_ROUNDS else 'none (4 rounds)'}")
    seen = [c for h in hole for c in h] + [c for b in board for c in b]
    if len(set(seen)) != len(seen):
        raise ACPCError(f"a card is dealt twice in {cards!r}")
    ms = MatchState(position=int(position), hand_number=int(hand), rounds=rounds, hole=hole, board=board,
                    table=table)
    state = ms.betting  # checks the betting
    if len(board) != state.round:
        raise ACPCError(f"the betting is in round {state.round + 1} but the cards show {len(board)} board round(s)")
    return ms


def parse_reply(text: str, table: Table = ACPC_TABLE) -> tuple[MatchState, Action]:
    """A client's reply ``MATCHSTATE...:<action>`` (what a dealer reads): the state and the
    action, checked legal for the position to act, which must be the client's."""
    line = text.rstrip("\r\n")
    head, sep, action = line.rpartition(":")
    if not sep or head.count(":") != 4:
        raise ACPCError(f"a reply is a MATCHSTATE followed by ':<action>', got {line[:80]!r}")
    ms, act = parse_matchstate(head, table), parse_action(action)
    bets = ms.betting
    if bets.to_act != ms.position:
        raise ACPCError(f"position {ms.position} replied out of turn")
    bets.apply(act)
    return ms, act


# -- translating bets ------------------------------------------------------------------------


def pseudo_harmonic(x: float, a: float, b: float) -> float:
    """The probability of mapping a bet of ``x`` pot to the smaller size ``a`` (``a <= x <=
    b``, in pot fractions) rather than ``b``: ``(b - x)(1 + a) / ((b - a)(1 + x))``
    (Ganzfried & Sandholm 2013). 1 at ``x = a``, 0 at ``x = b``."""
    if not a <= x <= b:
        raise ValueError(f"pseudo_harmonic needs a <= x <= b, got a={a}, x={x}, b={b}")
    if a == b:
        return 1.0
    return (b - x) * (1 + a) / ((b - a) * (1 + x))


@dataclasses.dataclass(frozen=True, kw_only=True)
class Translator:
    """Which of our raises labels an off-tree raise. ``randomise``: draw A with probability
    :func:`pseudo_harmonic` (the paper's method; the draw is a function of ``seed``, the hand
    number and the action's index in the hand, so replaying a hand again labels it the same);
    otherwise the threshold rule: A iff that probability is at least ½."""

    randomise: bool = True
    seed: int = 0

    def choose(self, x: float, sizes: Sequence[tuple[float, int]], *, hand: int = 0, index: int = 0) -> int:
        """The action id for a raise of ``x`` pot among ``sizes`` ((pot fraction, action id),
        our legal raises); below the smallest: the smallest, above the largest: the largest."""
        sizes = sorted(sizes)
        if not sizes:
            raise ValueError("no raise to translate to")
        if x <= sizes[0][0]:
            return sizes[0][1]
        if x >= sizes[-1][0]:
            return sizes[-1][1]
        i = next(k for k, (f, _) in enumerate(sizes) if f > x)
        (a, id_a), (b, id_b) = sizes[i - 1], sizes[i]
        p = pseudo_harmonic(x, a, b)
        if self.randomise:
            draw = np.random.default_rng([self.seed, hand, index]).random()
            return id_a if draw < p else id_b
        return id_a if p >= 0.5 else id_b


# -- the game's state ------------------------------------------------------------------------


def _apply_raise(env: Holdem, state: State, action, put):
    """``state`` after the mover's raise labelled ``action`` (a legal raise id) putting in
    ``put`` chips: the game's step for the history and the turn, then the real chips."""
    me = state.current_player
    new = env.step(state, action)
    is_me = jnp.arange(2) == me
    add = jnp.where(is_me, put, 0)
    bets, committed, stacks = state.bets + add, state.committed + add, state.stacks - add
    min_raise = jnp.maximum(state.min_raise, bets[me] - bets[1 - me])
    new = new.replace(bets=bets, committed=committed, stacks=stacks, min_raise=min_raise,
                      history_chips=new.history_chips.at[state.step_count].set(put))
    opp = new.current_player
    mask = betting.legal_mask(committed.sum(), bets[me] - bets[opp], stacks[opp], stacks[me], min_raise)
    new = new.replace(legal_action_mask=mask)
    return new.replace(observation=env.observe(new, new.current_player))


_evaluate = jax.jit(hand_eval.evaluate)


@dataclasses.dataclass(frozen=True)
class _Mover:
    """The chips of the seat to act in a state, read to the host in one transfer (indexing
    jax arrays one scalar at a time cost most of a replay)."""

    pot: int
    to_call: int
    stack: int
    committed: int
    legal: np.ndarray

    @classmethod
    def of(cls, state: State) -> "_Mover":
        me, committed, bets, stacks, legal = jax.device_get(
            (state.current_player, state.committed, state.bets, state.stacks, state.legal_action_mask))
        me = int(me)
        return cls(pot=int(committed.sum()), to_call=int(bets[1 - me] - bets[me]), stack=int(stacks[me]),
                   committed=int(committed[me]), legal=np.asarray(legal))

    def chips(self, action: int) -> int:
        """Chips ``action`` puts in (game units): betting.amounts, on the host."""
        if action == betting.ALL_IN:
            return self.stack
        if action in (betting.FOLD, betting.CHECK):
            return 0
        if action == betting.CALL:
            return min(self.to_call, self.stack)
        n, d = betting.FRACTIONS[action - betting.RAISE_HALF]
        return self.to_call + n * (self.pot + self.to_call) // d


@functools.lru_cache(maxsize=None)
def _compiled(env: Holdem):
    deal = jax.jit(lambda deck: env.deal(deck, 1))
    return deal, jax.jit(env.step), jax.jit(functools.partial(_apply_raise, env))


class Wire:
    """A MATCHSTATE on a table (:class:`Table`) as a state of ``env`` and back (module docstring).
    ``env``'s stack and blinds must be the table's times one factor."""

    #: replayed states kept (then all dropped): a few hands' worth
    CACHE = 512

    def __init__(self, env: Holdem, table: Table = ACPC_TABLE, translator: Translator = Translator()):
        self.env, self.table, self.translator = env, table, translator
        self.scale = Fraction(env.big_blind, table.big_blind)
        if (env.small_blind != table.small_blind * self.scale or env.stack != table.stack * self.scale
                or table.button != 1):
            raise ACPCError(f"the game (stack {env.stack}, blinds {env.small_blind}/{env.big_blind}) is not the "
                            f"table (stack {table.stack}, blinds {table.small_blind}/{table.big_blind}) scaled")
        self._deal, self._step, self._raise = _compiled(env)
        self._cache: dict = {}

    def to_game(self, chips: int) -> int:
        return int(round(chips * self.scale))

    def to_wire(self, chips: int) -> int:
        return int(round(chips / self.scale))

    def deck(self, ms: MatchState) -> np.ndarray:
        """int8 [52]: the hand's deck, cards not shown filled with the lowest unused ones (the
        agent's seat never sees them)."""
        known = {c for h in ms.hole for c in h} | {c for b in ms.board for c in b}
        spare = iter(c for c in range(52) if c not in known)
        hole = [list(h) if h else [next(spare), next(spare)] for h in ms.hole]
        board = [c for b in ms.board for c in b]
        board += [next(spare) for _ in range(5 - len(board))]
        return deck_from(hole[0], hole[1], board)

    def raise_sizes(self, state: State) -> list[tuple[float, int]]:
        """(pot fraction, id) of the raises legal in ``state``; all-in's fraction is its real one."""
        m = _Mover.of(state)
        sizes = [(n / d, betting.RAISE_HALF + i) for i, (n, d) in enumerate(betting.FRACTIONS)
                 if m.legal[betting.RAISE_HALF + i]]
        if m.legal[betting.ALL_IN]:
            sizes.append(((m.stack - m.to_call) / (m.pot + m.to_call), betting.ALL_IN))
        return sizes

    def chips(self, state: State, action: int) -> int:
        """Chips ``action`` puts in for the mover of ``state`` (game units)."""
        return _Mover.of(state).chips(action)

    def to_state(self, ms: MatchState) -> State:
        """The game's state after ``ms``'s actions (seat = position, the button on seat 1).

        Raises ACPCError if the hand has more actions than the game's history holds. A hand
        is sent again after every action: the states of the replay are kept (:attr:`CACHE`
        of them), so each new line steps only its new actions."""
        deck = self.deck(ms)
        actions = ms.actions
        key = (deck.tobytes(), ms.hand_number)
        start = next(k for k in range(len(actions), -1, -1) if k == 0 or (key, actions[:k]) in self._cache)
        state = self._cache[(key, actions[:start])] if start else self._deal(deck)
        if len(self._cache) > self.CACHE:
            self._cache.clear()
        for index, action in enumerate(actions[start:], start):
            if index >= self.env.history_length:
                raise ACPCError(f"hand {ms.hand_number} has more than {self.env.history_length} actions, "
                                f"the most the game's history holds")
            if action.kind == "f":
                state = self._step(state, jnp.int32(betting.FOLD))
            elif action.kind == "c":
                facing = _Mover.of(state).to_call > 0
                state = self._step(state, jnp.int32(betting.CALL if facing else betting.CHECK))
            else:
                put = self.to_game(action.amount) - _Mover.of(state).committed
                label = self.label(state, action.amount, hand=ms.hand_number, index=index)
                state = self._raise(state, jnp.int32(label), jnp.int32(put))
            self._cache[(key, actions[:index + 1])] = state
        return state

    def label(self, state: State, raise_to: int, *, hand: int = 0, index: int = 0) -> int:
        """Our action id for the mover's raise to ``raise_to`` (wire chips): the action that
        puts in exactly that (as the wire writes it), else the translator's choice."""
        m = _Mover.of(state)
        sizes = self.raise_sizes(state)
        for _, a in sizes:
            if self.to_wire(m.committed + m.chips(a)) == raise_to:
                return a
        put = self.to_game(raise_to) - m.committed
        return self.translator.choose((put - m.to_call) / (m.pot + m.to_call), sizes, hand=hand, index=index)

    def action(self, state: State, action: int) -> Action:
        """Our action id in ``state`` (legal, the mover ours) as the ACPC action: its real amount."""
        action = int(action)
        if action == betting.FOLD:
            return Action("f")
        if action in (betting.CHECK, betting.CALL):
            return Action("c")
        if action == betting.ALL_IN:
            return Action("r", self.table.stack)
        m = _Mover.of(state)
        return Action("r", self.to_wire(m.committed + m.chips(action)))

    def result(self, ms: MatchState) -> int:
        """Position ``ms.position``'s net chips (wire units) in a finished hand: a fold loses
        what the folder put in; a showdown (both hole cards shown) wins or loses the contested
        chips, splits on a tie. Read from the wire's own betting, so a hand too long for the
        game's history still counts."""
        bets = ms.betting
        if not bets.over:
            raise ACPCError(f"hand {ms.hand_number} is not over")
        me = ms.position
        if bets.folded >= 0:
            return bets.spent[bets.folded] * (1 if bets.folded != me else -1)
        if not all(ms.hole):
            raise ACPCError(f"hand {ms.hand_number} ended in a showdown without both hands shown")
        board = [c for b in ms.board for c in b]
        values = np.asarray(_evaluate(np.asarray([list(h) + board for h in ms.hole], np.int32)))
        sign = int(np.sign(values[me] - values[1 - me]))
        return sign * min(bets.spent)

    def action_text(self, state: State, action: int) -> str:
        return self.action(state, action).text()

    def to_matchstate(self, state: State, *, position: int, hand_number: int) -> MatchState:
        """``state``'s hand as the MATCHSTATE ``position`` is sent: its betting (raises as the
        real raise-to amounts the state's chips hold), its cards, the opponent's at a showdown."""
        history = np.asarray(state.history)
        chips = np.asarray(state.history_chips)
        committed = [self.table.big_blind * self.scale] * 2
        committed[1] = self.table.small_blind * self.scale   # seat 1: the button
        street = int(state.street)
        last = RIVER if street == SHOWDOWN else street
        rounds = [[] for _ in range(last + 1)]
        for (seat, action, rnd), put in zip(history, chips):
            if seat < 0:
                break
            committed[seat] += int(put)
            if action == betting.FOLD:
                rounds[rnd].append(Action("f"))
            elif action in (betting.CHECK, betting.CALL):
                rounds[rnd].append(Action("c"))
            else:
                rounds[rnd].append(Action("r", self.to_wire(committed[seat])))
        deck = [int(c) for c in np.asarray(state.deck)]
        hole = [tuple(deck[0:2]), tuple(deck[2:4])]
        if street != SHOWDOWN:
            hole[1 - position] = ()
        board = tuple(tuple(deck[4:7]) if r == 1 else (deck[5 + r],) for r in range(1, last + 1))
        return MatchState(position=position, hand_number=hand_number, rounds=tuple(map(tuple, rounds)),
                          hole=tuple(hole), board=board, table=self.table)
