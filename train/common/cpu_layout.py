"""The CPU thread layout of the 2048 learner: one core, by rule.

XLA's CPU backend sizes its thread pool from the CPUs the process may use when the backend
starts, and splits the learner's largest kernels over them; each split is a barrier, and the
n-tuple update is a chain of small kernels. Measured on the two CPU kinds of this project's
2-core machines (docs/lab/benchmarks.md): on the Intel Xeon one pinned core ran the learner
1.7x as fast as both (and 1.25x per CPU-second on a busy machine, 2026-12-02); on the AMD EPYC
Zen 5 one core was 21-25% faster when other jobs kept the machine busy and 7% slower when it
was quiet. So the rule, ``one`` (the process
pinned to its lowest CPU), is within 10% of the faster layout on both; ``all`` keeps XLA's
default (every CPU the process may use).

Pinning works when done before the first computation starts JAX's backend (after ``import jax``
is fine); after, the pool keeps its size, and nothing is changed. Only the CPU backend is
touched: where JAX would start a GPU or TPU backend, nothing changes.

Requests (a pipeline's ``--cpu-layout``, the bench's ``--layout``): ``auto`` (the environment
variable ``JAXGAMES_CPU_LAYOUT`` if set, so that a test suite or a cluster script can fix the
layout without flags; else the rule), ``one``, ``all``.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import importlib.util
import os
import sys
from typing import Callable

from train.common.errors import UserError

__all__ = ["ENV", "LAYOUTS", "REQUESTS", "RULE", "Decision", "apply", "backend", "check_request", "choose",
           "select"]

LAYOUTS = ("one", "all")
REQUESTS = ("auto", *LAYOUTS)
RULE = "one"
ENV = "JAXGAMES_CPU_LAYOUT"
LAYOUT_WORDS = {"all": "all cores", "one": "one core"}


@dataclasses.dataclass(frozen=True)
class Decision:
    """``layout`` is None when nothing is changed (another backend, one CPU, a started
    backend); ``how`` says why."""

    layout: str | None
    how: str

    def line(self) -> str:
        """One line for the log: the layout and why."""
        if self.layout is None:
            return f"cpu layout: not changed ({self.how})"
        return f"cpu layout: {LAYOUT_WORDS[self.layout]} ({self.how})"


def check_request(value: str, flag: str = "cpu_layout") -> str:
    if value not in REQUESTS:
        raise ValueError(f"{flag} must be one of {', '.join(REQUESTS)}, got {value!r}")
    return value


def usable_cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))


def _backend_started() -> str | None:
    """The default backend's platform if JAX has started its backends in this process."""
    xb = sys.modules.get("jax._src.xla_bridge")
    if xb is None or not getattr(xb, "_backends", None):
        return None
    import jax
    return jax.default_backend()


def _accelerator_plugins() -> bool:
    """Whether a JAX backend plugin (CUDA, ROCm, Metal ...) or libtpu is installed: without one,
    only the CPU backend can start."""
    try:
        if importlib.metadata.entry_points(group="jax_plugins"):
            return True
    except Exception:   # a broken distribution's metadata: count it as a plugin, to be safe
        return True
    return any(importlib.util.find_spec(m) is not None for m in ("jax_plugins", "libtpu"))


def backend() -> str:
    """The platform JAX's default backend has or will have in this process, without starting
    it: the started one, else the first of ``JAX_PLATFORMS``, else "cpu" when no accelerator
    plugin is installed, else "an accelerator" (not pinned: its host threads feed the device)."""
    started = _backend_started()
    if started:
        return started
    platforms = os.environ.get("JAX_PLATFORMS") or os.environ.get("JAX_PLATFORM_NAME") or ""
    if "jax" in sys.modules:
        platforms = sys.modules["jax"].config.jax_platforms or platforms
    first = platforms.split(",")[0].strip().lower()
    return first or ("an accelerator plugin" if _accelerator_plugins() else "cpu")


def choose(request: str, *, platform_of: Callable[[], str] = backend) -> Decision:
    """The layout for ``request`` (see the module docstring) in this process; ``platform_of`` is
    an argument so that tests can stand in for the backend. A bad ``JAXGAMES_CPU_LAYOUT``:
    :class:`~train.common.errors.UserError`."""
    check_request(request)
    how = "forced"
    if request == "auto":
        try:
            request = check_request(os.environ.get(ENV, "auto").strip() or "auto", ENV)
        except ValueError as e:   # the user's environment: one line, exit 2
            raise UserError(str(e)) from None
        how = f"from {ENV}" if request != "auto" else "the rule for this learner, docs/benchmarks.md"
    kind = platform_of()
    if kind != "cpu":
        return Decision(None, f"JAX's backend here is {kind}, not the CPU")
    if _backend_started():
        return Decision(None, "JAX's CPU backend had already started in this process")
    if len(usable_cpus()) < 2:
        return Decision(None, "this process may use one CPU only")
    return Decision(RULE if request == "auto" else request, how)


def apply(layout: str | None) -> None:
    """Pin this process for ``layout`` (nothing for ``all`` or None). Before JAX's backend
    starts; RuntimeError after (the thread pool would keep its size)."""
    if layout != "one":
        return
    if _backend_started():
        raise RuntimeError("the one-core layout needs a fresh process (JAX's backend has started here)")
    os.sched_setaffinity(0, {usable_cpus()[0]})


def select(request: str, *, log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
           **kwargs) -> Decision:
    """:func:`choose`, :func:`apply`, and one line to ``log`` saying which layout and why."""
    decision = choose(request, **kwargs)
    apply(decision.layout)
    log(decision.line())
    return decision
