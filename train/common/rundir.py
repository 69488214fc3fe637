"""``runs/<game>/<run-name>/``: config.json, metrics.jsonl, plots/, checkpoints/, report.md,
summary.json. Plain JSON and Markdown only. The rules are in ``docs/runs.md``:

- one process owns a run folder at a time: an OS lock (``flock``) on ``run.lock`` is held for
  the life of the :class:`RunDir` (``close()`` or ``with``), and a second process is told who
  holds it;
- every check (existing run, resume configuration, a writable parent) runs before anything
  is created, so a refused command leaves nothing behind;
- ``--resume`` compares only the fields that change results (``RunConfig.RUN_ONLY_FIELDS``
  may differ, ``RunConfig.EXTENDABLE_FIELDS`` may grow) and names the field that differs with
  both values;
- config.json records the game (``"game"``): ``--resume``, or a fresh start, into a folder
  holding another game's run says whose run it is instead of blaming a field. A config.json
  written before the field existed is judged by its fields (it shares few of this game's)
  and by the name of its folder's parent, ``runs/<game>/`` (a link may make it another);
- files are replaced atomically; a partial last line of metrics.jsonl (a kill during a write)
  is dropped with a warning;
- in a multi-host run (``train/common/distributed.py``) process 0 alone checks, locks and
  writes (:attr:`RunDir.writes`); the others learn its verdict (they stop with the same
  error), read the rows it kept and then keep their rows in memory, so ``metrics()`` is the
  same on every process. Files a pipeline writes itself (plots, SGF) are written only where
  ``writes`` is true.
"""

from __future__ import annotations

import dataclasses
import datetime
import fcntl
import gc
import json
import math
import os
import pathlib
import socket
import tempfile
import sys
from typing import Any, Mapping

from jaxgames.checkpoints import BEST, LATEST
from train.common import distributed
from train.common.checkpoint import Checkpointer
from train.common.errors import UserError

LOCK_NAME = "run.lock"
#: config.json's entry naming the game of the run (``runs/<game>/``)
GAME_KEY = "game"
# fields every pipeline's config has (RunConfig's): they say nothing of the game
_SHARED_KEYS = frozenset({"seed", "run_name", "runs_dir", "resume", "keep_checkpoints", "progress"})
# What a fresh start may find in a run folder that has no config.json yet: the scaffolding an
# earlier attempt leaves when it is killed before it wrote config.json (written last).
_SCAFFOLDING = {LOCK_NAME, "metrics.jsonl", "plots"}
class RunDirError(UserError):
    """A run folder that cannot be used as asked (in use, exists, missing, other settings)."""


