"""Parallel runs (``--workers N``, ``--ray ADDRESS``): the same files as a serial run,
through a process pool, a local Ray and a Ray cluster; interrupted runs of one kind
resumed by the other; bad input; units that fail."""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import ray
import torch
from ray.cluster_utils import Cluster

from botorch_mtucb.bandits import RandomPolicy
from botorch_mtucb.experiments import backends, cli, registry
from botorch_mtucb.experiments.parallel import UnitsFailedError, parallel_execution
from botorch_mtucb.experiments.runs import Method, run_methods
from botorch_mtucb.problems import KernelBanditEnvironment, RKHSTestFunction, make_kernel

# 000-sine --quick made small: 8 methods x 2 repetitions = 16 units. The sizes are
# registry.RUN_LENGTH_OPTIONS (not in experiment.json), so a run of the full --quick size
# would refuse nothing; subprocesses get them through SCRIPT.
SIZES = {"horizon": 30, "repetitions": 2}
UNITS = 16
ARGV = ["reproduce", "000-sine", "--quick", "--no-progress"]


def script(sigint="signal.default_int_handler"):
    """``python -m botorch_mtucb ARGS`` with SIZES: cli.main with run_experiment given
    them. SIGINT as in a terminal by default: a shell running CI in the background starts
    its jobs with SIGINT ignored, and Python then keeps it ignored."""
    return (
        "import functools, signal, sys\n"
        f"signal.signal(signal.SIGINT, {sigint})\n"
        "from botorch_mtucb.experiments import cli, registry\n"
        "cli.run_experiment = functools.partial(registry.run_experiment, "
        f"horizon={SIZES['horizon']}, repetitions={SIZES['repetitions']})\n"
        "sys.exit(cli.main(sys.argv[1:]))\n"
    )


SCRIPT = script()


def rounds(output):
    """Every run file's rounds, without their timings: relative path -> rows."""
    found = {}
    for path in sorted(Path(output).rglob("*.jsonl")):
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        for row in rows:
            row.pop("seconds", None)
        found[path.relative_to(output).as_posix()] = rows
    return found


def _without_seconds(value):
    if isinstance(value, dict):
        return {k: _without_seconds(v) for k, v in value.items() if "seconds" not in k}
    if isinstance(value, list):
        return [_without_seconds(v) for v in value]
    return value


def results(output):
    """What must not depend on how a run was split: run files (timings aside), the
    summary (``*seconds*`` keys aside) and curves.csv byte for byte."""
    output = Path(output)
    summary = json.loads((output / "summary.json").read_text())
    return rounds(output), _without_seconds(summary), (output / "curves.csv").read_bytes()


def run(output, **kwargs):
    """``run_experiment("000-sine", quick, SIZES)`` in this process; what it printed."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        registry.run_experiment("000-sine", output, quick=True, progress=False, **SIZES, **kwargs)
    return printed.getvalue()


def cli_args(output, *extra):
    return [*ARGV, *extra, "--output", str(output)]


def start(args, code=SCRIPT, **kwargs):
    """The command line ``python -m botorch_mtucb ARGS`` (with SIZES; ``code``: its
    ``script``), in a session of its own (its pid is the session's and the process
    group's id)."""
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        **kwargs,
    )


def session_processes(session):
    """The live processes of a session (Linux ``/proc``): pid -> command line. Ray
    puts each worker in a process group of its own, but in the driver's session."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if fields[0] != "Z" and int(fields[3]) == session:  # zombies are dead
            found[int(entry.name)] = command.strip()
    return found


def kill_session(process):
    """SIGKILL to what is left of ``start``'s session (Ray workers included)."""
    if process.poll() is None:
        process.kill()
        process.wait()
    for pid in session_processes(process.pid):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def assert_session_ends(process, seconds=10):
    """Every process of ``start``'s session exits within ``seconds`` (else they are
    killed and the test fails naming them)."""
    deadline = time.monotonic() + seconds
    while session_processes(process.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = session_processes(process.pid)
    kill_session(process)
    assert left == {}


def wait_until(condition, process, seconds=240):
    deadline = time.monotonic() + seconds
    while not condition():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)


