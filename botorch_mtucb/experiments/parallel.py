"""Run an experiment's (method, repetition) units in parallel: local worker processes or
a Ray cluster.

A run's work splits into units, one per (method, repetition), each a run file
(``RunDirectory.run_file``) with its own seed (``units``, ``runs.run_methods``). Inside
``parallel_execution(...)``, ``run_methods`` first hands every unit that is not finished
to the executor here, then reads the finished files back as a serial run does, so the
summaries, tables and plots come out of the same code either way, and a serial run and a
parallel one resume each other's files.

* **Backends.** ``workers > 1`` without an address: Ray started locally
  (``ray.init(address="local", num_cpus=workers)``, no dashboard) when Ray is installed,
  else a standard-library pool of ``workers`` spawned processes (``BOTORCH_MTUCB_NO_RAY=1``
  forces the pool). A local Ray that cannot start (``ray.init`` raises, e.g. "node timed
  out during startup" on a loaded machine) is stopped and the run goes to the pool, with
  one warning line saying so. ``ray_address`` (``"auto"``, ``"host:port"`` or
  ``"ray://host:port"``): an existing Ray cluster, one Ray task per unit using one CPU;
  ``workers`` then caps the units in flight (default: the cluster's CPUs). A cluster that
  cannot be reached is an error (``ClusterUnavailableError``), never a silent switch to
  this machine. The backends themselves are ``backends``.
* **Where results go.** A worker runs its unit into a file of its own temporary directory
  and returns the file's bytes; the driver writes them atomically to the output directory,
  which it holds locked (``RunDirectory.locked``). Nothing needs a shared file system, a killed
  driver leaves every file old or new (never a part), and two runs never write the same
  directory. A unit with rounds already stored (an interrupted serial run) is shipped with
  them and resumed from there, as a serial run resumes it; a damaged file is left to the
  serial path (which keeps a copy of it and warns).
* **Order, failures.** Units are sent largest first (``Method.cost`` times the rounds
  left, squared as a round's cost grows with ``t``); a unit that raises is sent once more,
  then its traceback is printed and the other units go on; ``UnitsFailedError`` follows at
  the end of the call, with every finished unit saved.
* **Threads.** Each worker process pins torch to one thread (the driver's setting is left
  alone).
* **Interruption.** Ctrl-C (or SIGTERM, ``cli``) on the driver stops the workers and
  cancels the units in flight; what finished is saved and the same command resumes.

Results are identical to a serial run's (timings aside) on machines of the same kind: the
rounds are seeded per round and per repetition. Nodes with another CPU or BLAS may differ
in the last bits of floating-point results.
"""

from __future__ import annotations

import contextlib
import contextvars
import heapq
import itertools
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from botorch_mtucb.experiments.backends import (
    _NO_RAY_VARIABLE,
    ClusterUnavailableError,
    _LocalRayStartError,
    _ProcessBackend,
    _ray_available,
    _RayBackend,
)
from botorch_mtucb.experiments.run_directory import RunDirectory
from botorch_mtucb.experiments.units import UnitResult, package_version, run_unit, stored_rounds
from botorch_mtucb.utils.checks import as_int
from botorch_mtucb.utils.files import write_atomically
from botorch_mtucb.utils.progress import progress_bar


class UnitsFailedError(RuntimeError):
    """Units of a parallel run raised twice (their tracebacks were printed); every other
    unit finished and is saved.

    Attributes:
        failures: ``(method, repetition, traceback text)`` per failed unit.

    Example:
        >>> from botorch_mtucb.experiments.parallel import UnitsFailedError
        >>> print(UnitsFailedError([("MT-KB", 2, "Traceback ...")], 24))
        1 of 24 units failed twice (MT-KB rep 2; tracebacks above); the others are saved
    """

    def __init__(self, failures: Sequence[tuple[str, int, str]], total: int) -> None:
        self.failures = list(failures)
        names = ", ".join(f"{name} rep {rep}" for name, rep, _ in self.failures[:5])
        more = "" if len(self.failures) <= 5 else f", and {len(self.failures) - 5} more"
        super().__init__(
            f"{len(self.failures)} of {total} units failed twice ({names}{more}; tracebacks "
            "above); the others are saved"
        )


@dataclass
class _Unit:
    index: tuple[int, int]  # (the call, the method's position in it)
    name: str
    rep: int
    path: Path
    prefix: bytes | None
    done: int
    size: float
    horizon: int
    seed: int
    threads: int = 1
    attempts: int = 0


