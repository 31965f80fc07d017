"""The experiments' names and one-line descriptions, without importing the experiments.

``list``, ``reproduce --help`` and the check of ``reproduce NAME`` read them here, so
that they do not import BoTorch. Each experiment registers itself under the same name
with the same description in its paper's package (``registry.register``), where its
runner lives; ``registry.load_experiments`` imports them.

Example:
    >>> from botorch_mtucb.experiments.catalogue import EXPERIMENT_DESCRIPTIONS
    >>> EXPERIMENT_DESCRIPTIONS["000-rkhs-20"]
    'paper 000 Fig. 1(c): RKHS function, 20 tasks'
"""

EXPERIMENT_DESCRIPTIONS: dict[str, str] = {
    "000-bayes-regret": "paper 000 Fig. 3: Bayes regret (RKHS function, perturbed sine)",
    "000-branin": "paper 000 Fig. 1(e): shifted Branin-Hoo, 9 tasks on a 15x15 grid",
    "000-linear": "paper 000 Fig. 2: linear scalarization (RKHS function, perturbed sine)",
    "000-rkhs-2": "paper 000 Fig. 1(b): RKHS function, 2 tasks",
    "000-rkhs-20": "paper 000 Fig. 1(c): RKHS function, 20 tasks",
    "000-sensor": "paper 000 Fig. 1(f): sensor measurements (real light-sensor data, 3 tasks)",
    "000-similarity": "paper 000 Fig. 1(a): MT-KB's regret as the task similarity varies",
    "000-sine": "paper 000 Fig. 1(d): perturbed sine, 4 tasks",
    "001-mhc-active": "paper 001 Fig. 3b: MT-AL vs baselines on MHC-I (--data)",
    "001-mhc-online": "paper 001 Sec. 5: MT-UCB vs baselines on MHC-I (--data)",
    "001-synthetic-active": "paper 001 App. D: MT-AL vs baselines, synthetic",
    "001-synthetic-online": "paper 001 Fig. 3a / App. D: MT-UCB vs baselines, synthetic",
    "001-widths": "paper 001 Fig. 2: naive, small-b, large-b and new widths against b",
    "002-d2": "paper 002 Fig. 5: KernelUCB variants, d = 2",
    "002-d4": "paper 002 Fig. 6: KernelUCB variants, d = 4",
    "002-loose": "paper 002 Fig. 7: loose bounds sigma in {0.1, 0.2}, B in {10, 20}",
    "002-table1": "paper 002 Table 1 / Fig. 2: KernelUCB variants, d = 3, six kernels",
    "002-time": "paper 002 Fig. 4: wall-clock time per step, Matern 5/2, l = 0.5, d = 3",
    "sensor-main": "the main job: MT-KB vs IT-KB and MT-CMM-UCB on the real light-sensor data",
}

__all__ = ["EXPERIMENT_DESCRIPTIONS"]