def environment_without_ray_address():
    return {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """A serial run: its directory and its results."""
    output = tmp_path_factory.mktemp("reference") / "out"
    run(output)
    found = results(output)
    assert len(found[0]) == UNITS
    assert all(len(rows) == SIZES["horizon"] + 1 for rows in found[0].values())
    return output, found


@pytest.fixture
def no_ray_address(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")


# ------------------------------------------------------- identical results (1-3)
def test_a_process_pool_where_ray_cannot_start_gives_the_serial_files(
    tmp_path, reference, no_ray_address, monkeypatch, capsys
):
    # On a loaded machine a local Ray can fail to start (ray.init raises a bare Exception):
    # one warning line, and the run goes on on the process pool (before the fix: Ray's
    # traceback, and no run). (BOTORCH_MTUCB_NO_RAY=1, the other way to the pool, is
    # used by the tests below.)
    reason = "The current node timed out during startup. This could happen because ..."

    def init(*args, **kwargs):
        raise Exception(f"{reason}\nmore of Ray's text")

    monkeypatch.delenv("BOTORCH_MTUCB_NO_RAY", raising=False)
    monkeypatch.setattr(ray, "init", init)
    monkeypatch.setattr(cli, "run_experiment", functools.partial(registry.run_experiment, **SIZES))
    output = tmp_path / "out"
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli.main(cli_args(output, "--workers", "2")) == 0
    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if "Ray" in line] == [
        f"warning: Ray could not start ({reason}); running on a standard-library process "
        "pool of 2 processes instead (set BOTORCH_MTUCB_NO_RAY=1 to skip Ray)"
    ]
    assert f"parallel (process pool): {UNITS} units" in err and "Traceback" not in err
    assert not ray.is_initialized()
    assert results(output) == reference[1]
    assert not list(output.rglob("*.tmp"))


@pytest.mark.slow
def test_a_local_ray_gives_the_serial_files(tmp_path, reference, no_ray_address, capsys):
    output = tmp_path / "out"
    run(output, workers=2)
    assert f"parallel (local Ray): {UNITS} units" in capsys.readouterr().err
    assert not ray.is_initialized()
    assert results(output) == reference[1]


@pytest.mark.slow
def test_a_ray_cluster_gives_the_serial_files(tmp_path, reference, no_ray_address, capsys):
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 2})
    try:
        output = tmp_path / "out"
        run(output, ray_address=cluster.address)
        err = capsys.readouterr().err
        assert f"parallel (Ray cluster at {cluster.address}): {UNITS} units" in err
    finally:
        ray.shutdown()
        cluster.shutdown()
    assert results(output) == reference[1]


# -------------------------------------------------- interrupted and resumed (4, 5)
@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_parallel_run_interrupted_resumes_serially(tmp_path, reference, signum, code):
    # Ctrl-C reaches the whole process group of the terminal; SIGTERM the driver alone.
    # The backend is local Ray (installed): its workers live in process groups of their
    # own, in the driver's session.
    output = tmp_path / "out"
    args = cli_args(output, "--workers", "2")
    process = start(args, env={**environment_without_ray_address(), "RAY_USAGE_STATS_ENABLED": "0"})
    seen = {}
    try:

        def some_units_done():  # the first unit back: 15 of 16 still to come
            seen.update(session_processes(process.pid))
            return any(output.rglob("*.jsonl"))

        wait_until(some_units_done, process)
        if signum == signal.SIGINT:
            os.killpg(process.pid, signum)
        else:
            process.send_signal(signum)
        _, err = process.communicate(timeout=60)
    except BaseException:
        kill_session(process)
        raise
    assert process.returncode == code, err
    assert "interrupted: the rounds done so far are saved in" in err
    assert (
        f"run the same command again to resume: python -m botorch_mtucb {shlex.join(args)}" in err
    )
    assert "Traceback" not in err
    assert any("ray::" in command for command in seen.values())  # Ray workers ran
    assert_session_ends(process)  # no worker, raylet or agent left
    saved = rounds(output)
    assert 1 <= len(saved) < UNITS  # interrupted mid-way
    for path, rows in saved.items():  # only complete files from the driver
        assert rows == reference[1][0][path]
    assert not list(output.rglob("*.tmp"))
    run(output)  # resumed serially
    assert results(output) == reference[1]


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_pool_workers_exit_when_the_driver_is_killed(tmp_path, reference):
    # SIGKILL: no clean-up runs on the driver; its pool's workers notice and exit (before
    # the fix they finished their unit and then waited forever).
    output = tmp_path / "out"
    env = {**os.environ, "BOTORCH_MTUCB_NO_RAY": "1"}
    process = start(cli_args(output, "--workers", "2"), env=env)
    try:
        wait_until(lambda: any(output.rglob("*.jsonl")), process)  # 15 units to come
        assert len(session_processes(process.pid)) >= 3  # the driver and its workers
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=60)  # (its workers would hold its pipes open)
        assert_session_ends(process)
    except BaseException:
        kill_session(process)
        raise
    saved = rounds(output)
    assert 1 <= len(saved) < UNITS
    for path, rows in saved.items():  # whole files only, even from a killed driver
        assert rows == reference[1][0][path]
    run(output)  # resumed serially (the killed driver's lock is gone with it)
    assert results(output) == reference[1]


