"""Hold'em PPO training throughput against the network's own bound, measured in the same run.

    python -m bench.holdem_train [--network small] [--anchors call,allin,random] [--num-envs 256]
                                 [--num-steps 32] [--repeats 3]

On a CPU the network is compute-bound, so an update can go no faster than its network work:
``num_envs * num_steps`` forward evaluations of the learner in the rollout, about as many of
the opponents in the groups whose opponent is a network (``1 - anchor_fraction`` of them, in
expectation; a group playing an anchor bot runs that bot alone), and ``epochs * num_envs *
num_steps`` forward-and-backward evaluations in SGD. This prints the update's decisions/s and
hands/s (``train.holdem``'s learner, its default opponents: an empty pool, so self-play and
``--anchors`` in a fifth of the groups), the network's evaluations/s timed alone in the same
process on the same batch shapes, the bound those give, and the share of an update's time
spent in the network (the rest: the rules, the opponents' loop, the anchor bots, the encoding
and data movement).
"""

from __future__ import annotations

from train.common.mesh import one_cpu_device_per_core  # noqa: E402

one_cpu_device_per_core()   # as train.holdem runs

import argparse  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import optax  # noqa: E402

from bench.timing import best_seconds, cpu_model  # noqa: E402
from jaxgames.holdem import encode as encode_lib  # noqa: E402
from jaxgames.holdem import network as net_lib  # noqa: E402
from train.games import holdem as lib  # noqa: E402
from train.algos.ppo import PPOConfig  # noqa: E402


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m bench.holdem_train", description=__doc__.split("\n\n")[0])
    parser.add_argument("--network", default="small", choices=list(net_lib.SIZES))
    parser.add_argument("--anchors", default=",".join(lib.ANCHORS),
                        help=f"the training anchors (the quick preset's; the full preset's: {','.join(lib.FULL_ANCHORS)})")
    parser.add_argument("--num-envs", type=int, default=256)
    parser.add_argument("--num-steps", type=int, default=32)
    parser.add_argument("--updates", type=int, default=5, help="updates per timed call")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)

    lc = PPOConfig(num_envs=args.num_envs, num_steps=args.num_steps)
    lc.validate()
    # the run's opponents at its start: an empty pool (self-play) and the anchors in a fifth
    try:
        anchors = lib.anchor_names(args.anchors)
    except ValueError as e:
        parser.error(str(e))
    env, net, learner, _ = lib.build_parts(network_size=args.network, tower="", pool_capacity=32, best_k=5,
                                           anchor_fraction=lib.ANCHOR_FRACTION, anchors=anchors, learner=lc)
    carry = jax.jit(learner.init)(jax.random.key(0))

    @jax.jit
    def updates(carry, key):
        def body(c, k):
            c, m = learner.update(c, k)
            return c, m["games_finished"]
        return jax.lax.scan(body, carry, jax.random.split(key, args.updates))

    carry, _ = updates(carry, jax.random.key(1))      # compile, and games of a trained-a-bit net
    _, hands = updates(carry, jax.random.key(2))
    hands_per_update = float(hands.mean())
    update_s = best_seconds(updates, carry, jax.random.key(3), repeats=args.repeats) / args.updates

    # the network alone, the update's shapes: rollout forwards at the batch of all games,
    # SGD forward-backward at the minibatch
    decisions = lc.num_envs * lc.num_steps
    minibatch = decisions // lc.minibatches
    params = carry.params
    steps = 2 * lc.num_steps                     # the learner's and the opponents' forwards
    k_cards, k_actions = jax.random.split(jax.random.key(4))
    fwd_inputs = (jax.random.bernoulli(k_cards, 0.1, (steps, lc.num_envs, *encode_lib.CARD_SHAPE)).astype(jnp.int8),
                  jax.random.bernoulli(k_actions, 0.1, (steps, lc.num_envs, *encode_lib.ACTION_SHAPE)).astype(jnp.int8),
                  jnp.ones((steps, lc.num_envs, 9), jnp.bool_))
    sgd_inputs = net_lib.example_inputs(minibatch)
    optimizer = optax.adam(lc.learning_rate)

    @jax.jit
    def forwards(params, batches):
        # a different batch each step (scanned over): with one batch for all, XLA hoists the
        # loop-invariant network out of the loop
        def body(acc, batch):
            logits, value = net.apply(params, *batch)
            return acc + value.sum() + logits[:, 0].sum(), None
        return jax.lax.scan(body, 0.0, batches)[0]

    @jax.jit
    def sgd(params, inputs):
        opt = optimizer.init(params)

        def body(state, _):
            p, o = state
            grads = jax.grad(lambda q: sum(jnp.mean(x) for x in net.apply(q, *inputs)))(p)
            updates, o = optimizer.update(grads, o, p)
            return (optax.apply_updates(p, updates), o), None
        return jax.lax.scan(body, (params, opt), None, length=lc.epochs * lc.minibatches)[0][0]

    fwd_s = best_seconds(forwards, params, fwd_inputs, repeats=args.repeats)
    sgd_s = best_seconds(sgd, params, sgd_inputs, repeats=args.repeats)
    fwd_rate = 2 * lc.num_steps * lc.num_envs / fwd_s
    sgd_rate = lc.epochs * decisions / sgd_s
    # the learner's forwards, the network opponents' (the groups that play no anchor), then SGD
    network_s = fwd_s * (1 + (1 - lib.ANCHOR_FRACTION)) / 2 + sgd_s
    result = {
        "cpu": cpu_model(), "devices": jax.device_count(), "backend": jax.default_backend(), "jax": jax.__version__,
        "parameters": net_lib.param_count(jax.eval_shape(net.init, jax.random.key(0), *net_lib.example_inputs())), "num_envs": lc.num_envs, "num_steps": lc.num_steps,
        "update_seconds": update_s, "decisions_per_second": decisions / update_s,
        "hands_per_second": hands_per_update / update_s,
        "network_forward_per_second": fwd_rate, "network_train_per_second": sgd_rate,
        "network_seconds_per_update": network_s, "bound_decisions_per_second": decisions / network_s,
        "network_share": network_s / update_s,
    }
    print(f"{result['cpu']}, {result['devices']} {result['backend']} device(s), jax {result['jax']}; "
          f"{args.network} network ({result['parameters']:,} parameters), {lc.num_envs} games x {lc.num_steps} decisions, "
          f"anchors {', '.join(anchors)}")
    print(f"  training:  {result['decisions_per_second']:,.0f} decisions/s, {result['hands_per_second']:,.0f} hands/s "
          f"({update_s * 1e3:.0f} ms an update)")
    print(f"  network alone: {fwd_rate:,.0f} forward evaluations/s (batch {lc.num_envs}), {sgd_rate:,.0f} "
          f"forward+backward/s (batch {minibatch})")
    print(f"  bound (network work only): {result['bound_decisions_per_second']:,.0f} decisions/s; "
          f"training / bound = {1 / result['network_share']:.2f}x slower; share of time in the network "
          f"{result['network_share']:.0%}")
    return result


if __name__ == "__main__":
    main()