class RunDir:
    """The folder of one run, owned by this process until :meth:`close`.

    ``RunDir(root, game, config, resume=...)`` checks everything first, then creates (fresh) or
    opens (resume) ``root/game/config.run_name`` and takes its lock. Raises :class:`RunDirError`
    when the run exists (fresh), is missing or was made with other settings (resume), is in
    use by another process, or cannot be created.
    """

    def __init__(self, root: str | pathlib.Path, game: str, config: Any, *, resume: bool):
        self._lock_file = None
        self._checkpointers: list = []   # closed with the run folder, whatever ends the run
        self._logged = False
        self._rows: list[dict] | None = None   # the rows, kept here by a process that writes nothing
        if not str(root).strip():
            raise RunDirError("the runs folder is empty: give --runs-dir a folder (. for this one)")
        name = getattr(config, "run_name", "")
        if not name or name in (".", "..") or "/" in name or os.sep in name:
            raise RunDirError(f"run name must be a plain folder name, got {name!r}")
        self.game = game
        self.path = pathlib.Path(root) / game / name
        self.plots = self.path / "plots"
        self.checkpoints = self.path / LATEST
        self.resumed = resume
        # In a multi-host run only process 0 writes (and checks, and locks); the others keep
        # the rows in memory and learn process 0's verdict, so that all stop alike.
        self.writes = distributed.is_primary()
        config_json = _config_dict(config)
        if GAME_KEY in config_json:
            raise ValueError(f"a config field may not be named {GAME_KEY!r}: config.json keeps the game there")
        self._config_keys = frozenset(config_json)
        config_json = {GAME_KEY: game, **config_json}
        if not distributed.is_multiprocess():
            self._open(config_json, config, resume)
            return
        verdict = None
        if self.writes:
            try:
                self._open(config_json, config, resume)
            except RunDirError as e:
                verdict = str(e)
        verdict = distributed.broadcast_text(verdict)  # also a barrier: process 0 is done
        if verdict is not None:
            raise RunDirError(verdict)
        if not self.writes:
            self._rows = _read_rows(self.path / "metrics.jsonl", warn=False)

    def _open(self, config_json: dict, config, resume: bool) -> None:
        saved = self.path / "config.json"
        # 1. every check that needs no lock, before anything is created
        if resume:
            if not saved.is_file():
                raise RunDirError(
                    f"--resume: no run at {self.path} (config.json missing); start it without "
                    f"--resume")
            _check_writable(self.path)
            self._check_same_config(saved, config_json, config)
        else:
            if saved.exists():
                raise self._exists_error()
            self._check_fresh_folder()
            _check_writable(self.path)

        # 2. create the folder (fresh), take the lock, and check again under it: of two
        #    processes started at the same instant only one gets past this point
        self.path.mkdir(parents=True, exist_ok=True)
        self._lock()
        try:
            if resume:
                self._check_same_config(saved, config_json, config)
                self._repair_metrics()
            else:
                if saved.exists():
                    raise self._exists_error()
                self._check_fresh_folder()
                _write_atomic(self.path / "metrics.jsonl", "")
            self.plots.mkdir(exist_ok=True)
            # written last: its presence marks a run (the resume settings replace the old ones)
            _write_atomic(saved, json.dumps(config_json, indent=2, sort_keys=True))
        except BaseException:
            self.close()
            raise

    # -- ownership ---------------------------------------------------------------------------

    def _lock(self) -> None:
        path = self.path / LOCK_NAME
        for attempt in range(2):
            f = open(path, "a+")
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                f.close()
                if attempt == 0:
                    # a RunDir of this process that is garbage but not yet collected (a
                    # reference cycle) still holds the lock: collect it and try once more
                    gc.collect()
                    continue
                raise RunDirError(f"{self.path} is in use by {_holder(path)}: wait for it to end "
                                  f"or choose another --run-name") from None
            except OSError as e:
                f.close()
                raise RunDirError(f"cannot lock {path} ({e.strerror})") from None
            break
        f.seek(0)
        f.truncate()
        f.write(json.dumps({
            "pid": os.getpid(), "host": socket.gethostname(),
            "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "command": " ".join(sys.argv)}) + "\n")
        f.flush()
        self._lock_file = f

    def close(self) -> None:
        """Close the checkpointers it opened and release the run folder (also done by
        ``with``, garbage collection and process exit). ``run.lock`` stays: it is the lock's
        handle, not a marker; its contents are stale."""
        # An orbax manager left open when an error ends the run (say a checkpoint that does not
        # match the configuration) floods stderr at exit with its event loops' tracebacks,
        # burying the one-line error.
        open_ones, self._checkpointers = getattr(self, "_checkpointers", []), []
        try:
            for ck in open_ones:
                ck.close()
        finally:
            f, self._lock_file = self._lock_file, None
            if f is not None:
                try:
                    fcntl.flock(f, fcntl.LOCK_UN)
                finally:
                    f.close()

    def __enter__(self) -> "RunDir":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    # -- checks ------------------------------------------------------------------------------

    def _whose(self, other: str, old: dict) -> str:
        """Whose run the folder holds, when not this game's (``other`` from _other_game)."""
        if other:
            return f"holds a run of {other}, not of {self.game}"
        foreign = sorted(set(old) - self._config_keys - {GAME_KEY})
        return (f"is not a run of {self.game} (its config.json has "
                f"{', '.join(foreign[:3])}{' ...' if len(foreign) > 3 else ''}, which {self.game} runs do not)")

    def _exists_error(self) -> RunDirError:
        saved = self.path / "config.json"
        try:
            old = json.loads(saved.read_text())
        except (OSError, ValueError):
            old = None
        if isinstance(old, dict):
            other = self._other_game(old)
            if other is not None:
                return RunDirError(f"{self.path} {self._whose(other, old)}: choose another --run-name")
        return RunDirError(f"{self.path} already holds a run: pass --resume to continue it or "
                           f"choose another --run-name")

    def _other_game(self, old: dict) -> str | None:
        """The game of the run whose config is ``old`` when it is not this one: its name
        (recorded, or its folder's parent's), "" when unknown; None when it is this game's."""
        if GAME_KEY in old:
            return None if old[GAME_KEY] == self.game else str(old[GAME_KEY])
        # written before config.json recorded the game: a run of this game shares most of
        # the fields of this game's config (a field or two may have come or gone since)
        mine = set(self._config_keys) - _SHARED_KEYS
        theirs = set(old) - _SHARED_KEYS
        if not mine or len(mine & theirs) * 2 >= min(len(mine), len(theirs) or 1):
            return None
        try:
            parent = self.path.resolve().parent.name
        except OSError:
            parent = ""
        return parent if parent and parent != self.game else ""

    def _check_fresh_folder(self) -> None:
        if self.path.exists():
            if not self.path.is_dir():
                raise RunDirError(f"{self.path} is a file, not a run folder; choose another "
                                  f"--run-name")
            other = sorted(p.name for p in self.path.iterdir() if p.name not in _SCAFFOLDING)
            if other:
                raise RunDirError(
                    f"{self.path} holds {', '.join(other[:3])}{' ...' if len(other) > 3 else ''} "
                    f"but no config.json: not a run this program can continue; choose another "
                    f"--run-name")

    def _check_same_config(self, saved: pathlib.Path, config_json: dict, config) -> None:
        # the fields --resume lets differ, and those it lets grow (the config's class says)
        run_only = frozenset(getattr(config, "RUN_ONLY_FIELDS", ()))
        extendable = frozenset(getattr(config, "EXTENDABLE_FIELDS", ()))
        try:
            old = json.loads(saved.read_text())
            if not isinstance(old, dict):
                raise ValueError("not a JSON object")
        except (OSError, ValueError) as e:
            raise RunDirError(f"--resume: {saved} is unreadable ({e}); this run cannot be "
                              f"resumed, start another --run-name") from None
        other = self._other_game(old)
        if other is not None:
            raise RunDirError(f"--resume: {self.path} {self._whose(other, old)}: choose another "
                              f"--run-name")
        missing = object()
        for k in sorted(set(old) | set(config_json)):
            if k in run_only or k == GAME_KEY:
                continue
            a, b = old.get(k, missing), config_json.get(k, missing)
            if a is missing or b is missing:
                # a field added or removed since the run was saved: what the old code did with
                # it is not known here, so the run is not carried on under another meaning
                change = "has no " + k + ", a setting added since" if a is missing else \
                    "has " + k + ", a setting since removed"
                raise RunDirError(
                    f"--resume: {saved} was written by an older version of this pipeline (it {change}): "
                    f"it cannot be resumed; start another --run-name")
            if k in extendable and isinstance(a, int) and isinstance(b, int) and a != b:
                if b > a:
                    continue   # a longer run: it trains on from the last checkpoint
                raise RunDirError(
                    f"--resume: {k} may only grow ({a} saved, {b} now): a run is carried on, "
                    f"never cut short; resume with {k} >= {a} or start another --run-name")
            if a != b:
                was = "(not set)" if a is missing else json.dumps(a)
                now = "(not set)" if b is missing else json.dumps(b)
                raise RunDirError(
                    f"--resume: {k} differs from the saved run ({was} saved, {now} now); resume "
                    f"with the saved settings or start another --run-name")

    # -- metrics -----------------------------------------------------------------------------

    def log(self, step: int, metrics: Mapping[str, Any]) -> None:
        """Append one row. Rows are in step order: the first row a session logs replaces any
        rows at or after its step left by an interrupted session (so a resumed run that falls
        back to an older checkpoint never repeats steps)."""
        step = int(step)
        if not self._logged:
            self._logged = True
            if any(r["step"] >= step for r in self.metrics()):
                self.truncate_metrics(step - 1)
        row = {"step": step, **{k: _plain(v) for k, v in metrics.items()}}
        if not self.writes:
            self._rows.append(json.loads(json.dumps(row)))  # as process 0 reads it back
            return
        with open(self.path / "metrics.jsonl", "a") as f:
            f.write(json.dumps(row) + "\n")

    def metrics(self) -> list[dict]:
        """The logged rows; a partial last line (a write cut short) is left out with a warning."""
        if not self.writes:
            return [dict(r) for r in self._rows]
        return _read_rows(self.path / "metrics.jsonl")

    def truncate_metrics(self, last_step: int | None) -> None:
        """Drop rows logged after ``last_step`` (all of them for None: the run restarts)."""
        rows = [] if last_step is None else [r for r in self.metrics() if r["step"] <= last_step]
        if not self.writes:
            self._rows = rows
            return
        _write_atomic(self.path / "metrics.jsonl", "".join(json.dumps(r) + "\n" for r in rows))

    def _repair_metrics(self) -> None:
        path = self.path / "metrics.jsonl"
        if not path.exists():
            _write_atomic(path, "")
            return
        text = path.read_text()
        if text and not text.endswith("\n"):  # a write cut short: keep whole rows only
            rows = _read_rows(path)
            _write_atomic(path, "".join(json.dumps(r) + "\n" for r in rows))

    # -- checkpoints and results -------------------------------------------------------------

    def open_checkpoints(self, *, keep: int, best: bool = False):
        """The run's checkpointers ``(latest, best or None)``. On resume, metric rows logged
        after the last checkpoint are dropped (the resumed run logs them again); a run killed
        before its first checkpoint has all its rows dropped and starts from the beginning."""
        latest = Checkpointer(self.checkpoints, keep=keep)
        best_ck = Checkpointer(self.path / BEST, keep=1) if best else None
        self._checkpointers += [c for c in (latest, best_ck) if c is not None]
        if self.resumed:  # None (no checkpoint yet): the driver starts from the beginning
            self.truncate_metrics(latest.latest_step())
        return latest, best_ck

    def write_summary(self, summary: Mapping[str, Any]) -> None:
        if self.writes:
            flat = {k: _plain(v) for k, v in summary.items()}
            _write_atomic(self.path / "summary.json", json.dumps(flat, indent=2))

    def write_report(self, markdown: str) -> None:
        if self.writes:
            _write_atomic(self.path / "report.md", markdown)


def _check_writable(path: pathlib.Path) -> None:
    """Raise RunDirError unless ``path`` exists as a writable folder or could be created."""
    p = path.absolute()
    while not p.exists():
        if p.is_symlink():
            raise RunDirError(f"cannot create {path}: {p} is a broken link")
        p = p.parent
    if not p.is_dir():
        raise RunDirError(f"cannot create {path}: {p} is a file, not a folder")
    if not os.access(p, os.W_OK | os.X_OK):
        raise RunDirError(f"cannot create {path}: {p} is not writable")
    try:  # os.access says yes to root everywhere; a real (removed) folder tells the truth
        os.rmdir(tempfile.mkdtemp(prefix=".jaxgames-probe-", dir=p))
    except OSError as e:
        raise RunDirError(f"cannot create {path}: {p} is not writable ({e.strerror})") from None


def _holder(lock_path: pathlib.Path) -> str:
    try:
        info = json.loads(lock_path.read_text())
        return (f"process {info['pid']} on {info['host']} (started {info['started']}: "
                f"{info.get('command', '')})")
    except (OSError, ValueError, KeyError, TypeError):
        return "another process (it has not written its name yet)"


def _read_rows(path: pathlib.Path, *, warn: bool = True) -> list[dict]:
    try:
        text = path.read_text()
    except FileNotFoundError:
        return []
    lines = text.split("\n")
    rows = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict) or "step" not in row:
                raise ValueError("not a row with a step")
        except ValueError as e:
            if i == len(lines) - 1:  # no newline after it: a write cut short
                if warn:
                    print(f"warning: {path}: dropped a partial last line (a write was cut "
                          f"short): {line[:60]!r}", file=sys.stderr)
                continue
            raise RunDirError(f"{path} line {i + 1} is damaged ({e}); remove that line to "
                              f"continue") from None
        rows.append(row)
    return rows


def _write_atomic(path: pathlib.Path, text: str) -> None:
    """Replace ``path`` with ``text`` so a kill leaves the old or the new file, never half."""
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _config_dict(config: Any) -> dict:
    return _flat(dataclasses.asdict(config))


def _flat(d: dict) -> dict:
    """A nested config (a learner's inside the run's) as one level: each field by its own name,
    as its flag has it, so ``--resume`` names the field that differs."""
    out = {}
    for k, v in d.items():
        out.update(_flat(v) if isinstance(v, dict) else {k: _plain(v)})
    return out


def _plain(v: Any) -> Any:
    if hasattr(v, "tolist"):
        v = v.tolist()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, tuple):
        return list(v)
    return v


def markdown_table(header: list[str], rows: list[list[Any]]) -> str:
    def fmt(x):
        return f"{x:.4f}" if isinstance(x, float) else str(x)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(fmt(x) for x in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"
