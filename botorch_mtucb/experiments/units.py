"""One unit of a parallel run, one (method, repetition) run file: what a worker runs
(``run_unit``) and returns (``UnitResult``), and what a stored file leaves to run
(``stored_rounds``).

A worker runs its unit into a file of its own temporary directory (holding the rounds
stored before, if any) and returns the file's bytes; the driver writes them to the
output directory (``parallel``). A unit is seeded per round and per repetition, so its
file is a serial run's, timings aside.
"""

from __future__ import annotations

import json
import socket
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from botorch_mtucb.bandits.run_file import RunFile
from botorch_mtucb.experiments.run_directory import RunDirectory


@dataclass
class UnitResult:
    """What a worker returns for one unit: the run file's bytes and where it ran.

    Attributes:
        data: The complete run file (header and ``horizon`` rounds).
        seconds: Wall-clock seconds of the unit on the worker (set-up included).
        host: The worker's host name.
        version: The worker's ``botorch_mtucb`` version.
        warnings: The warnings the unit raised, as text.

    Example:
        >>> from botorch_mtucb.experiments.units import UnitResult
        >>> result = UnitResult(b'{"header": {}}', 0.5, "node1", "0.1.0", [])
        >>> result.host, len(result.data)
        ('node1', 14)
    """

    data: bytes
    seconds: float
    host: str
    version: str
    warnings: list[str]


def package_version() -> str:
    """The installed ``botorch-mtucb`` version (``"unknown"`` in a source tree that is not
    installed): a worker's must be the driver's.

    Example:
        >>> from botorch_mtucb.experiments.units import package_version
        >>> isinstance(package_version(), str)
        True
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("botorch-mtucb")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "unknown"


def run_unit(
    method_bytes: bytes,
    rep: int,
    horizon: int,
    seed: int,
    prefix: bytes | None,
    threads: int = 1,
) -> UnitResult:
    """Run one (method, repetition) unit in this process and return its run file.

    What a worker executes. ``method_bytes`` is the ``cloudpickle`` of a ``runs.Method``;
    the environment is built before the policy (the serial order), the run goes to a file
    in a temporary directory (holding ``prefix``, the rounds stored before, if any) and
    torch is pinned to ``threads`` threads in this process.

    Returns:
        The ``UnitResult`` (the file's bytes, seconds, host, version, warnings).

    Example:
        >>> import cloudpickle, torch
        >>> from botorch_mtucb.bandits import RandomPolicy
        >>> from botorch_mtucb.experiments.units import run_unit
        >>> from botorch_mtucb.experiments.runs import Method
        >>> from botorch_mtucb.problems import (
        ...     KernelBanditEnvironment, RKHSTestFunction, make_kernel)
        >>> f = RKHSTestFunction.sample(
        ...     make_kernel("rbf", 0.5), 2, 1.0, generator=torch.Generator().manual_seed(0))
        >>> method = Method(
        ...     "Random", lambda rep: RandomPolicy(), lambda rep: KernelBanditEnvironment(f, 0.1, 10))
        >>> before = torch.get_num_threads()
        >>> result = run_unit(cloudpickle.dumps(method), 0, 3, 0, None)
        >>> len(result.data.splitlines())  # the header and 3 rounds
        4
        >>> torch.set_num_threads(before)
    """
    import cloudpickle
    import torch

    from botorch_mtucb.bandits import run_policy

    start = time.perf_counter()
    torch.set_num_threads(threads)  # a worker process of ours (``--threads``, default 1)
    method = cloudpickle.loads(method_bytes)
    with tempfile.TemporaryDirectory(prefix="botorch-mtucb-unit-") as directory:
        path = RunDirectory(directory).run_file(method.name, rep)
        path.parent.mkdir(parents=True)
        if prefix is not None:
            path.write_bytes(prefix)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")
            environment = method.make_environment(rep)
            policy = method.make_policy(rep)
            run_policy(policy, environment, horizon, seed=seed, path=path, replay_finished=False)
        data = path.read_bytes()
    return UnitResult(
        data=data,
        seconds=time.perf_counter() - start,
        host=socket.gethostname(),
        version=package_version(),
        warnings=[f"{w.category.__name__}: {w.message}" for w in caught],
    )


def stored_rounds(path: Path) -> tuple[int, bytes | None] | None:
    """What the run file at ``path`` leaves to run: ``(rounds stored, the file's bytes)``
    for a healthy or torn file, ``(0, None)`` for none, ``None`` where the serial path
    must decide (damage, another run, unreadable). Writes nothing.

    Example:
        >>> import pathlib, tempfile
        >>> from botorch_mtucb.experiments.units import stored_rounds
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "rep0.jsonl"
        >>> stored_rounds(path)
        (0, None)
        >>> _ = path.write_text('{"header": {"seed": 0}}\\n')
        >>> stored_rounds(path)
        (0, b'{"header": {"seed": 0}}\\n')
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return 0, None
    except OSError:
        return None
    first = data.split(b"\n", 1)[0]
    try:
        header = json.loads(first)["header"]
    except (ValueError, KeyError, TypeError):
        return None
    run_file = RunFile(path, header)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            records = run_file.read()
    except (ValueError, OSError, Warning):
        return None
    if run_file.damaged:  # keep-a-copy-and-warn is the serial path's job
        return None
    return len(records), data
