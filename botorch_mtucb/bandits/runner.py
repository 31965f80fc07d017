"""One loop runner for every bandit algorithm of the three papers.

At round ``t`` the environment reveals a context (paper 000: scalarization weights
lambda_t; paper 001: the task nature picks; paper 002: the round's action set), the
policy selects ``x_t``, the environment returns a noisy observation ``y_t`` and the
instantaneous regret, and the policy updates. Each round is appended to a JSON-lines
file as soon as it ends, so an interrupted run resumes where it stopped: the recorded
rounds are replayed into a fresh policy (``update`` only) and the loop goes on.

Randomness is drawn from per-round generators seeded by ``(seed, round, stream)``:
the environment's stream (contexts, noise) does not depend on the policy, so all
methods of one repetition face the same contexts and noise (common random numbers),
and a resumed run continues exactly as an uninterrupted one would.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import torch
from torch import Tensor
from tqdm import tqdm  # text bars everywhere: ipywidgets is not a dependency

from botorch_mtucb.utils.random import ENVIRONMENT_STREAM, POLICY_STREAM, round_generator


@runtime_checkable
class Environment(Protocol):
    """What the runner needs from a problem (the bandit protocol of one paper)."""

    def context(self, t: int, generator: torch.Generator) -> dict[str, Any]:
        """The round's context (weights, task, action set, ...).

        Tensors and numbers are recorded with the round, except under keys that
        start with ``_`` (large items such as action sets, regenerated on resume).
        """

    def observe(self, x: Tensor, context: dict[str, Any], generator: torch.Generator) -> Tensor:
        """A noisy observation at ``x``."""

    def regret(self, x: Tensor, context: dict[str, Any]) -> float:
        """The instantaneous regret of ``x`` in this context (``>= 0``)."""


@runtime_checkable
class Policy(Protocol):
    """A bandit algorithm: ``select`` a point, then ``update`` with what was observed."""

    name: str

    def select(self, context: dict[str, Any], generator: torch.Generator) -> Tensor:
        """The point ``x_t`` to query (``d`` tensor; for task-indexed policies the
        context says which task)."""

    def update(
        self, x: Tensor, y: Tensor, context: dict[str, Any], generator: torch.Generator
    ) -> None:
        """Take the observation ``y`` at ``x`` into account."""


@dataclass
class StepRecord:
    """One round: what was chosen, observed and lost, and how long it took (seconds)."""

    t: int
    x: list[float]
    y: list[float]
    regret: float
    seconds: float
    context: dict[str, Any] = field(default_factory=dict)
    diagnostics: dict[str, Any] = field(default_factory=dict)


def _jsonable(value: Any) -> Any:
    if isinstance(value, Tensor):
        return value.detach().cpu().tolist()
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (int, float, str, bool)) or value is None:
        return value
    return None  # objects (scalarizations, action sets) are regenerated, not stored


def _load_records(path: Path, header: dict[str, Any]) -> list[StepRecord]:
    records: list[StepRecord] = []
    with path.open() as handle:
        lines = [line for line in handle if line.strip()]
    if not lines:
        return records
    stored_header = json.loads(lines[0]).get("header")
    if stored_header != header:
        raise ValueError(
            f"{path} was written by a different run ({stored_header}); expected {header}. "
            "Use another output directory or delete the file to start afresh."
        )
    for line in lines[1:]:
        try:
            records.append(StepRecord(**json.loads(line)))
        except (json.JSONDecodeError, TypeError):
            break  # a torn last line from an interruption: redo that round
    return records


def run_policy(
    policy: Policy,
    environment: Environment,
    horizon: int,
    seed: int,
    path: str | Path | None = None,
    progress: bool = False,
    description: str | None = None,
    replay_finished: bool = True,
) -> list[StepRecord]:
    """Run ``policy`` for ``horizon`` rounds; append each round to ``path`` (JSON lines).

    Args:
        policy: The algorithm (``select`` / ``update``; optional ``diagnostics()``
            returning a dict of numbers recorded with each round, and optional
            ``settings()`` returning the parameters that change its behaviour, stored
            in the file's header and checked on resume).
        environment: The problem's bandit protocol (``context``, ``observe``, ``regret``).
        horizon: Number of rounds ``T >= 1``.
        seed: Seed of this repetition (same seed: same contexts and noise).
        path: Where to write rounds as they end; an existing file of the same run
            (same policy name, seed and settings, any horizon) is resumed (its rounds are
            replayed into ``policy``); one with ``horizon`` rounds or more is just
            read back (its first ``horizon`` rounds; the file keeps them all).
        progress: Show a tqdm progress bar.
        description: The progress bar's label.
        replay_finished: Whether a file that already holds ``horizon`` rounds is
            replayed into ``policy`` (so that it ends in the run's final state); with
            ``False`` its records are returned and ``policy`` is left untouched, which
            makes reading back a finished run cheap.

    Returns:
        The ``horizon`` records, in order.

    Raises:
        ValueError: If ``horizon < 1`` or ``path`` holds a different run.
    """
    if isinstance(horizon, bool) or not isinstance(horizon, int) or horizon < 1:
        raise ValueError(f"horizon must be a positive int, got {horizon!r}")
    # No horizon in the header: round t does not depend on the horizon, so a run to a
    # longer horizon resumes a shorter one (and a shorter one reads a prefix).
    header: dict[str, Any] = {"policy": policy.name, "seed": int(seed)}
    if hasattr(policy, "settings"):  # parameters that change what the policy does
        header["settings"] = _jsonable(policy.settings())
    records: list[StepRecord] = []
    handle = None
    if path is not None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        stored: list[StepRecord] = []
        if path.exists():
            stored = _load_records(path, header)
            records = stored[:horizon]
        with path.open("w") as rewrite:  # drop a torn line, keep every good round
            rewrite.write(json.dumps({"header": header}) + "\n")
            for record in stored:
                rewrite.write(json.dumps(asdict(record)) + "\n")
        if len(records) == horizon and not replay_finished:
            return records
        handle = path.open("a")
    try:
        for record in records:  # replay the rounds done before an interruption
            t = record.t
            context = environment.context(t, round_generator(seed, t, ENVIRONMENT_STREAM))
            x = torch.tensor(record.x, dtype=torch.float64)
            y = torch.tensor(record.y, dtype=torch.float64)
            policy.update(x, y, context, round_generator(seed, t, POLICY_STREAM))
        bar = tqdm(
            total=horizon,
            initial=len(records),
            desc=description or policy.name,
            disable=not progress,
            leave=False,
        )
        for t in range(len(records) + 1, horizon + 1):
            environment_generator = round_generator(seed, t, ENVIRONMENT_STREAM)
            policy_generator = round_generator(seed, t, POLICY_STREAM)
            context = environment.context(t, environment_generator)
            start = time.perf_counter()
            x = policy.select(context, policy_generator)
            y = environment.observe(x, context, environment_generator)
            policy.update(x, y, context, policy_generator)
            seconds = time.perf_counter() - start
            diagnostics = policy.diagnostics() if hasattr(policy, "diagnostics") else {}
            record = StepRecord(
                t=t,
                x=_jsonable(x.reshape(-1)),
                y=_jsonable(y.reshape(-1)),
                regret=float(environment.regret(x, context)),
                seconds=seconds,
                context={
                    k: v
                    for k, v in _jsonable(dict(context)).items()
                    if v is not None and not k.startswith("_")
                },
                diagnostics=_jsonable(diagnostics),
            )
            records.append(record)
            if handle is not None:
                handle.write(json.dumps(asdict(record)) + "\n")
                handle.flush()
            bar.update(1)
        bar.close()
    finally:
        if handle is not None:
            handle.close()
    return records
