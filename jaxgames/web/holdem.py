"""Heads-up no-limit hold'em in the browser: the person in seat 0, hands one after another
(the button alternates, stacks reset every hand, as ``jaxgames.holdem.play``).

:func:`seat_view` is the only place a hand becomes JSON, and it reads the seat's observation
(``env.observe``), never the deck: the other seat's hole cards are added only at a showdown,
where they are shown. Moves: ``{"action": 0..8}`` while the person is to act, ``{"deal": true}``
for the next hand once one is over.
"""

from __future__ import annotations

import functools
import secrets

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.holdem import betting, bots, hand_eval
from jaxgames.holdem.game import SHOWDOWN, STREET_NAMES, Holdem
from jaxgames.holdem.render import action_text
from jaxgames.player import jitted
from jaxgames.web.cards import card, cards
from jaxgames.web.errors import BadRequest, check_keys, require

HUMAN, COMPUTER = 0, 1
OPPONENTS = ("pretrained", "agent") + tuple(bots.BOT_NAMES)
OPTIONS = ("opponent", "seed")
#: finished hands kept in the view's history (the running score counts every hand)
HISTORY = 20


@functools.lru_cache(maxsize=None)
def _env() -> Holdem:
    return Holdem()   # the table the shipped agent was trained at: stacks 20,000, blinds 50/100


@functools.lru_cache(maxsize=None)
def _jitted(env: Holdem):
    """deal(key, button), step, observe and the 7-card evaluator: compiled once per server."""
    deal = jax.jit(lambda key, button: env.deal(env.shuffle(key), button))
    return deal, jax.jit(env.step), jax.jit(env.observe), jax.jit(hand_eval.evaluate)


def opponent(name: str, agents):
    """The player called ``name`` (cached by ``agents``)."""
    env = _env()
    if name == "pretrained":
        from jaxgames import pretrained
        return agents.get(("holdem", name), lambda: pretrained.load("holdem"))
    if name == "agent":
        from jaxgames.holdem.agent import load_agent
        run = agents.run("holdem")
        return agents.get(("holdem", name, run), lambda: load_agent(run))
    return agents.get(("holdem", name), lambda: bots.make_bot(env, name))


def seat_view(state, obs, seat: int) -> dict:
    """What ``seat`` may see of the hand ``state``, built from its observation ``obs``
    (``env.observe(state, seat)``); the other seat's cards only at a showdown."""
    over = bool(state.terminated)
    street = int(obs.street)
    history = []
    for (who, action, st), chips in zip(np.asarray(obs.history).tolist(), np.asarray(obs.history_chips).tolist()):
        if who < 0:
            break
        history.append({"seat": who, "action": betting.ACTION_NAMES[action], "street": STREET_NAMES[st],
                        "chips": max(chips, 0)})
    view = {
        "street": STREET_NAMES[street],
        "board": cards(np.asarray(obs.board)),
        "hole": cards(np.asarray(obs.hole)),
        "button": int(obs.button),
        "to_act": None if over else int(obs.to_act),
        "pot": int(obs.pot),
        "stacks": [int(x) for x in np.asarray(obs.stacks)],
        "bets": [int(x) for x in np.asarray(obs.bets)],
        "committed": [int(x) for x in np.asarray(obs.committed)],
        "history": history,
        "legal": [],
        "over": over,
    }
    if not over and int(state.current_player) == seat:
        view["legal"] = [{"action": int(a), "name": betting.ACTION_NAMES[int(a)], "text": action_text(state, int(a))}
                         for a in np.flatnonzero(np.asarray(state.legal_action_mask))]
    if over:
        view["won"] = float(np.asarray(state.rewards)[seat])
        view["showdown"] = street == SHOWDOWN
        if street == SHOWDOWN:   # both hands are turned over: the other seat's cards are public now
            deck = np.asarray(state.deck).astype(int)
            view["opponent_hole"] = cards(deck[2 * (1 - seat):2 * (1 - seat) + 2])
    return view


