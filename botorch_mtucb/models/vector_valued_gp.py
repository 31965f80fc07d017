"""The exact posterior of a multi-task GP with a fixed multi-task kernel.

Source: paper 000 (Chowdhury & Gopalan 2021), Section 3.1: vector-valued kernel ridge
regression, mu_t(x) = G_t(x)^T (G_t + eta I)^{-1} Y_t and eq. (1),
Gamma_t(x, x') = Gamma(x, x') - G_t(x)^T (G_t + eta I)^{-1} G_t(x'); Section 3.3 and
Appendix A (eqs. 3-6) for ICM kernels; paper 001, Section 3, for task-indexed data. A
constant prior mean per task and a noise variance per task generalize these exactly
(``FixedKernelMultiTaskModel``: ``c + ...`` and ``Lambda`` in place of ``eta I``).
The two factorizations are ``models.eigen_route`` (ICM kernels, full-vector data) and
``models.general_route`` (the Gram matrix of the scalar observations).

Why this module is long: the class docstring carries the paper's formulas, the routes and
running examples of the public constructor, and the class keeps the model-level
operations that read both routes (``from_model``, ``append_observations``,
``information_gain``, ``sample_candidates``); the routes' algebra is in the two modules
above.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import gpytorch
import torch
from botorch.exceptions.errors import UnsupportedError
from botorch.models.model import Model
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_mtucb.kernels.separable_sum import TaskCovarianceLike
from botorch_mtucb.models.base import FixedKernelMultiTaskModel
from botorch_mtucb.models.botorch_readers import vector_valued_gp_arguments
from botorch_mtucb.models.candidate_posterior import CandidatePosterior
from botorch_mtucb.models.candidate_samples import matheron_sample
from botorch_mtucb.models.eigen_route import ExactEigenRoute
from botorch_mtucb.models.general_route import ExactGeneralRoute


def _eager_kernels():
    """GPyTorch kernels evaluated at once inside the block (no lazy kernel tensors),
    the caller's setting restored after it."""
    return gpytorch.settings.lazily_evaluate_kernels(False)


