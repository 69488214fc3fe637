"""The CPU thread layout of a program, chosen by measuring it on this machine.

XLA's CPU backend sizes its thread pool from the CPUs the process may use when the backend
starts, and splits its largest kernels over them (the compiled HLO marks them with
``outer_dimension_partitions``). Which is faster depends on the CPU: the 2048 learner ran 1.7x
faster pinned to one core on a 2-core Intel Xeon; on a 2-core AMD EPYC (Zen 5) both cores won
when the machine was quiet and one core (by 21-25%) when other jobs kept it busy
(docs/benchmarks.md). So instead of a fixed choice, :func:`select` measures the layouts once
per machine and keeps the fastest:

- ``all``: every CPU this process may use (XLA's default; nothing is changed);
- ``one``: the process pinned to one CPU (its lowest): XLA runs every kernel on one thread.

Pinning works when done after ``import jax`` but before the first computation starts the
backend; after that the pool is already sized (checked: the HLO compiled after a late pin still
splits kernels in two, and the process keeps its threads). :func:`select` refuses nothing in
that case: it reports the layout as unchanged.

Requests (a pipeline's ``--cpu-layout``, the bench's ``--layout``): ``auto`` (the cached choice,
measured on a miss), ``all``, ``one`` (forced, no measuring), ``measure`` (measure again and
update the cache). ``auto`` reads the environment variable ``JAXGAMES_CPU_LAYOUT`` first, so a
test suite or a cluster script can fix the layout without flags.

Measuring: one child process per layout (this file run by path, see ``_spawn``), each
pinned or not before its backend starts, sets up the probe (the run's own compiled update)
concurrently, then the parent has them time short bursts in turn, alternating the order each
round (ABBA), and keeps each layout's median rate. A child waiting for its turn is idle, so the
two never compete while timed. The choice is cached in ``~/.cache/jaxgames/cpu_layout.json``
(``$XDG_CACHE_HOME``, or ``$JAXGAMES_CACHE_DIR``) under the CPU model, the usable and total
core counts, the jax and jaxlib versions, ``XLA_FLAGS`` and the probe and its arguments, so
later runs pay nothing (measuring took 15-20 s on the busy 2-core Zen 5, most of it the
children's set-up). A damaged cache file is reported on one line and measured over. The choice
is the one measured, under that moment's load (kept in the cache and shown): ``measure`` when the
load has changed for good.

Only the CPU backend is touched: where JAX would start a GPU or TPU backend, nothing changes.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import importlib.util
import json
import os
import pathlib
import pkgutil
import platform
import select as _select
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable, Mapping

__all__ = ["CACHE_ENV", "ENV", "LAYOUTS", "REQUESTS", "Decision", "Probe", "apply", "cache_key",
           "check_request", "choose", "select"]

LAYOUTS = ("all", "one")
REQUESTS = ("auto", "all", "one", "measure")
ENV = "JAXGAMES_CPU_LAYOUT"
CACHE_ENV = "JAXGAMES_CACHE_DIR"
CACHE_VERSION = 1

# Timing: ROUNDS bursts of BURST_SECONDS per layout, in turns, so that a change in the machine's
# load falls on both layouts alike, and the median drops the bursts another job's spike hit.
# The set-up (imports, the table, a compile) costs far more than the bursts.
ROUNDS = 5
BURST_SECONDS = 0.3
CHILD_TIMEOUT = 300.0   # a child's set-up (imports, a compile) or one burst; then it is given up

LAYOUT_WORDS = {"all": "all cores", "one": "one core"}


@dataclasses.dataclass(frozen=True)
class Probe:
    """What is timed: ``target`` ("module:function") called with ``kwargs`` in the child
    returns ``burst(seconds) -> rate`` (higher is faster), after its own set-up."""

    target: str
    kwargs: Mapping = dataclasses.field(default_factory=dict)
    unit: str = "moves/s"


@dataclasses.dataclass(frozen=True)
class Decision:
    """``layout`` is None when nothing is changed (another backend, one CPU, a started
    backend). ``how``: forced, cached, measured, or why nothing changed."""

    layout: str | None
    how: str
    rates: Mapping[str, float] = dataclasses.field(default_factory=dict)
    seconds: float = 0.0          # what deciding cost this process (the probe's wall time)
    measured_at: str = ""
    unit: str = "moves/s"
    load: str = ""                # the load average when measured: a busy machine favours one core

    def line(self, flag: str = "--cpu-layout") -> str:
        """One line for the log: the layout and why."""
        if self.layout is None:
            return f"cpu layout: not changed ({self.how})"
        rates = ", ".join(f"{LAYOUT_WORDS[k]} {v / 1e6:.2f} M" for k, v in
                          sorted(self.rates.items(), key=lambda kv: -kv[1]))
        if self.how == "measured":
            why = f"measured now in {self.seconds:.1f} s, load {self.load}: {rates} {self.unit}"
        elif self.how == "cached":
            why = (f"measured {self.measured_at} on this CPU, load {self.load}: {rates} {self.unit}; "
                   f"{flag} measure measures again")
        else:
            why = self.how
        return f"cpu layout: {LAYOUT_WORDS[self.layout]} ({why})"


def check_request(value: str, flag: str = "cpu_layout") -> str:
    if value not in REQUESTS:
        raise ValueError(f"{flag} must be one of {', '.join(REQUESTS)}, got {value!r}")
    return value


# ---------------------------------------------------------------------------- the machine


def _cpuinfo() -> dict:
    """The first processor's identity from /proc/cpuinfo (the model name alone can be vague:
    "AMD EPYC" under some hypervisors, so family, model and stepping come too)."""
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break
                k, _, v = line.partition(":")
                k = k.strip()
                if k in ("vendor_id", "model name", "cpu family", "model", "stepping", "CPU part",
                         "CPU implementer"):
                    info[k] = v.strip()
    except OSError:
        pass
    return info or {"processor": platform.processor() or platform.machine()}


def usable_cpus() -> list[int]:
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "none"


def cache_key(probe: Probe) -> str:
    """What the measured choice depends on; a change in any of it measures again."""
    return json.dumps({"cpu": _cpuinfo(), "usable_cpus": len(usable_cpus()), "cpu_count": os.cpu_count(),
                       "jax": _version("jax"), "jaxlib": _version("jaxlib"),
                       "xla_flags": os.environ.get("XLA_FLAGS", ""), "probe": probe.target,
                       "kwargs": probe.kwargs}, sort_keys=True)


def cache_path() -> pathlib.Path:
    root = os.environ.get(CACHE_ENV) or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "jaxgames")
    return pathlib.Path(root) / "cpu_layout.json"


def _read_cache(path: pathlib.Path, log: Callable[[str], None]) -> dict:
    """The cache's entries; {} when there is none, and when it is damaged (said on one line)."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return {}
    except OSError as e:
        log(f"cpu layout: cannot read the cache {path} ({e.strerror}); measuring again")
        return {}
    try:
        data = json.loads(text)
        entries = data["entries"]
        if data.get("version") != CACHE_VERSION or not isinstance(entries, dict) or not all(
                isinstance(e, dict) and e.get("layout") in LAYOUTS and isinstance(e.get("rates", {}), dict)
                and all(k in LAYOUTS and isinstance(v, (int, float)) for k, v in e.get("rates", {}).items())
                for e in entries.values()):
            raise ValueError("not this program's format")
    except (ValueError, KeyError, TypeError) as e:
        why = "not JSON" if isinstance(e, json.JSONDecodeError) else str(e) or type(e).__name__
        log(f"cpu layout: ignoring the damaged cache {path} ({why}); measuring again")
        return {}
    return entries


