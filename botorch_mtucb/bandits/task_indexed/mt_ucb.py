"""MT-UCB (Algorithm 1 of paper 001) for online multi-task learning.

Source: paper 001 (Sessa et al. 2023), Section 3.1 (Algorithm 1, Table 1, Theorem 2).

At round ``t`` nature reveals ``i_t`` (context key ``"task"``) and MT-UCB plays
``x_t = argmax_x mu_{t-1}(i_t, x) + beta_{t-1}(b) sigma_{t-1}(i_t, x)`` (eq. 7).
Table 1's special cases are constructors: ``independent`` (``b = 0``, ``lambda = 1``:
N independent IGP-UCBs), ``single`` (``b = inf``, ``lambda = 1 / N``: one IGP-UCB on
the pooled data) and ``gob_lin`` (the naive width with ``lambda = 1``).
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor

from botorch_mtucb.bandits.task_indexed.policy import TaskIndexedUCBPolicy


class MultiTaskUCB(TaskIndexedUCBPolicy):
    r"""MT-UCB, Algorithm 1 of paper 001: UCB on the revealed task with ``K_task(b)``.

    ``x_t = argmax_x mu_{t-1}(i_t, x) + beta_{t-1}(b) sigma_{t-1}(i_t, x)`` (eq. 7) for
    the task ``i_t = context["task"]`` (``OnlineMultiTaskEnvironment``).

    Args:
        domains, data_kernel, b, rkhs_norm_bound, task_deviation, delta, noise_std,
        regularization, width_rule, num_tasks, name: See ``TaskIndexedUCBPolicy``.

    Raises:
        ValueError: For an unknown ``width_rule``, or (at the first round) arguments that
            ``multitask_widths`` rejects.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.bandits import MultiTaskUCB
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
        >>> policy = MultiTaskUCB(arms, LinearKernel().double(), b=1.0, rkhs_norm_bound=1.0,
        ...                       task_deviation=0.5, num_tasks=2)
        >>> x = policy.select({"task": 1}, torch.Generator().manual_seed(0))
        >>> policy.update(x, torch.tensor([0.2]), {"task": 1}, torch.Generator())
        >>> policy.regression.num_observations
        1
    """

    default_name = "MT-UCB"

    @classmethod
    def independent(cls, domains, data_kernel, rkhs_norm_bound, **kwargs) -> MultiTaskUCB:
        """Independent: ``b = 0``, ``lambda = 1`` (N independent IGP-UCBs, Table 1).

        Example:
            >>> import torch
            >>> from gpytorch.kernels import LinearKernel
            >>> from botorch_mtucb.bandits import MultiTaskUCB
            >>> from botorch_mtucb.utils import FiniteDomain
            >>> arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
            >>> policy = MultiTaskUCB.independent(arms, LinearKernel().double(), 1.0, num_tasks=2)
            >>> policy.name, policy.regression.b, policy.regression.regularization
            ('Independent', 0.0, 1.0)
        """
        kwargs.setdefault("name", "Independent")
        kwargs.setdefault("task_deviation", 0.0)
        return cls(domains, data_kernel, 0.0, rkhs_norm_bound, regularization=1.0, **kwargs)

    @classmethod
    def single(cls, domains, data_kernel, rkhs_norm_bound, **kwargs) -> MultiTaskUCB:
        r"""Single: ``b = inf``, ``lambda = 1 / N``, tasks assumed identical (``epsilon = 0``).

        Then ``mu_t`` is the single-task regression on the pooled data with ``lambda =
        1``, ``sigma_t`` is its std over ``sqrt(N)``, and the ``naive`` width (the
        minimum) is ``sqrt(N)`` times IGP-UCB's ``B + sqrt(2 (gamma + ln(1/delta)))``:
        one IGP-UCB for all tasks (Section 5, "Single").

        Example:
            >>> import torch
            >>> from gpytorch.kernels import LinearKernel
            >>> from botorch_mtucb.bandits import MultiTaskUCB
            >>> from botorch_mtucb.utils import FiniteDomain
            >>> arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
            >>> policy = MultiTaskUCB.single([arms, arms], LinearKernel().double(), 1.0)
            >>> policy.name, policy.regression.b, policy.regression.regularization
            ('Single', inf, 0.5)
        """
        kwargs.setdefault("name", "Single")
        n = kwargs.get("num_tasks") or len(domains)
        return cls(
            domains,
            data_kernel,
            math.inf,
            rkhs_norm_bound,
            task_deviation=0.0,
            regularization=1.0 / n,
            **kwargs,
        )

    @classmethod
    def gob_lin(cls, domains, data_kernel, b, rkhs_norm_bound, task_deviation, **kwargs):
        """GoB.Lin (Table 1): the naive width with ``lambda = 1``.

        Example:
            >>> import torch
            >>> from gpytorch.kernels import LinearKernel
            >>> from botorch_mtucb.bandits import MultiTaskUCB
            >>> from botorch_mtucb.utils import FiniteDomain
            >>> arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
            >>> policy = MultiTaskUCB.gob_lin(arms, LinearKernel().double(), 1.0, 1.0, 0.5,
            ...                               num_tasks=2)
            >>> policy.name, policy.width_rule, policy.regression.regularization
            ('MT-UCB-naive', 'naive', 1.0)
        """
        kwargs.setdefault("name", "MT-UCB-naive")
        return cls(
            domains,
            data_kernel,
            b,
            rkhs_norm_bound,
            task_deviation,
            regularization=1.0,
            width_rule="naive",
            **kwargs,
        )

    def select(self, context: dict[str, Any], generator: torch.Generator) -> Tensor:
        """``x_t = argmax_x ucb_{t-1}(i_t, x)`` for the revealed task ``context["task"]``."""
        x, _, _ = self.regression.ucb_maximizer(int(context["task"]), self._width, generator)
        return x

    def update(
        self, x: Tensor, y: Tensor, context: dict[str, Any], generator: torch.Generator
    ) -> None:
        """Condition on ``y_t`` at ``(i_t, x_t)`` and recompute the width."""
        self.observe(int(context["task"]), x, y)

    def diagnostics(self) -> dict[str, float]:
        """The width and the information gains."""
        return {
            "width": self._width,
            "info_gain_mt": self.regression.info_gain_mt,
            "info_gain_st": self.regression.info_gain_st,
        }
