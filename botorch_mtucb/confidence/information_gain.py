r"""Information gains ``1/2 log det(I + K / eta)``: batch, per task and incremental.

The information gain of observations with Gram matrix ``K`` under ``N(0, eta I)`` noise
is the mutual information between ``f ~ GP(0, k)`` and the observations. It enters the
widths of all three papers:

* paper 000, Section 4 (after Theorem 1) and Lemma 4: ``information_gain`` and its chain
  rule ``information_gain_increment``;
* paper 001, Section 2.1 and Appendix A.2.2: ``gamma_t^mt`` under the task kernel
  ``K_task(b)`` of eq. 2 (``multitask_information_gain``) and the per-task ``gamma_t^st``
  (``single_task_information_gains``), kept up to date round by round by
  ``IncrementalInformationGain`` together with the effective dimension of eq. 26;
* paper 002, Section 6: the log-det terms of the radii.

The gain of a fitted BoTorch GP (``information_gain(model)``) is that of its own
training observations under its kernel and its likelihood's noise covariance ``Sigma``
(per task, per point, correlated): ``observation_information_gain(K, Sigma)`` on the
covariances of ``models.botorch_readers.moments``.

The effective dimension ``Tr(K (K + c I)^{-1})`` of paper 001, eq. 26, shares the
per-task loop and the incremental tracker, so it lives here too.

Why this module is long: the batch, per-task and incremental gains and the effective
dimension are one computation (``IncrementalInformationGain`` keeps exactly the values
that the batch functions compute, and its tests compare the two), each with the formula,
source and a running example in its docstring.
"""

from __future__ import annotations

import math

import torch
from botorch.models.model import Model
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_mtucb.confidence.constant_checks import check_trace_regularization
from botorch_mtucb.kernels.task_checks import check_b, check_num_tasks, check_task_data
from botorch_mtucb.models.botorch_readers import is_diagonal, training_covariances
from botorch_mtucb.utils.checks import check_positive, check_square_matrix, check_tensor
from botorch_mtucb.utils.linalg import GrowingCholesky, cholesky_factor


def information_gain(kernel_matrix: Tensor | Model, regularization: float | None = None) -> Tensor:
    r"""``1/2 log det(I + K / eta)`` for a PSD kernel matrix ``K``, or a model's gain.

    For a matrix: ``sum log diag(L) - t/2 log(eta)`` with ``L L^T = K + eta I``.

    For a fitted BoTorch GP (``SingleTaskGP`` with one or several outputs, batched or
    not, ``MultiTaskGP``, ``KroneckerMultiTaskGP``, ``ModelListGP``): the mutual
    information between the latent function and the model's own training observations,
    under its kernel and its likelihood's noise (per task and per point included),

    .. math::
        \gamma = \tfrac12 \log\det\big(I + \Sigma^{-1/2} K \Sigma^{-1/2}\big),

    with ``K`` the prior covariance of the scalar training observations and ``Sigma``
    their noise covariance (``sigma^2 I`` gives paper 000's ``1/2 log det(I + G_t /
    eta)`` of Theorem 1 with ``eta = sigma^2``), summed over a-priori independent outputs
    (``observation_information_gain`` of each group of ``training_covariances``), in the
    model's transformed space (the gain does not depend on the outcome transform). A
    model of this package (anything with ``information_gain()``, e.g.
    ``VectorValuedGP``) gives its own value: the same mutual information, ``Sigma``
    the diagonal of its observations' noise variances (``noise_variances``: one per
    task; ``eta I`` by default); its prior mean does not enter.

    Args:
        kernel_matrix: ``... x t x t`` PSD matrix (``t`` may be 0), or a model.
        regularization: ``eta > 0`` for a matrix; must be ``None`` for a model (its
            noise comes from the likelihood).

    Returns:
        A tensor of shape ``...`` (nats); for a BoTorch model of its ``batch_shape``
        (detached).

    Raises:
        TypeError: If ``K`` is not a real floating-point tensor or a model that the
            route accepts, or ``regularization`` not a real number.
        ValueError: If ``K`` is not square or holds NaN/inf, ``regularization <= 0``
            (or given with a model), or a model's noise covariance is not positive
            definite.

    Example:
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.confidence import information_gain
        >>> gain = information_gain(torch.eye(3, dtype=torch.float64), 0.5)
        >>> round(float(gain), 6)  # 3/2 log(1 + 1 / 0.5)
        1.647918
        >>> X = torch.rand(6, 2, dtype=torch.float64)
        >>> gp = SingleTaskGP(X, torch.cat([X.sin(), X.cos()], -1))  # two outputs
        >>> bool(information_gain(gp) > 0)
        True
    """
    if isinstance(kernel_matrix, Model) or hasattr(kernel_matrix, "information_gain"):
        return _model_information_gain(kernel_matrix, regularization)
    eta = check_positive(regularization, "regularization")
    t = check_square_matrix(kernel_matrix, "kernel_matrix")
    if t == 0:
        return kernel_matrix.new_zeros(kernel_matrix.shape[:-2])
    eye = torch.eye(t, dtype=kernel_matrix.dtype, device=kernel_matrix.device)
    chol = cholesky_factor(kernel_matrix + eta * eye, eta)
    return chol.diagonal(dim1=-2, dim2=-1).log().sum(-1) - 0.5 * t * math.log(eta)