def _write_cache(path: pathlib.Path, entries: dict, log: Callable[[str], None]) -> None:
    """Written whole to a temporary file and renamed, so a reader never sees half a file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=".cpu_layout.", delete=False) as f:
            json.dump({"version": CACHE_VERSION, "entries": entries}, f, indent=1, sort_keys=True)
        os.replace(f.name, path)
    except OSError as e:
        log(f"cpu layout: could not write the cache {path} ({e.strerror or e}); the next run measures again")


# ---------------------------------------------------------------------------- the backend


def _backend_started() -> str | None:
    """The default backend's platform if JAX has started its backends in this process."""
    xb = sys.modules.get("jax._src.xla_bridge")
    if xb is None or not getattr(xb, "_backends", None):
        return None
    import jax
    return jax.default_backend()


def _accelerator_plugins() -> list[str]:
    """The JAX backend plugins installed (CUDA, ROCm, Metal, ...) and libtpu: with none, only
    the CPU backend can start."""
    names = []
    try:
        names += [ep.name for ep in importlib.metadata.entry_points(group="jax_plugins")]
    except Exception:   # a broken distribution's metadata: count it as a plugin, to be safe
        names.append("unknown")
    spec = importlib.util.find_spec("jax_plugins")
    if spec is not None and spec.submodule_search_locations:
        names += [m.name for m in pkgutil.iter_modules(spec.submodule_search_locations)]
    if importlib.util.find_spec("libtpu") is not None:
        names.append("libtpu")
    return names


