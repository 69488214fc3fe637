"""Game-agnostic search on the Env contract: expectimax (chance games), plain UCT, the mctx
glue for network-guided MCTS, max^n (multi-player) and perfect-information Monte Carlo (PIMC)
for imperfect information."""

from jaxgames.search import expectimax, mcts, uct
from jaxgames.search.expectimax import ExpectimaxGame, action_values, best_action, for_env
from jaxgames.search.mcts import make_fns, mcts_policy
from jaxgames.search import maxn, pimc
from jaxgames.search.maxn import MaxnOutput, maxn_action_values, maxn_policy, maxn_search
from jaxgames.search.pimc import PimcOutput, pimc_action_values, pimc_policy, pimc_search
from jaxgames.search.uct import DEFAULT_EXPLORATION, UCTOutput, UCTTree, uct_policy, uct_search

__all__ = [
    "DEFAULT_EXPLORATION", "ExpectimaxGame", "UCTOutput", "UCTTree", "action_values", "best_action", "expectimax", "for_env",
    "make_fns", "mcts", "mcts_policy", "uct", "uct_policy", "uct_search",
]
__all__ += [
    "MaxnOutput", "PimcOutput", "maxn", "maxn_action_values", "maxn_policy", "maxn_search", "pimc",
    "pimc_action_values", "pimc_policy", "pimc_search",
]
