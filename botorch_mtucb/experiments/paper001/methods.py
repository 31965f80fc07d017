"""Paper 001's methods as policies for a ``Setting`` (Section 5, Appendix D).

Online (``ONLINE_METHODS``): MT-UCB (Theorem 1's improved widths), MT-UCB-naive
(GoB.Lin: the naive widths, ``lambda = 1``), AdaMT-UCB (the same ``b`` for every
candidate ``epsilon`` in ``E = {0.1, ..., 1}``, Section 5), Independent (``b = 0``,
``lambda = 1``) and Single (``b = inf``, ``lambda = 1 / N``: tasks assumed identical,
one IGP-UCB on the pooled data). Active learning (``ACTIVE_METHODS``): MT-AL and
Uniform (each also with the naive widths and ``lambda = 1``), MTS and AE-LSVI. Every
method uses a linear input kernel of unit variance and ``delta = 0.01``, starts without
data and breaks exact ties of its UCB at random (under the prior every arm of equal norm
has the same UCB; a plain ``argmax`` would pick the same arm in every repetition).

Each method is a composition of ``bandits.task_indexed``: a confidence rule with the
revealed task's round (online) or the active task choice. MT-CMM-UCB (online) and
MT-CMM-AL (active learning) are MT-UCB and MT-AL with the exact multi-task
martingale-mixture bound (``TaskIndexedMartingaleMixtureRule``) for the
same ``B``, ``epsilon``, ``sigma``, ``delta`` and kernel, norm bound ``B sqrt(N (1 + b
epsilon^2))``; when the data contradict it (an empty confidence set, e.g. on MHC-I, where
the affinities are not linear in the features) the norm bound grows
(``on_empty="grow"``: a practical choice, not the theorem). The experiments run them
for ``b = 0`` and for the ``b`` of the grid or MT-UCB's chosen ``b`` (``CMM_METHODS``;
``experiments.CMM_CHOICES``).
"""

from __future__ import annotations

from typing import Any

import torch
from gpytorch.kernels import LinearKernel

from botorch_mtucb.bandits import (
    ActiveMultiTaskEnvironment,
    NaiveWidth,
    OnlineMultiTaskEnvironment,
    OptimisticGap,
    Policy,
    UniformTask,
)
from botorch_mtucb.bandits.task_indexed import (
    ada_mt_ucb,
    gob_lin,
    independent_ucb,
    mt_al,
    mt_cmm_al,
    mt_cmm_ucb,
    mt_ucb,
    mts,
    single_ucb,
)
from botorch_mtucb.experiments.paper001.settings import Setting
from botorch_mtucb.experiments.runs import Method, method_cost

DELTA = 0.01
CANDIDATE_DEVIATIONS = tuple(round(0.1 * k, 1) for k in range(1, 11))  # Section 5
ONLINE_METHODS = ("MT-UCB", "MT-UCB-naive", "AdaMT-UCB", "Independent", "Single")
ACTIVE_METHODS = ("MT-AL", "MT-AL-naive", "Uniform", "Uniform-naive", "MTS", "AE-LSVI")
CMM_METHODS = {False: "MT-CMM-UCB", True: "MT-CMM-AL"}  # active -> the method with the CMM bound
CMM_ON_EMPTY = "grow"


def linear_kernel() -> LinearKernel:
    """A linear kernel ``k_X(x, x') = x^T x'`` (variance fixed to 1) in float64.

    Example:
        >>> import torch
        >>> from botorch_mtucb.experiments.paper001.methods import linear_kernel
        >>> kernel = linear_kernel()
        >>> x = torch.tensor([[1.0, 2.0]], dtype=torch.float64)
        >>> float(kernel(x, x).to_dense())
        5.0
    """
    kernel = LinearKernel().to(torch.float64)
    kernel.initialize(variance=1.0)
    for parameter in kernel.parameters():
        parameter.requires_grad_(False)
    return kernel


def _told(setting: Setting, rep: int) -> tuple[Any, float, float]:
    """Repetition ``rep``'s arm sets per task, and the ``B`` and ``epsilon`` the widths assume."""
    problem = setting.problem(rep)
    return problem.domains(), setting.rkhs_norm_bound(problem), setting.task_deviation(problem)


