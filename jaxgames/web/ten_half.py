"""Ten-and-a-half against the dealer in the browser, with the learned hint.

The dealer plays inside the game's step; every card drawn is read again from the step's key
(``jaxgames.ten_half.play``'s jitted table) so the page can show it. :func:`seat_view` shows
the person's cards, and the dealer's only once the dealer has drawn them (after a stick).
Moves: ``{"action": "hit" | "stick"}`` (or 1 / 0), ``{"deal": true}`` for the next game.
"""

from __future__ import annotations

import secrets

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.ten_half.agent import action_and_values, load_agent, optimal_player
from jaxgames.ten_half.game import HAND_TYPE_NAMES, HIT, JACK, RANK_NAMES, STICK, card_value_halves, hand_type
from jaxgames.ten_half.play import ACTION_NAMES, _table
from jaxgames.ten_half.render import points_text
from jaxgames.web.errors import BadRequest, check_keys, require

AGENTS = ("pretrained", "optimal", "agent")
OPTIONS = ("agent", "seed")
_BY_NAME = {"stick": STICK, "hit": HIT, STICK: STICK, HIT: HIT}


def hint_player(name: str, agents):
    if name == "optimal":
        return agents.get(("ten_half", name), optimal_player)
    if name == "agent":
        run = agents.run("ten_half")
        return agents.get(("ten_half", name, run), lambda: load_agent(run))
    from jaxgames import pretrained
    return agents.get(("ten_half", name), lambda: pretrained.load("ten_half"))


def _halves(ranks) -> int:
    return int(sum(int(card_value_halves(int(r))) for r in ranks))


def _hand(ranks) -> dict:
    n, faces = len(ranks), sum(r >= JACK for r in ranks)
    total = _halves(ranks)
    return {"cards": [RANK_NAMES[r] for r in ranks], "points": points_text(total), "halves": total,
            "type": HAND_TYPE_NAMES[int(hand_type(total, n, faces)[0])]}


def seat_view(state, cards: list[int], dealer: list[int] | None) -> dict:
    """The person's hand, the legal moves; at the end the dealer's cards (None: it did not
    draw, the person busted or made a special hand) and the reward."""
    over = bool(state.terminated)
    view = {"hand": _hand(cards), "over": over,
            "legal": [] if over else [ACTION_NAMES[a] for a in np.flatnonzero(np.asarray(state.legal_action_mask))]}
    if over:
        view["reward"] = float(np.asarray(state.rewards)[0])
        view["dealer"] = None if dealer is None else _hand(dealer)
    return view


class Game:
    """Games against the dealer one after another, with a running score."""

    def __init__(self, options: dict, agents):
        check_keys(options, OPTIONS, "ten-and-a-half option")
        name = require(options, "agent", str, default="pretrained", choices=AGENTS)
        self.seed = require(options, "seed", int, default=secrets.randbelow(2**31), low=0, high=2**32 - 1)
        self.player = hint_player(name, agents)
        self.exact = name == "optimal"
        self._deal, self._play = _table()
        self._deal_key, self._step_key = jax.random.split(jax.random.key(self.seed))
        self.results: list[float] = []
        self.version = 0
        self._new_game()

    def _new_game(self) -> None:
        self.state, rank = self._deal(jax.random.fold_in(self._deal_key, len(self.results)))
        self.cards, self.dealer = [int(rank)], None

    def move(self, body: dict) -> None:
        check_keys(body, ("action", "deal"), "ten-and-a-half move")
        if body.get("deal"):
            if not bool(self.state.terminated):
                raise BadRequest("this game is not over: hit or stick first", 422)
            self._new_game()
            self.version += 1
            return
        action = body.get("action")
        if isinstance(action, bool) or action not in _BY_NAME:
            raise BadRequest(f'a ten-and-a-half move is {{"action": "hit"}} or {{"action": "stick"}}, got {action!r}')
        action = _BY_NAME[action]
        if bool(self.state.terminated):
            raise BadRequest('this game is over: {"deal": true} deals the next', 422)
        if not bool(np.asarray(self.state.legal_action_mask)[action]):
            raise BadRequest("you cannot hit: five cards end the game", 422)
        key = jax.random.fold_in(jax.random.fold_in(self._step_key, len(self.results)), int(self.state.step_count))
        state, ranks, dealer_cards = self._play(self.state, jnp.int32(action), key)
        ranks = [int(r) for r in np.asarray(ranks)]
        if action == HIT:
            self.cards = self.cards + [ranks[0]]
        else:
            self.dealer = ranks[1:1 + int(dealer_cards)]
        self.state = state
        self.version += 1
        if bool(state.terminated):
            self.results.append(float(np.asarray(state.rewards)[0]))

    def view(self) -> dict:
        n, total = len(self.results), float(sum(self.results))
        return {"game": "ten_half", "version": self.version, "hints_from": self.player.name, "seed": self.seed,
                "game_number": n + (0 if bool(self.state.terminated) else 1),
                "score": {"games": n, "total": total, "per_game": total / n if n else 0.0},
                **seat_view(self.state, self.cards, self.dealer)}

    def think(self) -> dict:
        """The hint: the agent's move here and its two action values (expected reward)."""
        if bool(self.state.terminated):
            raise BadRequest("this game is over: nothing to think about", 422)
        action, values = action_and_values(self.player, self.state)
        whose = ("exact values" if self.exact else
                 "its learned estimates" if np.any(values) else "it never met this hand in training: no estimates")
        return {"who": self.player.name, "kind": whose, "best": ACTION_NAMES[action],
                "values": {"stick": float(values[STICK]), "hit": float(values[HIT])}}