def observation_information_gain(kernel_matrix: Tensor, noise_covariance: Tensor) -> Tensor:
    r"""``1/2 log det(I + Sigma^{-1/2} K Sigma^{-1/2})``: the gain under any Gaussian noise.

    The mutual information between ``f ~ GP(0, k)`` and observations with prior
    covariance ``K`` and noise ``N(0, Sigma)`` (heteroskedastic or correlated noise;
    ``Sigma = eta I`` gives ``information_gain(K, eta)``). Computed as
    ``information_gain(W, 1)`` with ``W = L^{-1} K L^{-T}``, ``L L^T = Sigma`` (for a
    diagonal ``Sigma``, ``W = D^{-1/2} K D^{-1/2}``).

    Args:
        kernel_matrix: ``... x M x M`` PSD prior covariance ``K``.
        noise_covariance: ``... x M x M`` positive definite ``Sigma`` (broadcastable).

    Returns:
        A tensor of the broadcast batch shape (nats).

    Raises:
        TypeError: If an argument is not a real floating-point tensor.
        ValueError: If a matrix is not square, holds NaN/inf, the sizes differ or
            ``Sigma`` is not positive definite.

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence import observation_information_gain
        >>> K = torch.ones(2, 2, dtype=torch.float64)
        >>> Sigma = torch.diag(torch.tensor([1.0, 0.5], dtype=torch.float64))
        >>> round(float(observation_information_gain(K, Sigma)), 6)  # 1/2 log(1 + 1 + 2)
        0.693147
    """
    M = check_square_matrix(kernel_matrix, "kernel_matrix")
    if check_square_matrix(noise_covariance, "noise_covariance") != M:
        raise ValueError(
            f"noise_covariance must be M x M with M = {M} (the size of kernel_matrix), got "
            f"{tuple(noise_covariance.shape)}"
        )
    noise_covariance = noise_covariance.to(kernel_matrix)
    variances = noise_covariance.diagonal(dim1=-2, dim2=-1)
    if M == 0:
        return information_gain(kernel_matrix, 1.0)
    if is_diagonal(noise_covariance):
        if not (variances > 0).all():
            raise ValueError("noise_covariance must be positive definite (variances > 0)")
        scale = variances.rsqrt()
        whitened = kernel_matrix * scale.unsqueeze(-1) * scale.unsqueeze(-2)
    else:
        chol, info = torch.linalg.cholesky_ex(noise_covariance)
        if (info != 0).any():
            raise ValueError("noise_covariance must be positive definite")
        left = torch.linalg.solve_triangular(chol, kernel_matrix, upper=False)
        whitened = torch.linalg.solve_triangular(chol, left.mT, upper=False)
        whitened = 0.5 * (whitened + whitened.mT)
    return information_gain(whitened, 1.0)


