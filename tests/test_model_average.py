"""The mean of a pool's newest models (jaxgames.model_average), on hand-built pools."""

import jax.numpy as jnp
import numpy as np
import pytest

from jaxgames.model_average import newest_mean, newest_slots


def pool(ids):
    """A pool whose slot i holds the model of generation ids[i]: every weight of it is that
    generation (the empty slots' weights are 1000, so counting one would show)."""
    ids = np.asarray(ids, np.int32)
    value = np.where(ids >= 0, ids, 1000).astype(np.float32)
    return {"w": jnp.asarray(value[:, None] * np.ones((1, 3), np.float32)),
            "b": jnp.asarray(value).astype(jnp.bfloat16)}, ids


def test_the_newest_models_are_found_where_the_pool_wrapped_around():
    # capacity 4, six models promoted: slots 0 and 1 were overwritten by generations 4 and 5
    params, ids = pool([4, 5, 2, 3])
    assert list(newest_slots(ids, 3)) == [1, 0, 3]
    mean = newest_mean(params, ids, 3)
    np.testing.assert_allclose(np.asarray(mean["w"]), [4.0, 4.0, 4.0])      # (5 + 4 + 3) / 3
    assert mean["w"].shape == (3,) and mean["b"].dtype == jnp.bfloat16     # one model, its dtypes
    np.testing.assert_allclose(float(newest_mean(params, ids, 1)["b"]), 5.0)  # the newest alone


def test_a_pool_holding_fewer_models_averages_those_it_holds():
    params, ids = pool([0, 1, -1, -1])
    assert list(newest_slots(ids, 8)) == [1, 0]
    np.testing.assert_allclose(np.asarray(newest_mean(params, ids, 8)["w"]), [0.5, 0.5, 0.5])


def test_nothing_to_average_is_refused():
    params, ids = pool([-1, -1])
    with pytest.raises(ValueError, match="the pool holds no model to average"):
        newest_mean(params, ids, 2)
    with pytest.raises(ValueError, match="must be >= 1, got 0"):
        newest_slots([0, 1], 0)