def _backend_in_child() -> str:
    """Ask a fresh process which backend JAX starts (a GPU's start-up costs it seconds)."""
    env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false")
    try:
        proc = subprocess.run([sys.executable, "-c", "import jax; print(jax.default_backend())"],
                              capture_output=True, text=True, timeout=CHILD_TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        return "unknown"
    lines = proc.stdout.split()
    return lines[-1] if proc.returncode == 0 and lines else "unknown"


def backend() -> str:
    """The platform JAX's default backend has or will have in this process, without starting it
    here: from ``JAX_PLATFORMS``, or "cpu" when no accelerator plugin is installed, else asked
    of a child process."""
    started = _backend_started()
    if started:
        return started
    platforms = os.environ.get("JAX_PLATFORMS") or os.environ.get("JAX_PLATFORM_NAME") or ""
    if "jax" in sys.modules:
        platforms = sys.modules["jax"].config.jax_platforms or platforms
    first = platforms.split(",")[0].strip().lower()
    if first:
        return first
    return "cpu" if not _accelerator_plugins() else _backend_in_child()


# ---------------------------------------------------------------------------- measuring


# The child runs this file by path, not as train.common.cpu_layout: importing the package would
# import JAX and the rest of train.common (1 s) before the probe imports what it needs.
_CHILD = "import runpy, sys; runpy.run_path(sys.argv[1], run_name='__cpu_layout_child__')"


def _spawn(layout: str, probe: Probe, err) -> subprocess.Popen:
    cmd = [sys.executable, "-c", _CHILD, __file__, layout, probe.target, json.dumps(dict(probe.kwargs))]
    root = str(pathlib.Path(__file__).resolve().parents[2])   # the child imports train.* as we do
    # No persistent compilation cache: its key does not hold the thread count, so one layout's
    # child could load the program the other compiled (split for two threads, say).
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p),
               JAX_ENABLE_COMPILATION_CACHE="false")
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True,
                            bufsize=1, env=env)


def _answer(proc: subprocess.Popen, layout: str, err, deadline: float) -> str:
    """The child's next line; RuntimeError with its last error line if it ends or hangs."""
    ready, _, _ = _select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
    line = proc.stdout.readline() if ready else ""
    if line:
        return line.strip()
    proc.kill()
    err.flush()
    err.seek(0)
    last = [ln for ln in err.read().splitlines() if ln.strip()][-1:] or ["no output"]
    raise RuntimeError(f"the {layout!r} probe {'timed out' if not ready else 'failed'}: {last[0].strip()}")


def measure_in_children(probe: Probe, layouts=LAYOUTS, rounds: int = ROUNDS,
                        burst_seconds: float = BURST_SECONDS) -> dict[str, float]:
    """Each layout's median burst rate, timed in turns (see the module docstring). Raises
    RuntimeError (one line) if a child fails, or :class:`NotCPU` if its backend is not the CPU's."""
    procs, errs, done = {}, {}, False
    try:
        for layout in layouts:
            errs[layout] = tempfile.TemporaryFile("w+")
            procs[layout] = _spawn(layout, probe, errs[layout])
        for layout, proc in procs.items():
            word, _, kind = _answer(proc, layout, errs[layout], time.monotonic() + CHILD_TIMEOUT).partition(" ")
            if word != "ready":
                raise RuntimeError(f"the {layout!r} probe said {word!r} where it should say it is ready")
            if kind != "cpu":
                raise NotCPU(kind)
        rates = {layout: [] for layout in layouts}
        order = list(layouts)
        for _ in range(rounds):
            for layout in order:
                procs[layout].stdin.write(f"go {burst_seconds}\n")
                procs[layout].stdin.flush()
                rates[layout].append(float(_answer(procs[layout], layout, errs[layout],
                                                   time.monotonic() + CHILD_TIMEOUT)))
            order.reverse()
        done = True
        return {layout: statistics.median(r) for layout, r in rates.items()}
    finally:
        # done: the children wait for their next word and leave at once; else one may still be
        # setting up (compiling), and is not waited for
        for proc in procs.values():
            if proc.poll() is None and done:
                try:
                    proc.stdin.write("quit\n")
                    proc.stdin.flush()
                except OSError:   # it ended meanwhile
                    pass
            elif proc.poll() is None:
                proc.kill()
        for proc in procs.values():
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for err in errs.values():
            err.close()


class NotCPU(Exception):
    """The child's JAX started another backend than the CPU's."""