def online_policy(name: str, setting: Setting, rep: int, b: float) -> Policy:
    """The online method ``name`` (one of ``ONLINE_METHODS``, or ``"MT-CMM-UCB"``) for
    repetition ``rep``'s problem of ``setting``, with kernel parameter ``b``.

    Raises:
        ValueError: If ``name`` is not an online method.

    Example:
        >>> from botorch_mtucb.experiments.paper001.methods import online_policy
        >>> from botorch_mtucb.experiments.paper001.settings import synthetic_setting
        >>> online_policy("MT-UCB", synthetic_setting(3, 0.2), rep=0, b=0.1).name
        'MT-UCB'
    """
    domains, bound, eps = _told(setting, rep)
    common = {"delta": DELTA, "noise_std": setting.noise_std}
    if name == "MT-UCB":
        return mt_ucb(domains, linear_kernel(), b, bound, eps, name=name, **common)
    if name == "MT-UCB-naive":
        return gob_lin(domains, linear_kernel(), b, bound, eps, name=name, **common)
    if name == "AdaMT-UCB":
        return ada_mt_ucb(
            domains, linear_kernel(), bound, CANDIDATE_DEVIATIONS, b=b, name=name, **common
        )
    if name == "Independent":
        return independent_ucb(domains, linear_kernel(), bound, name=name, **common)
    if name == "Single":
        return single_ucb(domains, linear_kernel(), bound, name=name, **common)
    if name == "MT-CMM-UCB":
        return mt_cmm_ucb(
            domains, linear_kernel(), b, bound, eps, on_empty=CMM_ON_EMPTY, name=name, **common
        )
    raise ValueError(f"unknown online method {name!r}")


def active_policy(name: str, setting: Setting, rep: int, b: float) -> Policy:
    """The active-learning method ``name`` (one of ``ACTIVE_METHODS``, or ``"MT-CMM-AL"``)
    for repetition ``rep``'s problem of ``setting``, with kernel parameter ``b``.

    Raises:
        ValueError: If ``name`` is not an active-learning method.

    Example:
        >>> from botorch_mtucb.experiments.paper001.methods import active_policy
        >>> from botorch_mtucb.experiments.paper001.settings import synthetic_setting
        >>> active_policy("MT-AL-naive", synthetic_setting(3, 0.2), rep=0, b=0.1).name
        'MT-AL-naive'
    """
    domains, bound, eps = _told(setting, rep)
    common = {"delta": DELTA, "noise_std": setting.noise_std, "name": name}
    naive = {"width": NaiveWidth, "regularization": 1.0}
    compositions = {
        "MT-AL": (mt_al, {}),
        "MT-AL-naive": (mt_al, naive),
        "Uniform": (mt_al, {"query": UniformTask()}),
        "Uniform-naive": (mt_al, {"query": UniformTask(), **naive}),
        "MTS": (mts, {}),
        "AE-LSVI": (mt_al, {"query": OptimisticGap()}),
        "MT-CMM-AL": (mt_cmm_al, {"on_empty": CMM_ON_EMPTY}),
    }
    if name not in compositions:
        raise ValueError(f"unknown active-learning method {name!r}")
    build, extra = compositions[name]
    return build(domains, linear_kernel(), b, bound, eps, **common, **extra)


def make_method(
    name: str, setting: Setting, b: float, active: bool, label: str | None = None
) -> Method:
    """The method ``name`` on ``setting`` for the runner: online or active-learning
    policies and environments, named ``label`` (default ``name``).

    Example:
        >>> from botorch_mtucb.experiments.paper001.methods import make_method
        >>> from botorch_mtucb.experiments.paper001.settings import synthetic_setting
        >>> method = make_method("MT-UCB", synthetic_setting(3, 0.2), 0.1, False, "MT-UCB b=0.1")
        >>> method.name, method.make_policy(0).name
        ('MT-UCB b=0.1', 'MT-UCB b=0.1')
    """
    build = active_policy if active else online_policy

    def make_environment(rep: int):
        problem = setting.problem(rep)
        return (
            ActiveMultiTaskEnvironment(problem) if active else OnlineMultiTaskEnvironment(problem)
        )

    def make_policy(rep: int) -> Policy:
        policy = build(name, setting, rep, b)
        if label is not None:
            policy.name = label
        return policy

    return Method(label or name, make_policy, make_environment, cost=method_cost(name))
