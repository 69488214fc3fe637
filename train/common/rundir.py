"""``runs/<game>/<run-name>/``: config.json, metrics.jsonl, plots/, checkpoints/, report.md,
summary.json. Plain JSON and Markdown only."""

from __future__ import annotations

import dataclasses
import json
import math
import pathlib
from typing import Any, Mapping


class RunDir:
    def __init__(self, root: str | pathlib.Path, game: str, config: Any, *, resume: bool):
        self.path = pathlib.Path(root) / game / config.run_name
        self.plots = self.path / "plots"
        self.checkpoints = self.path / "checkpoints"
        self.resumed = resume
        config_json = _config_dict(config)
        if resume:
            saved = self.path / "config.json"
            if not saved.exists():
                raise FileNotFoundError(
                    f"--resume: no run at {self.path} (config.json missing); "
                    f"start it without --resume first")
            old = json.loads(saved.read_text())
            diff = {k for k in set(old) | set(config_json)
                    if k not in _RUN_ONLY and old.get(k) != config_json.get(k)}
            if diff:
                raise ValueError(
                    f"--resume: the configuration differs from the saved run in "
                    f"{', '.join(sorted(diff))}; resume with the same settings")
        elif (self.path / "config.json").exists():
            raise FileExistsError(
                f"{self.path} already holds a run: pass --resume to continue it or choose "
                f"another --run-name")
        self.plots.mkdir(parents=True, exist_ok=True)
        (self.path / "config.json").write_text(json.dumps(config_json, indent=2, sort_keys=True))
        if not resume:
            (self.path / "metrics.jsonl").write_text("")

    def log(self, step: int, metrics: Mapping[str, Any]) -> None:
        row = {"step": int(step), **{k: _plain(v) for k, v in metrics.items()}}
        with open(self.path / "metrics.jsonl", "a") as f:
            f.write(json.dumps(row) + "\n")

    def metrics(self) -> list[dict]:
        text = (self.path / "metrics.jsonl").read_text()
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def truncate_metrics(self, last_step: int) -> None:
        """Drop rows logged after ``last_step`` (a resumed run re-logs them)."""
        rows = [r for r in self.metrics() if r["step"] <= last_step]
        (self.path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    def open_checkpoints(self, *, keep: int, best: bool = False):
        """The run's checkpointers ``(latest, best or None)``; on resume, metric rows logged
        after the last checkpoint are dropped (the resumed run logs them again)."""
        from train.common.checkpoint import Checkpointer  # orbax import only when needed

        latest = Checkpointer(self.checkpoints, keep=keep)
        if self.resumed:
            self.truncate_metrics(latest.latest_step() or 0)
        return latest, (Checkpointer(self.path / "best", keep=1) if best else None)

    def write_summary(self, summary: Mapping[str, Any]) -> None:
        flat = {k: _plain(v) for k, v in summary.items()}
        (self.path / "summary.json").write_text(json.dumps(flat, indent=2))

    def write_report(self, markdown: str) -> None:
        (self.path / "report.md").write_text(markdown)


# Fields that may change between a run and its resumption.
_RUN_ONLY = {"resume", "progress"}


def _config_dict(config: Any) -> dict:
    return {k: _plain(v) for k, v in dataclasses.asdict(config).items()}


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