class ParallelExecutor:
    """Runs the units of ``run_methods`` calls on a backend (``parallel_execution``).

    Attributes:
        workers: Units in flight at most (``None``: a Ray cluster's CPUs).
        ray_address: The Ray cluster's address, or ``None`` for local workers.
        unit_seconds: Per finished unit, ``(method, rep, seconds on the worker)``.

    Example:
        >>> import tempfile, torch
        >>> from botorch_mtucb.bandits import RandomPolicy
        >>> from botorch_mtucb.experiments.parallel import parallel_execution
        >>> from botorch_mtucb.experiments.runs import Method, run_methods
        >>> from botorch_mtucb.problems import (
        ...     KernelBanditEnvironment, RKHSTestFunction, make_kernel)
        >>> f = RKHSTestFunction.sample(
        ...     make_kernel("rbf", 0.5), 2, 1.0, generator=torch.Generator().manual_seed(0))
        >>> method = Method(
        ...     "Random", lambda rep: RandomPolicy(), lambda rep: KernelBanditEnvironment(f, 0.1, 10))
        >>> with parallel_execution(workers=2, progress=False) as executor:  # doctest: +SKIP
        ...     _ = run_methods([method], 5, 2, tempfile.mkdtemp(), progress=False)
        >>> len(executor.unit_seconds)  # doctest: +SKIP
        2
    """

    def __init__(
        self, workers: int | None, ray_address: str | None, progress: bool, threads: int = 1
    ) -> None:
        self.workers = workers
        self.ray_address = ray_address
        self.progress = progress
        self.threads = threads
        self.unit_seconds: list[tuple[str, int, float]] = []
        self._backend: Any = None
        self._bar: Any = None
        self._units_total = 0
        self._units_done = 0
        self._failed = 0
        self._started = time.perf_counter()

    def connect(self) -> None:
        """Start the backend now (a cluster address is checked before any work runs; a
        local Ray that cannot start gives way to the process pool, with one line on
        stderr)."""
        if self._backend is not None:
            return
        if self.ray_address is not None:
            self._backend = _RayBackend(self.workers, self.ray_address, run_unit)
        elif _ray_available():
            try:
                self._backend = _RayBackend(self.workers, None, run_unit)
            except _LocalRayStartError as error:
                self._backend = _ProcessBackend(self.workers or 1, run_unit)
                tqdm.write(
                    f"warning: Ray could not start ({error}); running on a standard-library "
                    f"process pool of {self._backend.capacity} processes instead (set "
                    f"{_NO_RAY_VARIABLE}=1 to skip Ray)",
                    file=sys.stderr,
                )
        else:
            self._backend = _ProcessBackend(self.workers or 1, run_unit)

    def _update_bar(self, rounds: int = 0, total: int = 0) -> None:
        if self._bar is None:  # in a log: one line per finished unit
            self._bar = progress_bar(
                total=0,
                unit="round",
                desc="units",
                disable=not self.progress,
                interval=0,
                smoothing=0.05,
            )
        if total:
            self._bar.total += total
        self._bar.set_postfix_str(
            f"units {self._units_done}/{self._units_total}, {self._failed} failed", refresh=False
        )
        if rounds:
            self._bar.update(rounds)
        self._bar.refresh()

    def run_calls(self, calls: Sequence[tuple[Sequence[Any], int, int, int, RunDirectory]]) -> None:
        """Run every unfinished unit of several ``run_methods`` calls, each given as
        ``(methods, horizon, repetitions, seed, directory)``, together (no barrier between
        them); the driver (this thread, holding the directories' locks) writes each
        returned run file (``RunDirectory.run_file``) atomically.

        Raises:
            UnitsFailedError: If units failed twice (after every other unit finished).
            RuntimeError: If a worker runs another version of the package.
        """
        units = []
        for call, (methods, horizon, repetitions, seed, directory) in enumerate(calls):
            for rep in range(repetitions):
                for index, method in enumerate(methods):
                    path = directory.run_file(method.name, rep)
                    stored = stored_rounds(path)
                    if stored is None or stored[0] >= horizon:
                        continue
                    done, prefix = stored
                    cost = float(getattr(method, "cost", 1.0))
                    size = cost * (horizon**2 - done**2)
                    units.append(
                        _Unit(
                            (call, index),
                            method.name,
                            rep,
                            path,
                            prefix,
                            done,
                            size,
                            horizon,
                            seed + rep,
                            self.threads,
                        )
                    )
        if not units:
            return
        self.connect()
        backend = self._backend
        prepared = {
            key: backend.prepare(calls[key[0]][0][key[1]])
            for key in dict.fromkeys(unit.index for unit in units)
        }
        queue = [(-unit.size, n, unit) for n, unit in enumerate(units)]
        heapq.heapify(queue)
        self._units_total += len(units)
        self._update_bar(total=sum(u.horizon - u.done for u in units))
        in_flight: dict[Any, _Unit] = {}
        failures: list[tuple[str, int, str]] = []
        limit = backend.capacity + int(backend.queue_ahead)  # no idle gap between units
        order = itertools.count(len(units))

        def fill() -> None:
            while queue and len(in_flight) < limit:
                _, _, unit = heapq.heappop(queue)
                unit.attempts += 1
                handle = backend.submit(prepared[unit.index], unit, unit.horizon, unit.seed)
                in_flight[handle] = unit

        try:
            fill()
            while in_flight:
                for handle in backend.wait(list(in_flight)):
                    unit = in_flight.pop(handle)
                    try:
                        result = backend.result(handle)
                    except Exception as error:  # the unit raised on the worker
                        text = backend.describe(error)
                        if unit.attempts < 2:
                            tqdm.write(f"{unit.name} rep {unit.rep} failed; sending it again")
                            heapq.heappush(queue, (-unit.size, next(order), unit))
                        else:
                            self._failed += 1
                            failures.append((unit.name, unit.rep, text))
                            tqdm.write(f"{unit.name} rep {unit.rep} failed twice:\n{text}")
                            self._update_bar()
                        continue
                    self._save(unit, result)
                    self._units_done += 1
                    self._update_bar(rounds=unit.horizon - unit.done)
                fill()
        except BaseException:
            backend.cancel(list(in_flight))
            self._backend = None
            raise
        if failures:
            raise UnitsFailedError(failures, len(units))

    def _save(self, unit: _Unit, result: UnitResult) -> None:
        driver = package_version()
        if result.version != driver:
            raise RuntimeError(
                f"a worker on {result.host} runs botorch-mtucb {result.version}, this driver "
                f"{driver}: install the same version on every node"
            )
        unit.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(unit.path, result.data)
        self.unit_seconds.append((unit.name, unit.rep, result.seconds))
        for text in result.warnings:
            tqdm.write(f"warning ({unit.name} rep {unit.rep}): {text}")

    def close(self) -> None:
        """Stop the backend and print one line on what ran."""
        if self._bar is not None:
            self._bar.close()
        if self._backend is not None:
            name = self._backend.name
            self._backend.close()
            self._backend = None
            busy = sum(seconds for _, _, seconds in self.unit_seconds)
            wall = time.perf_counter() - self._started
            if self.progress or self.unit_seconds:
                print(
                    f"parallel ({name}): {len(self.unit_seconds)} units, {busy:.0f} s of unit "
                    f"time in {wall:.0f} s",
                    file=sys.stderr,
                )