class VectorValuedGP(ExactEigenRoute, ExactGeneralRoute, FixedKernelMultiTaskModel):
    r"""Exact multi-task GP posterior with a fixed kernel ``sum_j k_j(x, x') B_j``.

    The posterior mean and covariance are the vector-valued kernel ridge regression
    estimate and its uncertainty (paper 000, Section 3.1, eq. (1)):

    .. math::
        \mu_t(x) = G_t(x)^\top (G_t + \eta I)^{-1} Y_t, \qquad
        \Gamma_t(x, x') = \Gamma(x, x') - G_t(x)^\top (G_t + \eta I)^{-1} G_t(x').

    The kernel is fixed (its parameters are frozen). The noise variance ``eta`` is the
    papers' regularization and the prior mean is zero, as the theory assumes, unless
    ``prior_mean`` (a constant ``c_i`` per task) and ``noise_variances`` (``lambda_i``
    per task) are given: then ``mu_t(x) = c + G_t(x)^T (G_t + Lambda)^{-1} (Y_t - c)``
    and ``Lambda`` replaces ``eta I`` (``FixedKernelMultiTaskModel``; how the widths
    treat them: ``confidence.mt_kb_width``). No outcome transform is applied.

    Two kinds of data:

    * full-vector (paper 000): ``train_Y`` is ``N x n``, every task is observed at each
      row of ``train_X``;
    * task-indexed (paper 001): ``train_Y`` is ``N x 1`` and ``train_tasks`` gives the
      task (``0 .. n-1``) of each row.

    With a single separable (ICM) term and full-vector data the model uses the
    eigen-decomposition ``B = sum_i xi_i u_i u_i^T`` of paper 000, Section 3.3 /
    Appendix A (``models.eigen_route``: independent scalar problems ``xi_i K_t + eta I``,
    one Cholesky factor per distinct eigenvalue). Otherwise the full ``M x M`` Gram
    matrix of the ``M`` scalar observations is factorized (``models.general_route``). With noise
    variances that differ between tasks the eigen route runs on the whitened function
    (task covariance ``S^{-1} B S^{-1}``, one noise level ``eta``; exact, see
    ``FixedKernelMultiTaskModel``) and the general route puts each observation's own
    noise variance on the diagonal.

    ``condition_on_observations`` / ``append_observations`` extend these Cholesky
    factors by a Schur-complement block written in place into a preallocated buffer
    (``GrowingCholesky``: ``O(t^2)`` per new row, no refactorization, no copy of the
    factor). The model keeps ``L^{-1} Y`` (also extended in place) instead of
    ``(G_t + eta I)^{-1} Y_t``: the mean ``G_t(x)^T (G_t + eta I)^{-1} Y_t`` is
    ``(L^{-1} G_t(x))^T (L^{-1} Y_t)``, and ``L^{-1} G_t(x)`` is needed for the
    covariance anyway.

    **Finite candidate sets.** ``track_candidates(domain)`` attaches a
    ``CandidatePosterior`` (``models.candidate_posterior``): ``V = L^{-1} G_t(D)``
    extended by a row per observation, ``O(r t N)`` per round instead of ``O(r t^2 N)``
    and ``N t`` kernel evaluations. On the eigen route the candidates are points (all
    tasks); on the general route they are scalar columns ``(x, i)``, every task at every
    point of one domain or the arms of each task (a list of domains, paper 001), and an
    observation at a column is paper 001's rank-one update (no solve), its information
    gain increment kept by the chain rule. Paper 000's policies and paper 001's
    regression attach it on a ``FiniteDomain``. Kernels are evaluated eagerly inside the
    model's own calls (GPyTorch's ``lazily_evaluate_kernels`` is switched off there and
    restored after).

    **BoTorch's model API.** ``condition_on_observations`` takes batches and
    per-observation ``noise`` (honoured exactly by Gaussian conditioning of the
    posterior, ``models.conditioning``; the in-place route above whenever the rows are
    unbatched with the model's noise; a model of either route keeps
    ``append_observations``, ``information_gain`` and ``track_candidates``, see
    ``FixedKernelMultiTaskModel``), ``fantasize`` makes ``num_fantasies x batch`` models
    (so BoTorch's ``qKnowledgeGradient`` and ``qNegIntegratedPosteriorVariance`` run),
    ``subset_output`` keeps all observations and restricts the outputs, and ``.to()``
    moves and casts every factor and buffer. ``VectorValuedGP.from_model`` converts a
    fitted BoTorch model (its constant means and per-task noise included).
    ``state_dict`` holds the kernel, the data, ``prior_mean`` and ``noise_variances``;
    ``load_state_dict`` accepts the state of a model of the same structure with any
    number of rows and rebuilds every factor from it.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.models import VectorValuedGP
        >>> B = torch.tensor([[1.0, 0.5], [0.5, 1.0]], dtype=torch.float64)
        >>> train_X = torch.linspace(0, 1, 5, dtype=torch.float64).unsqueeze(-1)
        >>> train_Y = torch.cat([torch.sin(6 * train_X), torch.cos(6 * train_X)], -1)  # 5 x 2
        >>> model = VectorValuedGP(train_X, train_Y, RBFKernel(), B, regularization=0.1)
        >>> posterior = model.posterior(torch.rand(3, 1, dtype=torch.float64))
        >>> posterior.mean.shape, posterior.distribution.covariance_matrix.shape
        (torch.Size([3, 2]), torch.Size([6, 6]))
        >>> tasks = torch.tensor([0, 1, 1])  # task-indexed data (paper 001)
        >>> single = VectorValuedGP(train_X[:3], train_Y[:3, :1], RBFKernel(), B, 0.1, tasks)
        >>> single.posterior(train_X).mean.shape
        torch.Size([5, 2])
    """

    _num_outputs: int
    # The data: persistent buffers (``state_dict``, ``.to()``, ``deepcopy``).
    _DATA_BUFFERS = ("train_X", "train_Y", "train_tasks")
    # What is computed from the kernel, the data and the noise: buffers that ``.to()``
    # and ``deepcopy`` carry but ``state_dict`` leaves out (``load_state_dict``
    # rebuilds them).
    _DERIVED_BUFFERS = (
        "_obs_X",
        "_obs_tasks",
        "_obs_y",
        "_forward_y",
        "_rotated_Y",
        "_xi",
        "_U",
        "_group_of",
        "_group_xi",
        "_U_out",
    )

    def __init__(
        self,
        train_X: Tensor,
        train_Y: Tensor,
        data_kernel: Kernel | Sequence[Kernel],
        task_covariance: TaskCovarianceLike | Sequence[TaskCovarianceLike],
        regularization: float | None = None,
        train_tasks: Tensor | None = None,
        *,
        prior_mean: float | Sequence[float] | Tensor | None = None,
        noise_variances: float | Sequence[float] | Tensor | None = None,
    ) -> None:
        r"""Build the posterior from data.

        Args:
            train_X: ``N x d`` inputs (``N`` may be 0: the prior).
            train_Y: ``N x n`` outputs (full-vector data) or ``N x 1`` outputs with
                ``train_tasks`` (task-indexed data).
            data_kernel: A GPyTorch kernel on ``x``, or a list of them.
            task_covariance: An ``n x n`` PSD tensor or a task-kernel module (e.g.
                ``UniformSimilarityTaskKernel``), or a list matching ``data_kernel``.
                A list gives a sum of separable kernels; ``[e_i e_i^T]`` with per-task
                kernels gives independent tasks.
            regularization: The regularization / noise variance ``eta > 0`` of every
                task (required unless ``noise_variances`` is given).
            train_tasks: ``N`` (or ``N x 1``) task indices in ``[0, n - 1]`` for
                task-indexed data; ``None`` for full-vector data.
            prior_mean: The constant prior mean ``c_i`` of each task: a number or ``n``
                values (default: zero).
            noise_variances: The noise variance ``lambda_i > 0`` of each task's
                observations: a number or ``n`` values, in place of
                ``regularization``; the model's ``regularization`` is then
                ``eta = min_i lambda_i``.

        Raises:
            TypeError: For a non-tensor input, a non-kernel ``data_kernel``, a bad
                ``task_covariance`` type, half-precision ``train_X`` / ``train_Y``
                (float32 and float64 are accepted) or boolean ``train_tasks``.
            ValueError: For NaN/inf in ``train_X`` / ``train_Y``, inputs so large that
                the kernel overflows (``1e300 * X``), mismatched rows, a wrong number
                of output columns, ``regularization <= 0``, a task covariance that is
                not PSD or of the wrong size, or a task index out of range or not a
                whole number; ``prior_mean`` / ``noise_variances`` not finite, not
                ``n`` values or (noise) not ``> 0``; both ``regularization`` and
                ``noise_variances`` given (``TypeError`` for neither).
        """
        super().__init__()
        for name in self._DATA_BUFFERS:
            self.register_buffer(name, None)
        for name in self._DERIVED_BUFFERS:
            self.register_buffer(name, None, persistent=False)
        train_X, train_Y, train_tasks = self._setup(
            train_X,
            train_Y,
            data_kernel,
            task_covariance,
            regularization,
            train_tasks,
            prior_mean=prior_mean,
            noise_variances=noise_variances,
        )
        self.train_X = train_X.clone()
        self.train_Y = train_Y.clone()
        self.train_tasks = train_tasks
        self._rebuild_state()

    def _rebuild_state(self) -> None:
        """Factorize the data from scratch with the current kernel, prior mean and noise
        variances (the constructor, ``load_state_dict``); a tracked candidate set is
        tracked again."""
        candidates = self._candidates
        self._candidates = None
        with torch.no_grad(), _eager_kernels():
            if self._use_icm:
                self._init_eigen_system()
                self._factorize_icm()
            else:
                self._factorize_general()
        self._track_again(candidates)

    @classmethod
    def from_model(cls, model: Model, regularization: float | None = None) -> VectorValuedGP:
        r"""A ``VectorValuedGP`` with a fitted BoTorch model's kernels, mean, noise and data.

        The multi-task kernel ``Gamma(x, x') = sum_j k_j(x, x') B_j`` (paper 000,
        Section 2) is read by ``models.botorch_readers.read_multi_output_model``:

        * ``KroneckerMultiTaskGP``: the ICM kernel ``k_x(x, x') B`` of its
          ``MultitaskKernel``, full-vector data (the eigen route, paper 000 Section 3.3);
        * ``MultiTaskGP``: ``k_x(x, x') B`` with ``B`` its index kernel's covariance,
          task-indexed data (tasks ``0 .. n-1`` in the order of the sorted task values; all
          ``n`` tasks are outputs, whatever ``output_tasks`` says);
        * ``SingleTaskGP`` with ``m`` outputs, ``ModelListGP``: independent tasks
          ``sum_i k_i(x, x') e_i e_i^T``, full-vector data when the outputs share their
          training inputs, task-indexed otherwise.

        The converted model's posterior is the fitted model's (to round-off):

        * **Prior mean**: the model's constant mean of each task (``prior_mean``), read
          per training observation and checked to be constant within each task.
        * **Noise**: the likelihood's noise variance of each task (``noise_variances``;
          per-task noise plus the shared noise of a ``MultitaskGaussianLikelihood``).
          ``regularization=eta`` replaces it by one ``eta`` for every task (the papers'
          setting; the posterior then differs from the model's when its noise differs).
        * **Outcome transform**: the converted model works in the model's outcome space
          (its ``train_Y`` are the transformed targets, its posterior is in those
          units); ``model.outcome_transform.untransform_posterior(posterior)`` maps it
          back (exact for ``Standardize``), and new observations for
          ``append_observations`` go through ``model.outcome_transform`` (in ``eval``
          mode) first. Widths and norm bounds ``b`` refer to these units (and to ``f - c``).
        * **Inputs**: the user's. Each ``k_j`` applies the model's input transform
          (``ModelInputKernel``), so ``posterior(X)`` takes the ``X`` that
          ``model.posterior(X)`` takes (without the task column for a ``MultiTaskGP``).

        Args:
            model: A fitted, unbatched ``SingleTaskGP`` (one or several outputs),
                ``MultiTaskGP``, ``KroneckerMultiTaskGP`` or ``ModelListGP`` of them, with
                or without input and outcome transforms.
            regularization: One noise variance ``eta > 0`` for every task, instead of
                the likelihood's (``None``: the likelihood's, per task).

        Returns:
            A ``VectorValuedGP`` with ``model``'s number of tasks, kernel, prior mean,
            noise and training data.

        Raises:
            TypeError, ValueError: As ``read_multi_output_model`` (a model of another
                kind, a batched model, a kernel it cannot represent); ``ValueError`` for
                a prior mean that is not constant within a task (e.g. a ``LinearMean``),
                and, with ``regularization=None``, for noise that a variance per task
                cannot stand for: noise correlated between tasks
                (``MultitaskGaussianLikelihood(rank > 0)``) or differing between the
                points of one task (a ``FixedNoiseGaussianLikelihood`` with unequal
                ``train_Yvar``).

        Example:
            >>> import torch
            >>> from botorch.models import KroneckerMultiTaskGP
            >>> from botorch_mtucb.models import VectorValuedGP
            >>> X = torch.rand(8, 1, dtype=torch.float64)
            >>> model = KroneckerMultiTaskGP(X, torch.cat([X.sin(), X.cos()], -1))
            >>> model.likelihood.task_noises = torch.tensor([1e-3, 4e-3])  # per task
            >>> model.likelihood.noise = torch.tensor([1e-4])  # and the shared noise
            >>> converted = VectorValuedGP.from_model(model)
            >>> converted.num_tasks, [round(v, 6) for v in converted.noise_variances.tolist()]
            (2, [0.0011, 0.0041])
            >>> X_test = torch.rand(3, 1, dtype=torch.float64)
            >>> torch.allclose(converted.posterior(X_test).mean, model.posterior(X_test).mean)
            True
        """
        return cls(**vector_valued_gp_arguments(model, regularization))

    @property
    def num_observations(self) -> int:
        """The number of scalar observations ``M`` (``N n`` for full-vector data) of the
        model's own data (not those of a batched ``condition_on_observations``)."""
        if self._full_vector:
            return self.train_Y.numel()
        return self.train_Y.shape[0]

    # ------------------------------------------------------------ factorizations
    def _scalar_observations(self, X: Tensor, Y: Tensor, tasks: Tensor | None):
        """Flatten rows into scalar observations ``(x, task, y)``."""
        if tasks is None:
            n = self.num_tasks
            obs_X = X.repeat_interleave(n, dim=0)
            obs_tasks = torch.arange(n, device=X.device).repeat(X.shape[0])
            return obs_X, obs_tasks, Y.reshape(-1)
        return X, tasks, Y.reshape(-1)

    def _apply(self, fn, recurse: bool = True):
        # The factor lives outside the module's buffers: move / cast it as well.
        super()._apply(fn, recurse)
        factor = getattr(self, "_factor", None)
        if factor is not None:
            factor.buffer = fn(factor.buffer)
        return self

    # ------------------------------------------------------------------ posterior
    def _mean_and_covariance(self, X: Tensor) -> tuple[Tensor, Tensor]:
        """Mean ``batch x q x n`` and covariance ``batch x (q n) x (q n)`` (interleaved)."""
        candidates = self._candidates
        index = None if candidates is None else candidates.locate(X)
        if index is not None:
            if self._use_icm:
                xi, U, groups, mean = self._xi, self._U_out, self._group_of, self.prior_mean
                return candidates.eigen_moments(index, xi, U, groups, mean)
            return candidates.block_moments(index, self.prior_mean)
        with _eager_kernels():
            if self._use_icm:
                return self._icm_mean_and_covariance(X)
            return self._general_mean_and_covariance(X)

    # ------------------------------------------------------- finite candidate set
    def _attach_candidates(self, candidates: CandidatePosterior) -> bool:
        """Fill ``candidates`` with ``V = L^{-1} G_t(D)`` and the sums its moments are
        read from: points on the eigen route (one domain of every task only), columns
        on the general route. ``False`` when ``V`` would exceed ``max_entries``."""
        if self._use_icm:
            return candidates.offsets is None and self._attach_eigen(candidates)
        return self._attach_columns(candidates)

    def sample_candidates(self, task: int, generator: torch.Generator | None = None) -> Tensor:
        r"""One joint posterior sample of ``f(task, .)`` at the task's tracked
        candidates (Matheron's rule, ``CandidatePosterior.sample``): ``O(t K)`` instead
        of the ``O(K^3)`` of sampling the posterior's covariance.

        Args:
            task: The task, in ``[0, n - 1]``.
            generator: The random stream of the draws.

        Returns:
            One value per candidate of the task (the points of its domain, in order).

        Raises:
            UnsupportedError: Without candidates tracked on the general route with one
                kernel term, or after an observation that was not at a candidate.
            ValueError: For a task out of range.

        Example:
            >>> import torch
            >>> from gpytorch.kernels import RBFKernel
            >>> from botorch_mtucb.models import VectorValuedGP
            >>> arms = torch.linspace(0, 1, 4, dtype=torch.float64).unsqueeze(-1)
            >>> X = torch.zeros(0, 1, dtype=torch.float64)
            >>> model = VectorValuedGP(X, X, RBFKernel(), torch.eye(1), 0.1,
            ...                        train_tasks=torch.zeros(0, dtype=torch.long))
            >>> model.track_candidates([arms])
            True
            >>> model.sample_candidates(0, torch.Generator().manual_seed(0)).shape
            torch.Size([4])
        """
        candidates = self._candidates
        if candidates is None or candidates.column_task is None:
            raise UnsupportedError(
                "sample_candidates needs candidates tracked on the general route "
                "(track_candidates on task-indexed data or a sum of separable kernels)"
            )
        if self.has_task_noise:
            noise_std = self._observation_noise(self._obs_tasks).sqrt()
        else:
            noise_std = math.sqrt(self.regularization)
        targets = self._obs_y - self.prior_mean[self._obs_tasks]
        if self.kernel.num_terms != 1:
            raise UnsupportedError("sample_candidates needs one separable kernel term")
        kernel, task_covariance = self.kernel.kernels[0], self.kernel.task_covariances[0]
        with _eager_kernels():
            sample = matheron_sample(
                candidates,
                task,
                self._factor,
                targets,
                noise_std,
                kernel,
                task_covariance,
                generator,
            )
        return sample + self.prior_mean[task] if bool(self.prior_mean[task] != 0) else sample

    # ---------------------------------------------------------- information gain
    def information_gain(self) -> Tensor:
        r"""``1/2 log det(I + G_t / eta)`` over the observations seen (a 0-d tensor, or
        ``batch_shape`` for a model conditioned on batches).

        Equals ``1/2 sum_s log det(I_n + Gamma_{s-1}(x_s, x_s) / eta)`` (paper 000,
        Theorem 2 and Lemma 4): the mutual information between ``f`` and the data.
        With per-task noise (``noise_variances``) it is the mutual information
        ``1/2 log det(I + Lambda^{-1/2} G_t Lambda^{-1/2})``, ``Lambda`` the diagonal of
        the observations' noise variances (the whitened function's ``1/2 log det(I +
        G'_t / eta)``); the prior mean does not enter. A model conditioned beyond its own
        data (``condition_on_observations`` with batches or other noise, ``fantasize``)
        adds the information of those observations given its own, ``1/2 log det(I +
        S^{-1/2} Gamma_t(P, P) S^{-1/2})`` (the chain rule; infinite for noiseless
        ones). With candidates tracked on the general route, every observation at a
        candidate column, the sum is kept by the chain rule as the observations arrive
        (paper 001, Section 2.1: ``sum_s 1/2 log(1 + sigma_{s-1}^2(x_s) / lambda)``).

        Raises:
            UnsupportedError: For a ``subset_output`` model (call it on the full model).

        Example:
            >>> import torch
            >>> from gpytorch.kernels import LinearKernel
            >>> from botorch_mtucb.models import VectorValuedGP
            >>> X, Y = torch.ones(1, 1, dtype=torch.float64), torch.zeros(1, 1, dtype=torch.float64)
            >>> kernel = LinearKernel().initialize(variance=1.0)
            >>> model = VectorValuedGP(X, Y, kernel, torch.eye(1), regularization=1.0)
            >>> round(float(model.information_gain()), 4)  # 1/2 log(1 + 1 / 1)
            0.3466
        """
        self._require_all_outputs("information_gain")
        gain = self._core_information_gain()
        if self._conditioning is None:
            return gain
        return (gain + self._conditioning.information_gain()).expand(self.batch_shape)

    def _core_information_gain(self) -> Tensor:
        """``information_gain`` of the model's own data."""
        candidates = self._candidates
        if candidates is not None and candidates.information_gain is not None:
            like = self.train_X
            return torch.tensor(candidates.information_gain, dtype=like.dtype, device=like.device)
        log_eta = math.log(self.regularization)
        if self._use_icm:
            t = self.train_X.shape[0]
            if t == 0:
                return self.train_Y.new_zeros(())
            half_logdet = self._factor.half_log_det()  # r
            per_component = half_logdet[self._group_of] - 0.5 * t * log_eta
            return (per_component * (self._xi > 0)).sum()
        if self._obs_y.numel() == 0:
            return self._obs_y.new_zeros(())
        half_logdet = self._factor.half_log_det()
        if not self.has_task_noise:
            return half_logdet - 0.5 * self._obs_y.numel() * log_eta
        return half_logdet - 0.5 * self._observation_noise(self._obs_tasks).log().sum()

    # ----------------------------------------------------------- conditioning
    def append_observations(
        self, X: Tensor, Y: Tensor, train_tasks: Tensor | None = None
    ) -> VectorValuedGP:
        r"""Condition ``self`` on ``(X, Y)`` in place and return it.

        The in-place version of ``condition_on_observations`` for bandit loops (no
        copy of the factorization). Same arguments and errors. The rows join the
        model's own data; a model conditioned beyond it (batches, other noise) stays
        conditioned on those observations too.

        Example:
            >>> import torch
            >>> from gpytorch.kernels import RBFKernel
            >>> from botorch_mtucb.models import VectorValuedGP
            >>> X = torch.zeros(0, 1, dtype=torch.float64)  # no data: the prior
            >>> model = VectorValuedGP(X, X.new_zeros(0, 2), RBFKernel(), torch.eye(2), 0.1)
            >>> model.append_observations(torch.ones(1, 1), torch.ones(1, 2)).num_observations
            2
        """
        X, Y, tasks = self._check_new_data(X, Y, train_tasks)
        if X.shape[0] == 0:
            return self
        with torch.no_grad(), _eager_kernels():
            if self._use_icm:
                self._append_icm(X, Y)
            else:
                self._append_general(X, Y, tasks)
            self._refit_conditioning()
        return self

    def _extend_forward(self, forward: Tensor, new_values: Tensor) -> Tensor:
        """Extend ``v = L^{-1} y`` after ``m`` rows were appended to ``L``:
        ``v_new = L_S^{-1} (y_new - W v)`` (``O(t m)``).

        ``forward``: ``batch x t x k``; ``new_values``: ``batch x m x k``.
        """
        t, m = forward.shape[-2], new_values.shape[-2]
        rows = self._factor.factor[..., t : t + m, :]  # batch x m x (t + m): [W, L_S]
        residual = new_values - rows[..., :t] @ forward
        tail = torch.linalg.solve_triangular(rows[..., t:].contiguous(), residual, upper=False)
        return torch.cat([forward, tail], dim=-2)
