"""``python -m botorch_mtucb``: the commands that run nothing (``--help``, ``list``,
``benchmark --list``) import neither BoTorch nor the experiments, and Ctrl-C before a
run has started is one line and exit code 130, not a traceback."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("torch", "botorch", "gpytorch", "linear_operator", "scipy", "matplotlib")


def _python(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60
    )


def test_help_and_the_lists_import_no_botorch():
    code = f"""
import contextlib, io, sys
from botorch_mtucb.__main__ import main
commands = [["--help"], ["run", "--help"], ["reproduce", "--help"], ["benchmark", "--help"]]
for argv in commands:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        main(argv)
with contextlib.redirect_stdout(io.StringIO()) as out:
    assert main(["list"]) == 0 and main(["benchmark", "--list"]) == 0
assert "000-rkhs-20" in out.getvalue() and "mt-bkb-scaling" in out.getvalue()
print(sorted({{name.split(".")[0] for name in sys.modules}} & set({HEAVY!r})))
"""
    completed = _python(code)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]"


# Ctrl-C while the command imports what it runs: ``import torch`` raises
# KeyboardInterrupt, as SIGINT does at that moment.
CTRL_C_DURING_IMPORTS = """
import runpy, sys

class CtrlC:
    def find_spec(self, name, path=None, target=None):
        if name == "torch":
            raise KeyboardInterrupt

sys.meta_path.insert(0, CtrlC())
sys.argv = ["botorch_mtucb", *sys.argv[1:]]
runpy.run_module("botorch_mtucb", run_name="__main__", alter_sys=True)
"""


def test_ctrl_c_during_the_imports_is_one_line_and_exit_130(tmp_path):
    output = tmp_path / "out"
    for argv in (
        ["reproduce", "000-sine", "--quick", "--output", str(output)],
        ["benchmark", "icm-posterior", "--quick"],
    ):
        completed = _python(CTRL_C_DURING_IMPORTS, *argv)
        assert completed.returncode == 130, completed.stderr
        assert completed.stderr.strip() == "interrupted"
        assert completed.stdout == ""
    assert not output.exists()  # nothing started: no run directory