def _model_information_gain(model: object, regularization: float | None) -> Tensor:
    if regularization is not None:
        raise ValueError(
            "regularization must be None when information_gain is given a model (the "
            f"noise comes from the model), got {regularization!r}"
        )
    if hasattr(model, "information_gain"):
        return model.information_gain()
    gains = [
        observation_information_gain(g.kernel_matrix, g.noise_covariance)
        for g in training_covariances(model)
    ]
    return sum(gains[1:], gains[0])


def information_gain_increment(posterior_variance: Tensor, regularization: float) -> Tensor:
    r"""``1/2 log(1 + sigma_{t-1}^2(x_t) / eta)``: one step of the chain rule.

    Summed over the queried points, these increments equal ``information_gain`` of
    their kernel matrix (paper 000, Lemma 4 with n = 1; for ``n x n`` posterior blocks
    pass their eigenvalues and sum). Negative variances (round-off) count as 0.

    Args:
        posterior_variance: Posterior variances ``sigma_{t-1}^2(x_t) >= 0``, any shape.
        regularization: ``eta > 0``.

    Returns:
        A tensor of the shape of ``posterior_variance`` (nats).

    Raises:
        TypeError: If ``posterior_variance`` is not a real floating-point tensor or
            ``regularization`` not a real number.
        ValueError: If ``posterior_variance`` holds NaN/inf or ``regularization <= 0``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence import information_gain_increment
        >>> increments = information_gain_increment(torch.tensor([1.0, 0.5]), 0.5)
        >>> [round(v, 4) for v in increments.tolist()]
        [0.5493, 0.3466]
    """
    eta = check_positive(regularization, "regularization")
    check_tensor(posterior_variance, "posterior_variance")
    return 0.5 * torch.log1p(posterior_variance.clamp_min(0.0) / eta)


def task_kernel_matrix(
    num_tasks: int,
    b: float,
    dtype: torch.dtype = torch.float64,
    device: torch.device | None = None,
) -> Tensor:
    r"""``K_task(b) = I / (1 + b) + b / (1 + b) 11^T / N`` (paper 001, eq. 2): ``N x N``.

    The same matrix as ``UniformSimilarityTaskKernel.from_b(N, b).covar_matrix``, built
    directly in ``dtype`` (that module stores ``omega`` as a float32 parameter by
    default). ``b = inf`` gives ``11^T / N``.

    Args:
        num_tasks: ``N >= 1``.
        b: Kernel parameter ``b >= 0`` (``math.inf`` allowed).
        dtype: Floating-point dtype of the result.
        device: Device of the result.

    Returns:
        The ``N x N`` task covariance.

    Raises:
        TypeError: If ``num_tasks`` is not an int or ``b`` not a real number.
        ValueError: If ``num_tasks < 1`` or ``b < 0`` / NaN.

    Example:
        >>> from botorch_mtucb.confidence import task_kernel_matrix
        >>> task_kernel_matrix(2, 1.0).tolist()
        [[0.75, 0.25], [0.25, 0.75]]
    """
    num_tasks = check_num_tasks(num_tasks)
    b = check_b(b)
    eye = torch.eye(num_tasks, dtype=dtype, device=device)
    ones = torch.full_like(eye, 1.0 / num_tasks)
    if math.isinf(b):
        return ones
    return eye / (1 + b) + b / (1 + b) * ones


