"""One loop runner for every bandit algorithm of the three papers.

Each round (see ``botorch_mtucb.bandits.protocols``) is appended to a JSON-lines file as
soon as it ends (``botorch_mtucb.bandits.run_file``: checked on reading, appended to,
never truncated), so an interrupted run resumes where it stopped: the recorded rounds are
replayed into a fresh policy (``update`` only, with the recorded action rebuilt from its
JSON) and the loop goes on. Reading back a finished run writes nothing.

Randomness is drawn from per-round generators seeded by ``(seed, round, stream)``:
the environment's stream (contexts, noise) does not depend on the policy, so all
methods of one repetition face the same contexts and noise (common random numbers),
and a resumed run continues exactly as an uninterrupted one would.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from botorch_mtucb.bandits.protocols import Action, Environment, Policy
from botorch_mtucb.bandits.run_file import RunFile, StepRecord
from botorch_mtucb.utils.progress import progress_bar
from botorch_mtucb.utils.random import ENVIRONMENT_STREAM, POLICY_STREAM, round_generator


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


def action_to_json(action: Tensor | Action) -> Any:
    """The JSON form of an action: a point's floats (flattened) or ``action.to_json()``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits.runner import action_to_json
        >>> action_to_json(torch.tensor([[0.25, 0.5]]))
        [0.25, 0.5]
    """
    if isinstance(action, Tensor):
        return _jsonable(action.reshape(-1))
    if not isinstance(action, Action):
        raise TypeError(
            f"an action is a Tensor or has to_json / from_json, got {type(action).__name__}"
        )
    return action.to_json()


def action_from_json(data: Any, environment: Environment) -> Tensor | Action:
    """The action recorded as ``data``: ``environment.action_type.from_json(data)``, or a
    float64 point when the environment declares no ``action_type``.

    Example:
        >>> from botorch_mtucb.bandits import ActiveMultiTaskEnvironment
        >>> from botorch_mtucb.bandits.runner import action_from_json
        >>> action_from_json([0.25, 0.5], object())
        tensor([0.2500, 0.5000], dtype=torch.float64)
        >>> data = {"task": 0, "recommendations": [[0.25], [0.5]]}
        >>> action_from_json(data, ActiveMultiTaskEnvironment).task
        0
    """
    action_type = getattr(environment, "action_type", None)
    if action_type is None:
        return torch.tensor(data, dtype=torch.float64)
    return action_type.from_json(data)


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
            in the file's header and checked on resume; ``None``: none).
        environment: The problem's bandit protocol (``context``, ``observe``, ``regret``;
            ``action_type`` when its actions are structured, see ``Action``).
        horizon: Number of rounds ``T >= 1``.
        seed: Seed of this repetition (same seed: same contexts and noise).
        path: Where to write rounds as they end; an existing file of the same run
            (same policy name, seed and settings, any horizon) is resumed (its rounds are
            replayed into ``policy``); one with ``horizon`` rounds or more is just
            read back (its first ``horizon`` rounds; the file keeps them all), without
            being opened for writing. Damage is handled as ``RunFile`` describes.
        progress: Show a progress bar (tqdm on a terminal, plain lines in a log).
        description: The progress bar's label.
        replay_finished: Whether a file that already holds ``horizon`` rounds is
            replayed into ``policy`` (so that it ends in the run's final state); with
            ``False`` its records are returned and ``policy`` is left untouched, which
            makes reading back a finished run cheap.

    Returns:
        The ``horizon`` records, in order.

    Raises:
        ValueError: If ``horizon < 1``, or ``path`` holds a different run or rounds that
            cannot be trusted (``RunFile.read``: a round stored twice, a bad header).
        OSError: If ``path`` cannot be written (naming it); every round finished
            before stays in the file.
        TypeError: If the policy returns an action that is neither a tensor nor an
            ``Action``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import KernelUCB, confidence_rule, run_policy
        >>> from botorch_mtucb.problems import (
        ...     KernelBanditEnvironment, RKHSTestFunction, make_kernel)
        >>> kernel = make_kernel("rbf", 0.5)
        >>> generator = torch.Generator().manual_seed(0)
        >>> function = RKHSTestFunction.sample(kernel, 2, 10.0, generator=generator)
        >>> environment = KernelBanditEnvironment(function, 0.1, num_actions=20)
        >>> policy = KernelUCB(confidence_rule("AMM-UCB", kernel, 2), name="AMM-UCB")
        >>> records = run_policy(policy, environment, horizon=5, seed=0)
        >>> [record.t for record in records]
        [1, 2, 3, 4, 5]
    """
    if isinstance(horizon, bool) or not isinstance(horizon, int) or horizon < 1:
        raise ValueError(f"horizon must be a positive int, got {horizon!r}")
    # No horizon in the header: round t does not depend on the horizon, so a run to a
    # longer horizon resumes a shorter one (and a shorter one reads a prefix).
    header: dict[str, Any] = {"policy": policy.name, "seed": int(seed)}
    settings = policy.settings() if hasattr(policy, "settings") else None
    if settings is not None:  # parameters that change what the policy does
        header["settings"] = _jsonable(settings)
    run_file = None if path is None else RunFile(path, header)
    records = [] if run_file is None else run_file.read()[:horizon]  # reading writes nothing
    if len(records) == horizon and not replay_finished:
        return records
    with contextlib.ExitStack() as stack:
        if run_file is not None and len(records) < horizon:
            stack.enter_context(run_file.appending(horizon))  # appends, never truncates
        for record in records:  # replay the rounds done before an interruption
            t = record.t
            context = environment.context(t, round_generator(seed, t, ENVIRONMENT_STREAM))
            x = action_from_json(record.x, environment)
            y = torch.tensor(record.y, dtype=torch.float64)
            policy.update(x, y, context, round_generator(seed, t, POLICY_STREAM))
        bar = progress_bar(
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
                x=action_to_json(x),
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
            if run_file is not None:
                run_file.append(record)
            bar.update(1)
        bar.close()
    return records
