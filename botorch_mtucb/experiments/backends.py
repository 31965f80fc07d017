"""Where the units of a parallel run execute (``parallel.ParallelExecutor``): a pool of
spawned processes, or Ray (started locally for the run, or a running cluster).

A backend takes the worker function (``parallel.run_unit``) and offers ``prepare(method)``,
``submit(prepared, unit, horizon, seed) -> handle``, ``wait(handles) -> done``,
``result(handle)``, ``describe(error)``, ``cancel(handles)``, ``close()``, a ``name``, a
``capacity`` (units running at once) and ``queue_ahead`` (whether one more unit may wait
in its queue).

* **Process pool.** Spawned processes (never forked: a fork would inherit the output
  directory's lock) that ignore Ctrl-C, and exit when the driver is gone.
* **Local Ray.** ``ray.init(address="local", num_cpus=workers)``, no dashboard, workers
  at nice 0. Where it cannot start (``ray.init`` raises: "node timed out during startup"
  on a loaded machine, a full disk, ...), the processes it started are stopped and
  ``_LocalRayStartError`` says why in one line; the executor then uses the pool.
* **Ray cluster.** ``"auto"``, ``"host:port"`` or ``"ray://host:port"``, checked within
  seconds (``ray.init`` waits minutes where nothing answers); every failure to join it is
  a ``ClusterUnavailableError``, never a switch to this machine.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from concurrent import futures
from typing import Any

RAY_EXTRA = (
    'pip install "botorch-mtucb[distributed]", or pip install ".[distributed]" in a checkout'
)
_NO_RAY_VARIABLE = "BOTORCH_MTUCB_NO_RAY"
_WAIT_SECONDS = 0.5
_CONNECT_SECONDS = 5.0
_STOP_SECONDS = 2.0
_RAY_CLIENT_PORT = 10001


class ClusterUnavailableError(RuntimeError):
    """No Ray cluster answers at the address given, or Ray is not installed.

    Example:
        >>> from botorch_mtucb.experiments.backends import ClusterUnavailableError
        >>> issubclass(ClusterUnavailableError, RuntimeError)
        True
    """


def _init_pool_worker() -> None:
    """A pool worker ignores Ctrl-C (the driver stops it), uses one torch thread, and
    exits when the driver is gone (a killed driver cannot stop it: its pool's queues stay
    open, and the worker would finish its unit for nothing, then wait forever)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import torch

    torch.set_num_threads(1)
    driver = os.getppid()

    def exit_without_driver() -> None:
        while os.getppid() == driver:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=exit_without_driver, name="driver-watch", daemon=True).start()


class _ProcessBackend:
    """A pool of spawned processes (never forked: a fork would inherit the lock)."""

    name = "process pool"

    def __init__(self, workers: int, task: Callable[..., Any]) -> None:
        self.capacity = workers
        self.queue_ahead = True  # the pool queues what its processes cannot start
        self._task = task
        self._pool = self._new_pool()

    def _new_pool(self) -> futures.ProcessPoolExecutor:
        import multiprocessing

        return futures.ProcessPoolExecutor(
            max_workers=self.capacity,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init_pool_worker,
        )

    def submit(self, method_bytes: bytes, unit: Any, horizon: int, seed: int) -> Any:
        arguments = (self._task, method_bytes, unit.rep, horizon, seed, unit.prefix, unit.threads)
        try:
            return self._pool.submit(*arguments)
        except futures.process.BrokenProcessPool:
            # A worker died (killed, out of memory, a crash): every unit in flight failed
            # with it and is sent again (each at most twice), to a new pool.
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = self._new_pool()
            return self._pool.submit(*arguments)

    def wait(self, handles: Sequence[Any]) -> list[Any]:
        done, _ = futures.wait(handles, timeout=_WAIT_SECONDS, return_when="FIRST_COMPLETED")
        return list(done)

    def result(self, handle: Any) -> Any:
        return handle.result()

    def describe(self, error: BaseException) -> str:
        cause = error.__cause__  # the worker's traceback (concurrent.futures.process)
        text = "".join(traceback.format_exception(error))
        return f"{cause}\n{text}" if cause is not None else text

    def prepare(self, method: Any) -> bytes:
        import cloudpickle

        return cloudpickle.dumps(method)

    def cancel(self, handles: Sequence[Any]) -> None:
        for handle in handles:
            handle.cancel()
        processes = list(getattr(self._pool, "_processes", {}).values())
        for process in processes:
            with contextlib.suppress(Exception):
                process.terminate()
        self._pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            with contextlib.suppress(Exception):
                process.join(5)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def _ray_module() -> Any:
    try:
        import ray
    except ImportError as error:
        raise ClusterUnavailableError(
            f"--ray needs Ray, which is not installed: {RAY_EXTRA}"
        ) from error
    return ray