def multitask_information_gain(
    train_X: Tensor,
    train_tasks: Tensor,
    data_kernel: Kernel,
    num_tasks: int,
    b: float,
    regularization: float,
) -> Tensor:
    r"""``gamma_t^mt(b) = 1/2 ln det(I_t + K_t / lambda)`` (paper 001, Section 2.1).

    ``K_t = [K_task(b)]_{i_s i_s'} k_X(x_s, x_s')`` over the observations seen: the
    data-dependent stand-in for the maximum information gain that the reference
    experiments use.

    Args:
        train_X: ``t x d`` inputs.
        train_tasks: ``t`` task indices in ``[0, N - 1]``.
        data_kernel: The input kernel ``k_X`` (a GPyTorch kernel).
        num_tasks: ``N``.
        b: Kernel parameter (``math.inf`` allowed).
        regularization: ``lambda > 0``.

    Returns:
        A 0-d tensor (nats).

    Raises:
        ValueError, TypeError: For mismatched shapes, ``train_X`` holding NaN/inf,
            task indices out of range, ``b < 0`` or ``regularization <= 0``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.confidence import multitask_information_gain
        >>> X = torch.tensor([[1.0], [1.0]], dtype=torch.float64)
        >>> tasks = torch.tensor([0, 1])
        >>> kernel = LinearKernel().double().initialize(variance=1.0)
        >>> gain = multitask_information_gain(X, tasks, kernel, 2, 0.0, 1.0)
        >>> round(float(gain), 6)  # b = 0: two independent tasks, log(1 + 1)
        0.693147
    """
    n = check_num_tasks(num_tasks)
    b = check_b(b)
    tasks = check_task_data(train_X, train_tasks, n)
    regularization = check_positive(regularization, "regularization")
    with torch.no_grad():
        task_matrix = task_kernel_matrix(n, b, train_X.dtype, train_X.device)
        gram = (
            data_kernel(train_X, train_X).to_dense() if tasks.numel() else train_X.new_zeros(0, 0)
        )
        gram = task_matrix[tasks][:, tasks] * gram
        return information_gain(gram, regularization)


def _per_task_values(train_X: Tensor, tasks: Tensor, num_tasks: int, value) -> Tensor:
    """``value(X_i)`` for each task's inputs ``X_i`` (0 for tasks without data): ``N``."""
    values = train_X.new_zeros(num_tasks)
    with torch.no_grad():
        for i in range(num_tasks):
            X_i = train_X[tasks == i]
            if X_i.shape[0]:
                values[i] = value(X_i)
    return values


def single_task_information_gains(
    train_X: Tensor,
    train_tasks: Tensor,
    data_kernel: Kernel,
    num_tasks: int,
    regularization: float,
) -> Tensor:
    r"""``1/2 ln det(I + K_{t_i} / lambda)`` for each task ``i`` (paper 001, eq. 30).

    ``K_{t_i}`` is the input-kernel Gram matrix of task ``i``'s own observations;
    ``gamma_t^st`` is the largest of these values (the data-dependent stand-in for the
    maximum single-task information gain).

    Args:
        train_X, train_tasks, data_kernel, num_tasks: As ``multitask_information_gain``.
        regularization: ``lambda > 0``.

    Returns:
        A tensor of shape ``N`` (nats; 0 for tasks without data).

    Raises:
        ValueError, TypeError: As ``multitask_information_gain``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.confidence import single_task_information_gains
        >>> X = torch.tensor([[1.0], [1.0]], dtype=torch.float64)
        >>> kernel = LinearKernel().double().initialize(variance=1.0)
        >>> gains = single_task_information_gains(X, torch.tensor([0, 0]), kernel, 2, 1.0)
        >>> [round(g, 6) for g in gains.tolist()]  # 1/2 log(1 + 2) for task 0
        [0.549306, 0.0]
    """
    n = check_num_tasks(num_tasks)
    tasks = check_task_data(train_X, train_tasks, n)
    check_positive(regularization, "regularization")

    def gain(X_i: Tensor) -> Tensor:
        return information_gain(data_kernel(X_i, X_i).to_dense(), regularization)

    return _per_task_values(train_X, tasks, n, gain)


