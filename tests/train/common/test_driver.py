"""The chunked driver: carry-changing hooks and bulky parts resume exactly, divergence stops
the run with its last good checkpoint, --resume without a checkpoint starts over, best/ keeps
the newest chunk at the highest metric."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from train.common import (BulkyPart, Checkpointer, Checkpointing, DivergenceError, Schedule,
                          run)


def update(carry, key):
    """A learner with a parameter, and a 'replay buffer' it feeds from."""
    noise = jax.random.uniform(key)
    buffer = jnp.roll(carry["buffer"], 1).at[0].set(noise)
    return {"w": carry["w"] + buffer.mean() * carry["pool"].sum(), "buffer": buffer,
            "pool": carry["pool"]}, {"w": carry["w"]}


def fresh():
    return {"w": jnp.float32(0), "buffer": jnp.zeros(8, jnp.float32), "pool": jnp.ones(3, jnp.float32)}


def promote(step, carry):
    # what an opponent pool does between chunks: write the current model into a slot
    return {**carry, "pool": carry["pool"].at[step % 3].set(carry["w"])}


def go(tmp_path, name, *, resume=False, stop=None, bulky_every=None, hook=promote):
    ck = Checkpointer(tmp_path / name / "ck", keep=10)
    bulky = None
    if bulky_every is not None:
        bulky = BulkyPart(get=lambda c: c["buffer"], put=lambda c, b: {**c, "buffer": b},
                          checkpointer=Checkpointer(tmp_path / name / "buffer", keep=10) if bulky_every else None,
                          every=max(bulky_every, 1))
    out = run(update, fresh(), jax.random.key(0), Schedule(num_updates=12, chunk_size=2, stop_after_chunks=stop),
              on_chunk=lambda *a: {}, between_chunks=hook,
              checkpointing=Checkpointing(latest=ck, resume=resume, bulky=bulky))
    ck.close()
    return out


def same(a, b):
    jax.tree_util.tree_map(np.testing.assert_array_equal, a, b)


def test_a_hook_that_changes_the_carry_resumes_exactly(tmp_path):
    whole = go(tmp_path, "whole")
    assert float(whole.carry["pool"].sum()) != 3.0  # the hook did change the carry
    go(tmp_path, "killed", stop=3)
    resumed = go(tmp_path, "killed", resume=True)
    assert resumed.resumed_from == 6 and resumed.step == 12
    same(resumed.carry, whole.carry)


def test_a_bulky_part_saved_every_time_resumes_exactly_and_less_often_does_not(tmp_path):
    whole = go(tmp_path, "whole")
    go(tmp_path, "every", stop=3, bulky_every=1)
    same(go(tmp_path, "every", resume=True, bulky_every=1).carry, whole.carry)
    # saved every 2nd checkpoint: killed after 3 chunks, the buffer on disk is from chunk 2
    go(tmp_path, "sparse", stop=3, bulky_every=2)
    assert Checkpointer(tmp_path / "sparse" / "buffer").latest_step() == 4
    assert Checkpointer(tmp_path / "sparse" / "ck").latest_step() == 6
    sparse = go(tmp_path, "sparse", resume=True, bulky_every=2)
    assert sparse.step == 12 and float(sparse.carry["w"]) != float(whole.carry["w"])
    # never saved: the checkpoint holds no buffer at all, and a resume starts with a fresh one
    go(tmp_path, "never", stop=3, bulky_every=0)
    assert Checkpointer(tmp_path / "never" / "ck").latest_step() == 6
    assert go(tmp_path, "never", resume=True, bulky_every=0).step == 12


def test_divergence_stops_with_the_last_good_checkpoint(tmp_path):
    def diverging(carry, key):
        carry, metrics = update(carry, key)
        return {**carry, "w": jnp.where(carry["w"] > 2.0, jnp.nan, carry["w"])}, metrics

    ck = Checkpointer(tmp_path / "ck", keep=10)
    with pytest.raises(DivergenceError, match="non-finite") as e:
        run(diverging, fresh(), jax.random.key(0), Schedule(num_updates=400, chunk_size=2),
            on_chunk=lambda *a: {}, checkpointing=Checkpointing(latest=ck))
    last = ck.latest_step()
    assert last is not None and f"update {last}" in str(e.value)
    _, carry, _, _ = ck.restore(fresh(), jax.random.key(0))
    assert np.isfinite(np.asarray(carry["w"]))   # what was kept is the last good state


def test_resume_without_a_checkpoint_starts_from_the_beginning(tmp_path, capsys):
    whole = go(tmp_path, "whole")
    (tmp_path / "none").mkdir()
    resumed = go(tmp_path, "none", resume=True)
    assert "starting from the beginning" in capsys.readouterr().err
    assert resumed.resumed_from is None
    same(resumed.carry, whole.carry)


def test_best_keeps_the_newest_chunk_at_the_highest_metric(tmp_path):
    # chunks end at updates 2, 4, ..., 12; the metric ties at its highest at 4 and 8
    metric = {2: 0.5, 4: 1.0, 6: 0.25, 8: 1.0, 10: 0.75, 12: 0.5}
    latest, best = Checkpointer(tmp_path / "ck", keep=10), Checkpointer(tmp_path / "best", keep=1)
    run(update, fresh(), jax.random.key(0), Schedule(num_updates=12, chunk_size=2),
        on_chunk=lambda step, *a: {"score": metric[step]},
        checkpointing=Checkpointing(latest=latest, best=best, best_metric="score",
                                    params=lambda c: c["w"]))
    assert best.latest_step() == 8 and best.best_value() == 1.0
    step, w, _, _ = best.restore(jnp.float32(0), jax.random.key(0))
    _, carry, _, _ = latest.restore(fresh(), jax.random.key(0), step=8)
    assert step == 8 and float(w) == float(carry["w"])
    latest.close()
    best.close()