_current: contextvars.ContextVar[ParallelExecutor | None] = contextvars.ContextVar(
    "botorch_mtucb_parallel_executor", default=None
)


def current_executor() -> ParallelExecutor | None:
    """The executor of the enclosing ``parallel_execution`` block, or ``None`` (serial).

    Example:
        >>> from botorch_mtucb.experiments.parallel import current_executor
        >>> current_executor() is None
        True
    """
    return _current.get()


def check_workers(workers: Any, name: str = "workers") -> int:
    """``workers`` as an int ``>= 1`` (``TypeError``/``ValueError`` naming it otherwise).

    Example:
        >>> from botorch_mtucb.experiments.parallel import check_workers
        >>> check_workers(2)
        2
        >>> check_workers(0)
        Traceback (most recent call last):
        ...
        ValueError: workers must be an int >= 1, got 0
    """
    value = as_int(workers, name)
    if value < 1:
        raise ValueError(f"{name} must be an int >= 1, got {workers!r}")
    return value


@contextlib.contextmanager
def parallel_execution(
    workers: int | None = None,
    ray_address: str | None = None,
    progress: bool = True,
    threads: int = 1,
) -> Iterator[ParallelExecutor | None]:
    """Within the block, ``run_methods`` runs its units on ``workers`` local processes
    or on the Ray cluster at ``ray_address``; with neither (or ``workers=1`` and no
    address) the block changes nothing and yields ``None``.

    Args:
        workers: Local worker processes (Ray started locally, or a process pool without
            Ray or where Ray cannot start), or with ``ray_address`` the units in flight at
            most; ``None`` or 1 with no address: serial.
        ray_address: ``"auto"``, ``"host:port"`` or ``"ray://host:port"`` of a running
            Ray cluster; it is contacted at once, before any work.
        progress: Whether to show the aggregated progress bar.
        threads: Torch threads of each worker (default 1).

    Raises:
        ValueError / TypeError: If ``workers`` is not an int ``>= 1``.
        ClusterUnavailableError: If ``ray_address`` is given and Ray is not installed or
            no cluster answers there (within seconds).

    Example:
        >>> import tempfile
        >>> from botorch_mtucb.experiments.parallel import parallel_execution
        >>> with parallel_execution(workers=1) as executor:
        ...     executor is None
        True
    """
    if workers is not None:
        workers = check_workers(workers)
    if ray_address is not None and (not isinstance(ray_address, str) or not ray_address.strip()):
        raise ValueError(
            f"ray_address must be 'auto', 'host:port' or 'ray://host:port', got {ray_address!r}"
        )
    if ray_address is None and (workers is None or workers == 1):
        yield None
        return
    executor = ParallelExecutor(workers, ray_address, progress, check_workers(threads, "threads"))
    if ray_address is not None:
        executor.connect()  # fail before any work if there is no cluster
    token = _current.set(executor)
    try:
        yield executor
    finally:
        _current.reset(token)
        executor.close()


__all__ = [
    "ClusterUnavailableError",
    "ParallelExecutor",
    "UnitsFailedError",
    "check_workers",
    "current_executor",
    "parallel_execution",
]