def effective_dimension(kernel_matrix: Tensor, regularization: float | Tensor) -> Tensor:
    r"""``Tr(K (K + c I)^{-1})`` of a PSD ``... x t x t`` matrix (paper 001, eq. 26).

    Computed as ``t - c ||L^{-1}||_F^2`` with ``L L^T = K + c I``; ``c = inf`` gives 0.

    Args:
        kernel_matrix: ``... x t x t`` PSD matrix (``t`` may be 0).
        regularization: ``c > 0`` (``math.inf`` allowed).

    Returns:
        A tensor of shape ``...`` (dimensionless, in ``[0, t]``).

    Raises:
        TypeError: If ``K`` is not a real tensor or ``c`` not a real number.
        ValueError: If ``K`` is not square or holds NaN/inf, or ``c <= 0``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence import effective_dimension
        >>> round(float(effective_dimension(torch.eye(3, dtype=torch.float64), 1.0)), 12)  # 3 / 2
        1.5
    """
    c = check_trace_regularization(regularization, "regularization")
    t = check_square_matrix(kernel_matrix, "kernel_matrix")
    if t == 0 or math.isinf(c):
        return kernel_matrix.new_zeros(kernel_matrix.shape[:-2])
    eye = torch.eye(t, dtype=kernel_matrix.dtype, device=kernel_matrix.device)
    chol = cholesky_factor(kernel_matrix + c * eye, c)
    inverse_root = torch.linalg.solve_triangular(chol, eye.expand_as(chol), upper=False)
    return t - c * inverse_root.square().sum((-1, -2))


def task_effective_dimensions(
    train_X: Tensor,
    train_tasks: Tensor,
    data_kernel: Kernel,
    num_tasks: int,
    b: float,
    regularization: float,
) -> Tensor:
    r"""``Tr(K_{t_l} (K_{t_l} + lambda (1 + b) I)^{-1})`` for each task ``l`` (eq. 26).

    ``K_{t_l}`` is the input-kernel Gram matrix of task ``l``'s own observations; the
    sum over tasks is the ``effective_dimension`` argument of ``multitask_widths``.

    Args:
        train_X, train_tasks, data_kernel, num_tasks, b: As
            ``multitask_information_gain``.
        regularization: ``lambda > 0``.

    Returns:
        A tensor of shape ``N`` (0 for tasks without data, and for ``b = inf``).

    Raises:
        ValueError, TypeError: As ``multitask_information_gain``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence import task_effective_dimensions
        >>> X = torch.zeros(3, 2, dtype=torch.float64)  # k(x, x) = 1 at every point
        >>> tasks = torch.tensor([0, 1, 2])
        >>> dims = task_effective_dimensions(X, tasks, RBFKernel().double(), 3, 1.0, 0.5)
        >>> [round(d, 12) for d in dims.tolist()]  # 1 / (1 + 0.5 (1 + 1)) per task
        [0.5, 0.5, 0.5]
    """
    n = check_num_tasks(num_tasks)
    b = check_b(b)
    tasks = check_task_data(train_X, train_tasks, n)
    lam = check_positive(regularization, "regularization")

    def dimension(X_i: Tensor) -> Tensor:
        return effective_dimension(data_kernel(X_i, X_i).to_dense(), lam * (1 + b))

    return _per_task_values(train_X, tasks, n, dimension)