@contextlib.contextmanager
def _environment(**variables: str) -> Iterator[None]:
    """Environment variables set for the block where the user has not set them (Ray
    reads its settings from the environment when it starts), then restored."""
    added = [name for name in variables if name not in os.environ]
    for name in added:
        os.environ[name] = variables[name]
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


@contextlib.contextmanager
def _sigterm_handler_kept() -> Iterator[None]:
    """Restore the SIGTERM handler after the block: ``ray.init`` replaces it with one
    calling ``sys.exit(15)`` (and its core worker adds a C handler printing a stack
    trace), which would turn ``cli``'s SIGTERM (exit 143, the resume message) into a bare
    exit 15."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handler = signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        if handler is not None:  # None: set outside Python, cannot be restored
            signal.signal(signal.SIGTERM, handler)


def _check_reachable(address: str) -> None:
    """Check that a gRPC server (Ray's GCS or client server) answers at ``address``
    before ``ray.init``, which waits minutes where nothing or something else listens:
    ``ClusterUnavailableError`` within seconds otherwise."""
    target = address.removeprefix("ray://")
    host, _, port_text = target.rpartition(":")
    if not host:  # "ray://host" without a port
        host, port_text = target, str(_RAY_CLIENT_PORT) if address.startswith("ray://") else ""
    try:
        port = int(port_text)
    except ValueError:
        raise ClusterUnavailableError(
            f"--ray takes 'auto', 'host:port' or 'ray://host:port', got {address!r}"
        ) from None
    try:
        socket.create_connection((host, port), timeout=_CONNECT_SECONDS).close()
    except OSError as error:
        raise ClusterUnavailableError(
            f"no Ray cluster at {address} ({error.strerror or error}); start one with "
            "`ray start --head` on that machine, or check the address"
        ) from None
    if os.environ.get("RAY_USE_TLS", "0") not in ("", "0"):
        return  # a TLS cluster: the plain handshake below would fail
    try:
        import grpc  # Ray's own dependency
    except ImportError:  # pragma: no cover - Ray always brings it
        return
    channel = grpc.insecure_channel(f"{host}:{port}")
    try:  # the HTTP/2 handshake of a gRPC server, which a silent listener never gives
        grpc.channel_ready_future(channel).result(timeout=_CONNECT_SECONDS)
    except grpc.FutureTimeoutError:
        raise ClusterUnavailableError(
            f"no Ray cluster at {address}: something accepts connections there but does not "
            f"answer as Ray's gRPC server within {_CONNECT_SECONDS:.0f} s; check the address "
            "(Ray's head node listens on 6379 by default, its client server on 10001)"
        ) from None
    finally:
        channel.close()


def _authentication_hint(error: BaseException, answered: bool) -> str:
    """What to check when a cluster that answers (``answered``: its gRPC server did)
    refuses the connection: most often Ray's token authentication."""
    text = str(error).lower()
    if not answered and "auth" not in text and "token" not in text:
        return ""
    return (
        "; a Ray server answers there, so check that this machine's Ray version is the "
        "cluster's and, if the cluster uses token authentication (Ray turns it on where "
        "~/.ray/auth_token exists), set RAY_AUTH_MODE=token here with the cluster's token "
        "in ~/.ray/auth_token"
    )


class _RayBackend:
    """Ray tasks, one CPU each: a local Ray (``address=None``) or a running cluster."""

    name = "Ray"

    def __init__(self, workers: int | None, address: str | None, task: Callable[..., Any]) -> None:
        ray = _ray_module()
        self._ray = ray
        self._local = address is None
        options = {
            "include_dashboard": False,
            "log_to_driver": False,
            "logging_level": logging.WARNING,
        }
        if self._local:
            # Ray starts its workers at nice 15, which starves them on a machine busy
            # with anything else (rounds many times slower while the other cores are
            # busy); the local instance is this command's own, so its workers get 0.
            before = _ray_children(ray)
            try:
                with (
                    _environment(RAY_USAGE_STATS_ENABLED="0", RAY_worker_niceness="0"),
                    _sigterm_handler_kept(),
                ):
                    ray.init(address="local", num_cpus=workers, **options)
            except Exception as error:  # Ray raises bare Exceptions ("node timed out ...")
                _stop_ray_started(ray, before)
                raise _LocalRayStartError(_one_line(error)) from error
        else:
            if address != "auto":
                _check_reachable(address)
            try:
                with _environment(RAY_USAGE_STATS_ENABLED="0"), _sigterm_handler_kept():
                    ray.init(address=address, **options)
            except ConnectionError as error:
                hint = _authentication_hint(error, answered=address != "auto")
                raise ClusterUnavailableError(
                    f"could not connect to the Ray cluster at {address!r} ({error}){hint}"
                    if hint
                    else f"no Ray cluster at {address!r} ({error}); start one with "
                    "`ray start --head`, or check the address"
                ) from None
            except (ValueError, RuntimeError) as error:  # e.g. ray:// without ray[client]
                hint = _authentication_hint(error, answered=False)
                raise ClusterUnavailableError(
                    f"could not connect to the Ray cluster at {address!r}: {error}"
                    + (hint or f" ({RAY_EXTRA} brings the client)")
                ) from None
            except Exception as error:  # Ray's own bare Exceptions (a version mismatch ...)
                raise ClusterUnavailableError(
                    f"could not connect to the Ray cluster at {address!r}: {_one_line(error)}"
                ) from None
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self.capacity = max(1, cpus if workers is None else min(workers, cpus))
        # One unit queued beyond the capacity avoids an idle gap, but only where Ray cannot
        # start it at once: with --workers below the cluster's CPUs it would run N + 1.
        self.queue_ahead = self.capacity >= cpus
        self.name = "local Ray" if self._local else f"Ray cluster at {address}"
        self._task = ray.remote(num_cpus=1, max_retries=0)(task)

    def prepare(self, method: Any) -> Any:
        import cloudpickle

        return self._ray.put(cloudpickle.dumps(method))

    def submit(self, method_ref: Any, unit: Any, horizon: int, seed: int) -> Any:
        return self._task.remote(method_ref, unit.rep, horizon, seed, unit.prefix, unit.threads)

    def wait(self, handles: Sequence[Any]) -> list[Any]:
        done, _ = self._ray.wait(list(handles), num_returns=1, timeout=_WAIT_SECONDS)
        return done

    def result(self, handle: Any) -> Any:
        return self._ray.get(handle)

    def describe(self, error: BaseException) -> str:
        return str(error)

    def cancel(self, handles: Sequence[Any]) -> None:
        # No ray.cancel: racing a task that completes at that moment, it aborts the
        # driver in Ray 2.60 ("Tried to complete task that was not pending"). The tasks
        # share their owner's fate: shutting the driver's connection down ends them (and
        # a local instance with them).
        self.close()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._ray.shutdown()


class _LocalRayStartError(RuntimeError):
    """A Ray started for this run (``workers > 1``, no address) could not start; the
    message is Ray's reason, on one line. ``ParallelExecutor`` then runs on the process
    pool."""


def _one_line(error: BaseException) -> str:
    """The first line of an error's message (its type where it has none)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


def _ray_children(ray: Any) -> dict[int, Any]:
    """This process's descendants that run Ray's programs (GCS, raylet, its Python
    helpers and workers: their command lines name files in Ray's package), by pid."""
    try:
        import psutil  # Ray's own dependency (vendored with it)
    except ImportError:  # pragma: no cover - Ray always brings it
        return {}
    package = os.path.dirname(ray.__file__) + os.sep
    found = {}
    with contextlib.suppress(psutil.Error):
        for child in psutil.Process().children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if any(part.startswith(package) for part in child.cmdline()):
                    found[child.pid] = child
    return found


def _stop_ray_started(ray: Any, before: dict[int, Any]) -> None:
    """After a failed ``ray.init``: disconnect, and stop the Ray processes it started
    (a node that timed out during startup leaves its GCS and raylet running, unknown to
    ``ray.shutdown``), so that they do not compete with the process pool."""
    with contextlib.suppress(Exception):
        ray.shutdown()
    started = [p for pid, p in _ray_children(ray).items() if pid not in before]
    if not started:
        return
    import psutil

    for process in started:
        with contextlib.suppress(psutil.Error):
            process.terminate()
    _, alive = psutil.wait_procs(started, timeout=_STOP_SECONDS)  # (reaps our children)
    for process in alive:
        with contextlib.suppress(psutil.Error):
            process.kill()
    psutil.wait_procs(alive, timeout=_STOP_SECONDS)


def _ray_available() -> bool:
    if os.environ.get(_NO_RAY_VARIABLE, "") not in ("", "0"):
        return False
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


__all__ = ["RAY_EXTRA", "ClusterUnavailableError"]