@pytest.mark.slow
def test_a_serial_run_terminated_resumes_in_parallel(tmp_path, reference, monkeypatch):
    monkeypatch.setenv("BOTORCH_MTUCB_NO_RAY", "1")
    output = tmp_path / "out"
    partial = output / "runs" / "MT-KB" / "rep1.jsonl"  # the 9th of 16 units
    process = start(cli_args(output))
    try:
        wait_until(lambda: partial.exists() and partial.read_bytes().count(b"\n") >= 3, process)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    except BaseException:
        kill_session(process)
        raise
    assert process.returncode == 143, err
    assert "run the same command again to resume" in err and "Traceback" not in err
    saved = {p: p.read_text() for p in output.rglob("*.jsonl")}
    assert len(saved) == UNITS // 2 + 1
    kept = saved[partial][: saved[partial].rfind("\n") + 1]
    assert 2 <= kept.count("\n") < SIZES["horizon"] + 1  # a header and some rounds
    run(output, workers=2)
    assert results(output) == reference[1]
    for path, text in saved.items():  # every finished round kept as it was (its timing too)
        assert path.read_text().startswith(text[: text.rfind("\n") + 1])


@pytest.mark.slow
def test_a_serial_run_interrupted_exits_130_where_sigint_was_ignored(tmp_path, reference):
    # A non-interactive shell starts `command &` with SIGINT ignored, and Python keeps it
    # ignored: before the fix `kill -INT` did nothing and the run went on to exit 0.
    output = tmp_path / "out"
    args = cli_args(output)
    process = start(args, code=script(sigint="signal.SIG_IGN"))
    try:
        wait_until(
            lambda: any(p.read_bytes().count(b"\n") >= 3 for p in output.rglob("*.jsonl")),
            process,
        )
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    except BaseException:
        kill_session(process)
        raise
    assert process.returncode == 130, err
    assert "interrupted: the rounds done so far are saved in" in err and "Traceback" not in err
    assert (
        f"run the same command again to resume: python -m botorch_mtucb {shlex.join(args)}" in err
    )
    saved = {p.relative_to(output).as_posix(): p.read_text() for p in output.rglob("*.jsonl")}
    assert 1 <= len(saved) < UNITS  # interrupted mid-way
    for path, text in saved.items():  # every complete line is the serial run's
        rows = [json.loads(line) for line in text[: text.rfind("\n") + 1].splitlines()]
        for row in rows:
            row.pop("seconds", None)
        assert rows == reference[1][0][path][: len(rows)]


# ------------------------------------------------------------------ bad input (6)
@pytest.mark.parametrize("value", ["0", "-1", "abc"])
def test_a_bad_worker_count_is_a_usage_error(tmp_path, value, capsys):
    with pytest.raises(SystemExit) as exit:
        cli.main(cli_args(tmp_path / "out", "--workers", value))
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: ") and "Traceback" not in err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1 and err.endswith(errors[0] + "\n")  # the last line
    assert "error: argument --workers: expected an integer >= 1, got " in errors[0]
    assert errors[0].endswith((f"got {value}", f"got {value!r}"))
    assert not (tmp_path / "out").exists()


