"""Adapters from the jaxgames contract to the field's standard APIs.

* :mod:`jaxgames.wrappers.pettingzoo`: ``env(game, **options)``, a PettingZoo AEC env of any
  game (Hex, hold'em, Hearts ...);
* :mod:`jaxgames.wrappers.gymnasium`: the one-player games (2048, ten-and-a-half) as
  ``gymnasium.Env`` and as a jitted ``gymnasium.vector.VectorEnv``; importing it registers
  ``jaxgames/2048-v0`` and ``jaxgames/TenHalf-v0``.

The submodules are not imported here: PettingZoo and Gymnasium are optional (the ``dev``
extra), so ``import jaxgames`` and ``import jaxgames.wrappers`` work without them; importing a
submodule without its library raises an ImportError that says what to install. Usage and
conventions: docs/wrappers.md.
"""

__all__ = ["gymnasium", "pettingzoo"]