def _child(argv: list[str]) -> None:
    """``LAYOUT TARGET KWARGS``: pin (or not) before the backend starts, set the probe up, say
    "ready <backend>", then answer "go SECONDS" with a rate until "quit"."""
    layout, target, kwargs = argv[0], argv[1], json.loads(argv[2])
    # The answers go to a copy of stdout; whatever the probe prints (Python or C) goes to
    # stderr, so that no stray line is read as an answer.
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    apply(layout)
    module, _, name = target.partition(":")
    burst = getattr(importlib.import_module(module), name)(**kwargs)
    jax = sys.modules.get("jax")   # a probe that never imported JAX pins only its own threads
    print(f"ready {jax.default_backend() if jax else 'cpu'}", file=answers, flush=True)
    for line in sys.stdin:
        word, *rest = line.split()
        if word != "go":
            break
        print(repr(float(burst(float(rest[0])))), file=answers, flush=True)
    # JAX's teardown (freeing the probe's tables, its threads) took ~1 s; nothing is left to save
    os._exit(0)


# ---------------------------------------------------------------------------- choosing


def pick(rates: Mapping[str, float]) -> str:
    """The fastest layout; on a tie, ``all`` (it changes nothing)."""
    return max(sorted(rates, key=lambda k: k != "all"), key=lambda k: rates[k])


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def choose(request: str, probe: Probe, *, cache: pathlib.Path | None = None,
           measure: Callable[[Probe], Mapping[str, float]] | None = None,
           platform_of: Callable[[], str] | None = None,
           log: Callable[[str], None] = _stderr, clock: Callable[[], float] = time.perf_counter) -> Decision:
    """Which layout ``request`` means on this machine; applies nothing (:func:`apply` does).

    ``measure`` (default :func:`measure_in_children`) and ``platform_of`` (default
    :func:`backend`) are arguments so that tests can stand in for the timing and the backend."""
    check_request(request)
    if request == "auto":
        request = check_request(os.environ.get(ENV, "auto").strip() or "auto", ENV)
    kind = (platform_of or backend)()
    if kind != "cpu":
        return Decision(None, f"JAX's backend here is {kind}, not the CPU")
    started = _backend_started()
    if started:
        return Decision(None, "JAX's CPU backend had already started in this process")
    if len(usable_cpus()) < 2:
        return Decision(None, "this process may use one CPU only")
    if request in LAYOUTS:
        return Decision(request, f"forced: {request}")
    from train.common.distributed import launch_environment
    if launch_environment() is not None:
        return Decision(None, "one process of a multi-process run: not measured")
    cache = cache or cache_path()
    key = cache_key(probe)
    entries = _read_cache(cache, log)
    if request == "auto" and key in entries:
        e = entries[key]
        return Decision(e["layout"], "cached", e.get("rates", {}), 0.0, e.get("measured_at", "earlier"),
                        probe.unit, (str(e.get("load_average") or "unknown").split() or ["unknown"])[0])
    load = _load_average()   # before the probe's own children add to it
    t = clock()
    try:
        rates = dict((measure or measure_in_children)(probe))
    except NotCPU as e:
        return Decision(None, f"JAX's backend here is {e}, not the CPU")
    except RuntimeError as e:
        log(f"cpu layout: measuring failed, keeping all cores ({e})")
        return Decision(None, "measuring failed", seconds=clock() - t)
    seconds = clock() - t
    layout = pick(rates)
    when = time.strftime("%Y-%m-%d %H:%M")
    entries = _read_cache(cache, lambda _: None)    # another run may have added its own since
    entries[key] = {"layout": layout, "rates": rates, "measured_at": when, "probe_seconds": round(seconds, 2),
                    "load_average": load}
    _write_cache(cache, entries, log)
    return Decision(layout, "measured", rates, seconds, when, probe.unit, load.split()[0])


def _load_average() -> str:
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "unknown"


def apply(layout: str | None) -> None:
    """Pin this process for ``layout`` (nothing for ``all`` or None). Before JAX's backend
    starts; RuntimeError after (the thread pool would keep its size)."""
    if layout != "one":
        return
    if _backend_started():
        raise RuntimeError("the one-core layout needs a fresh process (JAX's backend has started here)")
    os.sched_setaffinity(0, {usable_cpus()[0]})


def select(request: str, probe: Probe, *, flag: str = "--cpu-layout", log: Callable[[str], None] = _stderr,
           **kwargs) -> Decision:
    """:func:`choose`, :func:`apply`, and one line to ``log`` saying which layout and why."""
    decision = choose(request, probe, log=log, **kwargs)
    apply(decision.layout)
    log(decision.line(flag))
    return decision


if __name__ == "__cpu_layout_child__":   # started by _spawn
    _child(sys.argv[2:])