def test_no_cluster_at_an_address_is_an_error_within_seconds(tmp_path, capsys):
    with socket.socket() as probe:  # a port where nothing listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"127.0.0.1:{port}"
    began = time.monotonic()
    assert cli.main(cli_args(tmp_path / "out", "--ray", address)) == 2
    assert time.monotonic() - began < 10
    err = capsys.readouterr().err
    assert err.startswith(f"error: no Ray cluster at {address}") and len(err.splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_ray_auto_without_a_cluster_is_an_error(tmp_path):
    env = environment_without_ray_address()
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, *cli_args(tmp_path / "out", "--ray", "auto")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert time.monotonic() - began < 30  # imports included
    assert "error: no Ray cluster at 'auto'" in done.stderr and "ray start --head" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_cluster_that_cannot_be_joined_is_an_error_not_a_local_run(
    tmp_path, no_ray_address, monkeypatch, capsys
):
    # --ray names a cluster: never a silent switch to this machine (Ray's bare Exceptions
    # were a traceback before the fix).
    def init(*args, **kwargs):
        raise Exception("Version mismatch: this driver runs Ray 2.60.0\nthe cluster 2.50.0")

    monkeypatch.setattr(ray, "init", init)
    assert cli.main(cli_args(tmp_path / "out", "--ray", "auto")) == 2
    assert capsys.readouterr().err == (
        "error: could not connect to the Ray cluster at 'auto': Version mismatch: this "
        "driver runs Ray 2.60.0; to run on this machine instead, leave out --ray "
        "(--workers N: N local processes)\n"
    )
    assert not ray.is_initialized()
    assert not (tmp_path / "out").exists()


def test_a_failed_ray_start_stops_the_ray_processes_it_started():
    # ray.init that times out leaves the node's GCS and raylet running, unknown to
    # ray.shutdown; they would compete with the process pool. Stand-ins: processes whose
    # command lines name files in Ray's package, or not.
    ray_file = str(Path(ray.__file__).parent / "_private" / "node.py")
    sleep = [sys.executable, "-c", "import time; time.sleep(60)"]
    processes = [subprocess.Popen([*sleep, "not-ray"])]
    try:
        processes.append(subprocess.Popen([*sleep, ray_file]))  # a Ray process of before
        before = backends._ray_children(ray)
        assert processes[1].pid in before and processes[0].pid not in before
        processes.append(subprocess.Popen([*sleep, ray_file]))  # one ray.init started
        backends._stop_ray_started(ray, before)
        processes[2].wait(timeout=10)  # (TimeoutExpired if it was left running)
        assert processes[0].poll() is None and processes[1].poll() is None
    finally:
        for process in processes:
            process.kill()
            process.wait()


def test_ray_not_installed_names_the_extra(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray: ImportError
    assert cli.main(cli_args(tmp_path / "out", "--ray", "auto")) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --ray needs Ray") and "botorch-mtucb[distributed]" in err
    assert len(err.splitlines()) == 1
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------ failing units (6)
def test_a_failing_unit_is_retried_then_reported(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BOTORCH_MTUCB_NO_RAY", "1")
    f = RKHSTestFunction.sample(
        make_kernel("rbf", 0.5), 2, 1.0, generator=torch.Generator().manual_seed(0)
    )

    def environment(rep):
        return KernelBanditEnvironment(f, 0.1, 10)

    def flaky(rep):  # rep 0 fails on its first call only, whichever unit starts first
        calls = tmp_path / f"flaky-calls-{rep}"  # counts calls across processes
        count = int(calls.read_text()) if calls.exists() else 0
        calls.write_text(str(count + 1))
        if rep == 0 and count == 0:
            raise RuntimeError("a flaky failure")
        return RandomPolicy()

    def broken(rep):
        if rep == 1:
            raise RuntimeError("always broken")
        return RandomPolicy()

    def policy(rep):
        return RandomPolicy()

    methods = [Method("Flaky", flaky, environment), Method("Broken", broken, environment)]
    output = tmp_path / "parallel"
    with parallel_execution(workers=2, progress=False):
        with pytest.raises(UnitsFailedError) as failed:
            run_methods(methods, 3, 2, output, progress=False)
    printed = capsys.readouterr()
    assert [(name, rep) for name, rep, _ in failed.value.failures] == [("Broken", 1)]
    assert "RuntimeError: always broken" in failed.value.failures[0][2]
    assert str(failed.value).startswith("1 of 4 units failed twice (Broken rep 1")
    text = printed.out + printed.err
    assert "Flaky rep 0 failed; sending it again" in text
    assert "Broken rep 1 failed twice:" in text and "RuntimeError: always broken" in text
    assert "Traceback" in text
    # Every other unit is saved, and is what a serial run of it computes.
    serial = tmp_path / "serial"
    plain = [Method("Flaky", policy, environment), Method("Broken", policy, environment)]
    run_methods(plain, 3, 2, serial, progress=False)
    expected = rounds(serial)
    del expected["runs/Broken/rep1.jsonl"]
    assert rounds(output) == expected
    assert int((tmp_path / "flaky-calls-0").read_text()) >= 2  # the failure and its retry
    assert (tmp_path / "flaky-calls-1").exists()  # the other repetition ran too


@pytest.mark.slow
def test_a_worker_that_dies_is_replaced_and_its_units_sent_again(tmp_path, monkeypatch, capsys):
    # A worker killed (out of memory, a crash) breaks the whole pool: its units, and the
    # others in flight, go to a new pool (before the fix: BrokenProcessPool, a traceback).
    monkeypatch.setenv("BOTORCH_MTUCB_NO_RAY", "1")
    calls = tmp_path / "dying-calls"
    f = RKHSTestFunction.sample(
        make_kernel("rbf", 0.5), 2, 1.0, generator=torch.Generator().manual_seed(1)
    )

    def environment(rep):
        return KernelBanditEnvironment(f, 0.1, 10)

    def dying(rep):  # the worker process dies on the first call
        count = int(calls.read_text()) if calls.exists() else 0
        calls.write_text(str(count + 1))
        if count == 0:
            os._exit(9)
        return RandomPolicy()

    def policy(rep):
        return RandomPolicy()

    output = tmp_path / "parallel"
    methods = [Method("Dying", dying, environment), Method("Other", policy, environment)]
    with parallel_execution(workers=2, progress=False):
        run_methods(methods, 3, 2, output, progress=False)
    assert "Dying rep 0 failed; sending it again" in capsys.readouterr().out
    serial = tmp_path / "serial"
    run_methods(
        [Method(m.name, policy, environment) for m in methods], 3, 2, serial, progress=False
    )
    assert rounds(output) == rounds(serial)


# ------------------------------------------------------------------ --threads
def test_threads_reach_the_workers_and_the_driver_keeps_its_setting(tmp_path, monkeypatch):
    monkeypatch.setenv("BOTORCH_MTUCB_NO_RAY", "1")
    seen = tmp_path / "threads"  # the policies' thread counts, across processes
    f = RKHSTestFunction.sample(
        make_kernel("rbf", 0.5), 2, 1.0, generator=torch.Generator().manual_seed(0)
    )

    def policy(rep):
        with open(seen, "a") as handle:
            handle.write(f"{torch.get_num_threads()}\n")
        return RandomPolicy()

    method = Method("Random", policy, lambda rep: KernelBanditEnvironment(f, 0.1, 10))
    before = torch.get_num_threads()
    with parallel_execution(workers=2, progress=False, threads=2):
        run_methods([method], 3, 2, tmp_path / "out", progress=False)
    # One policy per unit in the workers, then the driver's read-back builds them again
    # (for their run-file headers) on its own setting.
    assert seen.read_text().split() == ["2", "2", str(before), str(before)]
    assert torch.get_num_threads() == before


@pytest.mark.parametrize("command", ["run", "reproduce"])
@pytest.mark.parametrize("value", ["0", "-2", "1.5", "x"])
def test_a_bad_thread_count_is_a_usage_error(tmp_path, command, value, capsys):
    # 0 has no meaning here (the benchmarks' --threads 0 keeps torch's number).
    first = ARGV if command == "reproduce" else ["run"]
    with pytest.raises(SystemExit) as exit:
        cli.main([*first, "--output", str(tmp_path / "out"), "--threads", value])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1 and err.endswith(errors[0] + "\n")  # the last line
    got = {"0": "0", "-2": "-2", "1.5": "'1.5'", "x": "'x'"}[value]
    assert errors[0].endswith(f"error: argument --threads: expected an integer >= 1, got {got}")
    assert not (tmp_path / "out").exists()


def test_run_experiment_runs_on_the_threads_asked_and_restores_the_callers(tmp_path):
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        summary = registry.run_experiment(
            "002-table1",
            tmp_path / "out",
            quick=True,
            progress=False,
            threads=2,
            horizon=2,
            repetitions=1,
            config_indices=[0],
            methods=["Random"],
        )
        assert summary["settings"]["threads"] == 2
        assert torch.get_num_threads() == 1
        with pytest.raises(ValueError, match="threads must be an int >= 1, got 0"):
            registry.run_experiment("002-table1", tmp_path / "bad", quick=True, threads=0)
    finally:
        torch.set_num_threads(before)


@pytest.mark.slow
def test_an_address_where_something_else_listens_is_an_error_within_seconds(tmp_path):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    port = listener.getsockname()[1]
    accepted = []
    stop = threading.Event()

    def accept() -> None:  # accepts and never answers: not a Ray GCS
        listener.settimeout(0.5)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    began = time.monotonic()
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "botorch_mtucb",
                "reproduce",
                "000-sine",
                "--quick",
                "--no-progress",
                "--output",
                str(tmp_path / "out"),
                "--ray",
                f"127.0.0.1:{port}",
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=45,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"--ray 127.0.0.1:{port} (a listener that is not Ray) hung for 45 s")
    finally:
        stop.set()
        thread.join(5)
        for connection in accepted:
            connection.close()
        listener.close()
    assert done.returncode == 2, done.stderr
    assert time.monotonic() - began < 30, "imports included"
    assert "error:" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()


class _InlineBackend:
    """Runs units in this process when waited on; records the most in flight at once."""

    name = "inline"

    def __init__(self, capacity, queue_ahead):
        self.capacity, self.queue_ahead = capacity, queue_ahead
        self.in_flight, self.most = [], 0

    def prepare(self, method):
        import cloudpickle

        return cloudpickle.dumps(method)

    def submit(self, method_bytes, unit, horizon, seed):
        handle = (method_bytes, unit.rep, horizon, seed, unit.prefix, unit.threads)
        self.in_flight.append(handle)
        self.most = max(self.most, len(self.in_flight))
        return handle

    def wait(self, handles):
        return [handles[0]]

    def result(self, handle):
        from botorch_mtucb.experiments.units import run_unit

        self.in_flight.remove(handle)
        return run_unit(*handle)

    def describe(self, error):
        return repr(error)

    def cancel(self, handles):
        pass

    def close(self):
        pass


@pytest.mark.parametrize(("capacity", "queue_ahead", "most"), [(1, False, 1), (2, True, 3)])
def test_units_in_flight_never_exceed_the_cap(tmp_path, capacity, queue_ahead, most):
    # With --workers below a cluster's CPUs nothing is queued ahead: Ray would start it.
    f = RKHSTestFunction.sample(
        make_kernel("rbf", 0.5), 2, 1.0, generator=torch.Generator().manual_seed(0)
    )
    method = Method(
        "Random", lambda rep: RandomPolicy(), lambda rep: KernelBanditEnvironment(f, 0.1, 10)
    )
    backend = _InlineBackend(capacity, queue_ahead)
    before = torch.get_num_threads()
    with parallel_execution(workers=2, progress=False) as executor:
        executor._backend = backend
        run_methods([method], 3, 4, tmp_path / "out", progress=False)
    torch.set_num_threads(before)
    assert backend.most == most
    serial = tmp_path / "serial"
    run_methods([method], 3, 4, serial, progress=False)
    assert rounds(tmp_path / "out") == rounds(serial)