class IncrementalInformationGain:
    r"""``1/2 ln det(I + K / lambda)``, ``Tr(K (K + c I)^{-1})`` and ``Tr(K)`` of a growing
    data set.

    ``K`` is the kernel's Gram matrix of the points appended so far (one task's inputs
    in paper 001). Both values are grown by bordering the Cholesky factors of
    ``K + lambda I`` and ``K + c I`` (``GrowingCholesky``): ``O(t^2)`` per point instead
    of refactorizing. With ``A = K + c I`` bordered by ``k = k(X, x)`` and
    ``k(x, x) + c``, the Schur complement ``s = k(x, x) + c - k^T A^{-1} k`` and
    ``z = A^{-1} k``,

    .. math::
        \operatorname{Tr}(A_+^{-1}) = \operatorname{Tr}(A^{-1}) + \frac{1 + z^\top z}{s},
        \qquad \operatorname{Tr}(K (K + c I)^{-1}) = t - c \operatorname{Tr}((K + c I)^{-1}).

    The values equal ``information_gain(K, lambda)`` and
    ``effective_dimension(K, c)`` of the batch formulas (paper 001: ``gamma_t^st`` of
    Appendix A.2.2 and the terms of ``S`` in eq. 26, where ``c = lambda (1 + b)``);
    ``kernel_trace`` is ``Tr(K) = sum_s k(x_s, x_s)`` (the ``Tr(K_{t_l})`` of the proof
    of eq. 27, ``<= t`` only when ``k(x, x) <= 1``).

    Args:
        data_kernel: The kernel ``k`` (a GPyTorch kernel; it is moved to the points'
            dtype and device when they are appended).
        regularization: ``lambda > 0`` of the information gain.
        trace_regularization: ``c > 0`` of the effective dimension; ``math.inf``
            (the default) gives the limit 0 and tracks nothing.
        like: A tensor whose last dimension is the input dimension ``d`` and whose
            dtype and device the stored points take.

    Raises:
        TypeError: If a regularization is not a real number.
        ValueError: If ``regularization <= 0`` or ``trace_regularization <= 0`` / NaN.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.confidence import IncrementalInformationGain
        >>> X = torch.tensor([[1.0], [2.0]], dtype=torch.float64)
        >>> kernel = LinearKernel().double().initialize(variance=1.0)
        >>> gain = IncrementalInformationGain(kernel, 1.0, 2.0, like=X)
        >>> gain.append(X)
        >>> round(gain.information_gain, 6)  # 1/2 log det(I + [[1, 2], [2, 4]])
        0.89588
        >>> round(gain.effective_dimension, 6)  # eigenvalues 5 and 0: 5 / (5 + 2)
        0.714286
        >>> gain.kernel_trace  # 1 + 4
        5.0
    """

    def __init__(
        self,
        data_kernel: Kernel,
        regularization: float,
        trace_regularization: float = math.inf,
        like: Tensor | None = None,
    ) -> None:
        self.regularization = check_positive(regularization, "regularization")
        scale = check_trace_regularization(trace_regularization, "trace_regularization")
        self.trace_regularization = scale
        self.data_kernel = data_kernel
        like = torch.zeros(0, 1, dtype=torch.float64) if like is None else like
        empty = like.new_zeros(0, 0)
        self.train_X = like.new_zeros(0, like.shape[-1])
        self._info = GrowingCholesky(empty, regularization=self.regularization)
        self._dimension = (
            None if math.isinf(scale) else GrowingCholesky(empty, regularization=scale)
        )
        self._trace_inverse = 0.0
        self.information_gain = 0.0
        self.effective_dimension = 0.0
        self.kernel_trace = 0.0

    @property
    def num_observations(self) -> int:
        """``t``, the number of points appended."""
        return self.train_X.shape[0]

    def append(self, X: Tensor) -> None:
        """Add the points ``X`` (``m x d``, or one point ``d``), one after the other."""
        for x in X.reshape(-1, self.train_X.shape[-1]):
            self._append_one(x.reshape(1, -1))

    def _append_one(self, x: Tensor) -> None:
        with torch.no_grad():
            kernel = self.data_kernel.to(x)
            cross = kernel(self.train_X, x).to_dense()  # t x 1
            diagonal = kernel(x, x).to_dense()  # 1 x 1
            self._info.append(cross, diagonal + self.regularization)
            self.train_X = torch.cat([self.train_X, x])
            self.kernel_trace += float(diagonal)
            t = self.num_observations
            half_log_det = float(self._info.half_log_det())
            self.information_gain = half_log_det - 0.5 * t * math.log(self.regularization)
            if self._dimension is not None:
                scale = self.trace_regularization
                solved = self._dimension.solve_spd(cross)  # A^{-1} k, t-1 x 1
                schur = float(diagonal + scale - cross.mT @ solved)
                self._trace_inverse += (1.0 + float(solved.square().sum())) / schur
                self._dimension.append(cross, diagonal + scale)
                self.effective_dimension = t - scale * self._trace_inverse