class Game:
    """A session of hands against one opponent."""

    def __init__(self, options: dict, agents):
        check_keys(options, OPTIONS, "hold'em option")
        name = require(options, "opponent", str, default="pretrained", choices=OPPONENTS)
        seed = require(options, "seed", int, default=secrets.randbelow(2**31), low=0, high=2**32 - 1)
        self.opponent_name = name
        self.player = opponent(name, agents)
        self.env = _env()
        self._deal, self._step, self._observe, self._evaluate = _jitted(self.env)
        self._deal_key, self._bot_key = jax.random.split(jax.random.key(seed))
        self.seed = seed
        self.results: list[float] = []
        self.log: list[dict] = []
        self.version = 0
        self._new_hand()

    def _new_hand(self) -> None:
        n = len(self.results)
        state = self._deal(jax.random.fold_in(self._deal_key, n), jnp.int32(n % 2))
        self.state = self._computer_moves(state)
        if bool(self.state.terminated):   # the computer folded before the person acted
            self._hand_over()

    def _computer_moves(self, state):
        """``state`` after the computer's actions up to the person's turn or the hand's end."""
        policy = jitted(self.player.policy)
        while not bool(state.terminated) and int(state.current_player) == COMPUTER:
            key = jax.random.fold_in(self._bot_key, 1000 * len(self.results) + int(state.step_count))
            action = int(policy(self.player.params, state, key))
            if not bool(np.asarray(state.legal_action_mask)[action]):
                raise RuntimeError(f"{self.player.name} chose the illegal action {action}")
            state = self._step(state, jnp.int32(action))
        return state

    def _hand_over(self) -> None:
        obs = self._observe(self.state, HUMAN)
        hand = seat_view(self.state, obs, HUMAN)
        entry = {"hand": len(self.results) + 1, "won": hand["won"], "hole": hand["hole"], "board": hand["board"],
                 "history": hand["history"], "showdown": hand["showdown"]}
        if hand["showdown"]:
            deck = np.asarray(self.state.deck).astype(int)
            entry["opponent_hole"] = hand["opponent_hole"]
            for who, seat in (("you", HUMAN), ("opponent", COMPUTER)):
                value = self._evaluate(np.concatenate([deck[2 * seat:2 * seat + 2], deck[4:9]]))
                entry[f"{who}_made"] = hand_eval.describe(int(value))
        self.results.append(hand["won"])
        self.log = (self.log + [entry])[-HISTORY:]

    def move(self, body: dict) -> None:
        check_keys(body, ("action", "deal"), "hold'em move")
        if body.get("deal"):
            if not bool(self.state.terminated):
                raise BadRequest("the hand is not over: act first", 422)
            self._new_hand()
            self.version += 1
            return
        action = require(body, "action", int, low=0, high=betting.NUM_ACTIONS - 1)
        if action is None:
            raise BadRequest('a hold\'em move is {"action": 0..8} or {"deal": true}')
        if bool(self.state.terminated):
            raise BadRequest('the hand is over: {"deal": true} deals the next', 422)
        legal = np.flatnonzero(np.asarray(self.state.legal_action_mask)).tolist()
        if action not in legal:
            raise BadRequest(f"{betting.ACTION_NAMES[action]} is not legal now; legal: "
                             f"{', '.join(betting.ACTION_NAMES[a] for a in legal)}", 422)
        state = self._computer_moves(self._step(self.state, jnp.int32(action)))
        self.state = state
        self.version += 1
        if bool(state.terminated):
            self._hand_over()

    def view(self) -> dict:
        bb = self.env.big_blind
        total = float(sum(self.results))
        n = len(self.results)
        return {"game": "holdem", "version": self.version, "opponent": self.player.name, "seed": self.seed,
                "seat": HUMAN, "hand_number": n + (0 if bool(self.state.terminated) else 1),
                "hand": seat_view(self.state, self._observe(self.state, HUMAN), HUMAN),
                "score": {"hands": n, "chips": total, "bb": total / bb, "mbb_per_hand": 1000 * total / bb / n if n else 0.0},
                "log": self.log[::-1]}

    def think(self) -> dict:
        """The opponent's action probabilities in the person's place (its policy reads only
        what the mover sees); a player without them (none here) says so."""
        if bool(self.state.terminated) or int(self.state.current_player) != HUMAN:
            raise BadRequest("not your turn: nothing to think about", 422)
        if self.player.probs is None:
            raise BadRequest(f"{self.player.name} does not expose action probabilities", 422)
        probs = np.asarray(jitted(self.player.probs)(self.player.params, self.state, jax.random.key(self.version)))
        legal = np.asarray(self.state.legal_action_mask)
        return {"who": self.player.name, "kind": "action probabilities",
                "actions": [{"action": int(a), "name": betting.ACTION_NAMES[int(a)], "text": action_text(self.state, int(a)),
                             "prob": float(probs[a])} for a in np.flatnonzero(legal)]}
