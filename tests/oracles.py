"""Independent NumPy transcriptions of paper 000's formulas, used as test oracles.

Nothing here calls the package under test: kernels are re-implemented from their
closed forms (using the hyperparameter values read back from the GPyTorch modules),
and the posterior is the dense formula of paper 000, Section 3.1:

    mu_t(x) = G_t(x)^T (G_t + eta I)^{-1} Y_t,
    Gamma_t(x, x') = Gamma(x, x') - G_t(x)^T (G_t + eta I)^{-1} G_t(x')      (eq. 1)

with ``G_t = [Gamma(x_i, x_j)]`` (``nt x nt``, block ``(i, j)`` is ``sum_m k_m(x_i, x_j) B_m``)
and ``Y_t = [y_1^T, ..., y_t^T]^T``. Task-indexed data are scalar observations
``(x_s, i_s)`` with Gram matrix ``Gamma(x_s, x_s')[i_s, i_s']`` (paper 000, Remark 2).
With a constant prior mean ``c`` per task and a noise variance ``lambda_i`` per task the
oracle is the Gaussian-process posterior written out in the outputs (no whitening):
``mu_t(x) = c + G_t(x)^T (G_t + Lambda)^{-1} (Y_t - c)``, ``Lambda`` the diagonal of the
observations' noise variances.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import torch
from gpytorch.kernels import Kernel, MaternKernel, RBFKernel, ScaleKernel

KernelFunction = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _to_numpy(value) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().to(torch.float64).numpy()
    return np.asarray(value, dtype=np.float64)


def se_kernel(lengthscale, outputscale: float = 1.0) -> KernelFunction:
    """``s * exp(-||(x - x') / l||^2 / 2)`` (squared exponential, ARD lengthscales)."""
    lengthscale = np.asarray(lengthscale, dtype=np.float64).reshape(-1)

    def k(X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        diff = (X1[:, None, :] - X2[None, :, :]) / lengthscale
        return outputscale * np.exp(-0.5 * (diff**2).sum(-1))

    return k


def matern_kernel(nu: float, lengthscale, outputscale: float = 1.0) -> KernelFunction:
    """Matern kernel with ``nu`` in {1/2, 3/2, 5/2} (closed forms)."""
    lengthscale = np.asarray(lengthscale, dtype=np.float64).reshape(-1)

    def k(X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        diff = (X1[:, None, :] - X2[None, :, :]) / lengthscale
        r = np.sqrt((diff**2).sum(-1))
        if nu == 0.5:
            value = np.exp(-r)
        elif nu == 1.5:
            value = (1.0 + np.sqrt(3.0) * r) * np.exp(-np.sqrt(3.0) * r)
        elif nu == 2.5:
            value = (1.0 + np.sqrt(5.0) * r + 5.0 / 3.0 * r**2) * np.exp(-np.sqrt(5.0) * r)
        else:  # pragma: no cover - test helper misuse
            raise ValueError(nu)
        return outputscale * value

    return k


def numpy_kernel(kernel: Kernel) -> KernelFunction:
    """The closed form of a GPyTorch RBF / Matern kernel (optionally scaled), with the
    hyperparameters it actually holds (read back after any dtype conversion)."""
    outputscale = 1.0
    if isinstance(kernel, ScaleKernel):
        outputscale = float(_to_numpy(kernel.outputscale))
        kernel = kernel.base_kernel
    lengthscale = _to_numpy(kernel.lengthscale).reshape(-1)
    if isinstance(kernel, RBFKernel):
        return se_kernel(lengthscale, outputscale)
    if isinstance(kernel, MaternKernel):
        return matern_kernel(kernel.nu, lengthscale, outputscale)
    raise TypeError(type(kernel).__name__)  # pragma: no cover - test helper misuse


def make_rbf(lengthscale, dtype=torch.float64) -> RBFKernel:
    """An RBF kernel on ``len(lengthscale)`` ARD dimensions holding ``lengthscale``."""
    lengthscale = list(np.atleast_1d(lengthscale))
    kernel = RBFKernel(ard_num_dims=len(lengthscale)).to(dtype)
    kernel.lengthscale = torch.tensor(lengthscale, dtype=dtype)
    return kernel


def make_matern(nu: float, lengthscale: float, outputscale: float, dtype=torch.float64):
    """A scaled Matern kernel."""
    kernel = ScaleKernel(MaternKernel(nu=nu)).to(dtype)
    kernel.base_kernel.lengthscale = torch.tensor(lengthscale, dtype=dtype)
    kernel.outputscale = torch.tensor(outputscale, dtype=dtype)
    return kernel


@dataclass
class DenseMultiTaskGP:
    """Dense transcription of paper 000, Section 3.1 for ``Gamma = sum_m k_m B_m``.

    Args:
        terms: ``(k_m, B_m)`` pairs (NumPy kernel functions and ``n x n`` arrays).
        eta: The regularization / noise variance.
        prior_mean: ``n`` constant prior means (``None``: zero).
        noise_variances: ``n`` noise variances, one per task (``None``: ``eta``).
    """

    terms: Sequence[tuple[KernelFunction, np.ndarray]]
    eta: float
    prior_mean: np.ndarray | None = None
    noise_variances: np.ndarray | None = None

    def _mean(self) -> np.ndarray:
        if self.prior_mean is None:
            return np.zeros(self.num_tasks)
        return np.asarray(self.prior_mean, dtype=np.float64)

    def _noise(self, tasks: np.ndarray) -> np.ndarray:
        """The noise variance of each scalar observation of ``tasks``."""
        if self.noise_variances is None:
            return np.full(len(tasks), self.eta)
        return np.asarray(self.noise_variances, dtype=np.float64)[tasks]

    @property
    def num_tasks(self) -> int:
        return self.terms[0][1].shape[0]

    def gamma(self, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        """``Gamma(X1_a, X2_c)[i, k]`` as a ``q1 x n x q2 x n`` array."""
        n = self.num_tasks
        out = np.zeros((X1.shape[0], n, X2.shape[0], n))
        for k, B in self.terms:
            out += k(X1, X2)[:, None, :, None] * np.asarray(B)[None, :, None, :]
        return out

    def scalar_observations(self, X: np.ndarray, Y: np.ndarray, tasks=None):
        """Scalar observations ``(x, i, y)``; full-vector rows give ``(x_s, 0..n-1)``."""
        X = np.asarray(X, dtype=np.float64)
        Y = np.asarray(Y, dtype=np.float64)
        if tasks is None:
            n = self.num_tasks
            return np.repeat(X, n, axis=0), np.tile(np.arange(n), X.shape[0]), Y.reshape(-1)
        return X, np.asarray(tasks, dtype=int).reshape(-1), Y.reshape(-1)

    def observation_gram(self, X1, tasks1, X2, tasks2) -> np.ndarray:
        """``Gamma(x1_a, x2_b)[tasks1_a, tasks2_b]``."""
        full = self.gamma(X1, X2)
        return full[
            np.arange(len(tasks1))[:, None], tasks1[:, None], np.arange(len(tasks2)), tasks2
        ]

    def posterior(self, train_X, train_Y, X, tasks=None):
        """Mean ``q x n`` and covariance ``(q n) x (q n)`` (interleaved: ``a * n + i``)."""
        X = np.asarray(X, dtype=np.float64)
        q, n = X.shape[0], self.num_tasks
        prior = self.gamma(X, X).reshape(q * n, q * n)
        obs_X, obs_tasks, obs_y = self.scalar_observations(train_X, train_Y, tasks)
        c = self._mean()
        if obs_y.size == 0:
            return np.zeros((q, n)) + c, prior
        G = self.observation_gram(obs_X, obs_tasks, obs_X, obs_tasks)
        # G_t(x): M x (q n), entry [s, a * n + j] = Gamma(x_s, X_a)[i_s, j].
        full = self.gamma(obs_X, X)  # M x n x q x n
        Gx = full[np.arange(obs_y.size), obs_tasks].reshape(obs_y.size, q * n)
        A = G + np.diag(self._noise(obs_tasks))
        mean = Gx.T @ np.linalg.solve(A, obs_y - c[obs_tasks])
        covariance = prior - Gx.T @ np.linalg.solve(A, Gx)
        return mean.reshape(q, n) + c, covariance

    def information_gain(self, train_X, train_Y, tasks=None) -> float:
        """``1/2 log det(I + Lambda^{-1/2} G_t Lambda^{-1/2})`` (``Lambda = eta I``:
        ``1/2 log det(I + G_t / eta)``)."""
        obs_X, obs_tasks, obs_y = self.scalar_observations(train_X, train_Y, tasks)
        if obs_y.size == 0:
            return 0.0
        G = self.observation_gram(obs_X, obs_tasks, obs_X, obs_tasks)
        w = 1.0 / np.sqrt(self._noise(obs_tasks))
        sign, logdet = np.linalg.slogdet(np.eye(obs_y.size) + w[:, None] * G * w)
        assert sign > 0
        return 0.5 * logdet

    def sequential_log_det_sum(self, train_X, train_Y, tasks=None) -> float:
        """``sum_s log det(I + Gamma_{s-1}(x_s, x_s) / eta)`` (Theorem 2 of 000), each
        term from the dense posterior of the first ``s - 1`` rows (task-indexed rows:
        the ``1 x 1`` block of the observed task); with per-task noise the blocks are
        ``Lambda^{-1/2} Gamma_{s-1} Lambda^{-1/2}`` and ``eta`` is 1."""
        train_X = np.asarray(train_X, dtype=np.float64)
        train_Y = np.asarray(train_Y, dtype=np.float64)
        n, total = self.num_tasks, 0.0
        for s in range(train_X.shape[0]):
            past_tasks = None if tasks is None else np.asarray(tasks)[:s]
            _, cov = self.posterior(train_X[:s], train_Y[:s], train_X[s : s + 1], past_tasks)
            w = 1.0 / np.sqrt(self._noise(np.arange(n)))
            cov = w[:, None] * cov * w
            if tasks is not None:
                i = int(np.asarray(tasks)[s])
                cov = cov[i : i + 1, i : i + 1]
            total += np.linalg.slogdet(np.eye(cov.shape[0]) + cov)[1]
            assert cov.shape[0] in (1, n)
        return total

    def mt_kb_width(self, train_X, train_Y, b: float, sigma: float, delta: float, tasks=None):
        """``beta_t`` of Theorem 2 of 000 with the sequential sum of log dets."""
        log_dets = self.sequential_log_det_sum(train_X, train_Y, tasks)
        return b + sigma / np.sqrt(self.eta) * np.sqrt(2.0 * np.log(1.0 / delta) + log_dets)


def dense_sketch(oracle, train_X, train_Y, tasks, dictionary, probabilities, X, rtol=1e-10):
    r"""Paper 000, Section 3.2, transcribed densely: ``Phi~ = (G~^{1/2})^+ G~(x)`` with
    ``G~`` and ``G~(x)`` reweighted by ``1/sqrt(p)``; ``mu~`` and ``Gamma~`` as written,
    in the form that takes the oracle's prior mean ``c`` and per-observation noise
    ``Lambda`` (the exact posterior of the projected features, Lemma 8):
    ``mu~ = c + Phi~^T (Z Lambda^{-1} Z^T + I)^{-1} Z Lambda^{-1} (y - c)`` and
    ``Gamma~ = Gamma - Phi~^T Phi~ + Phi~^T (Z Lambda^{-1} Z^T + I)^{-1} Phi~`` with
    ``Z`` the embeddings of the scalar observations (``Lambda = eta I``: the paper's).

    A full-vector dictionary row contributes its ``n`` scalar columns ``(x, 0..n-1)``.
    Eigenvalues of ``G~`` below ``rtol`` times the largest are dropped from the
    pseudo-inverse. Returns the mean ``q x n`` and covariance ``(q n) x (q n)``
    (interleaved).
    """
    n = oracle.num_tasks
    train_X = np.asarray(train_X, dtype=np.float64)
    D = train_X[dictionary]
    if tasks is None:
        D_X, D_tasks = np.repeat(D, n, axis=0), np.tile(np.arange(n), len(dictionary))
        weights = np.repeat(1.0 / np.sqrt(probabilities), n)
    else:
        D_X, D_tasks = D, np.asarray(tasks)[dictionary]
        weights = 1.0 / np.sqrt(probabilities)

    def embedding_columns(points):  # G~(x) for every x of points: J x (len(points) n)
        full = oracle.gamma(D_X, points)  # J x n x P x n
        rows = full[np.arange(len(D_X)), D_tasks]  # J x P x n
        return weights[:, None] * rows.reshape(len(D_X), -1)

    G = oracle.observation_gram(D_X, D_tasks, D_X, D_tasks) * np.outer(weights, weights)
    root = scipy.linalg.sqrtm(G)
    root = np.real_if_close(root, tol=1e6).real
    # (G~^{1/2})^+ with singular values below sqrt(rtol) of the largest dropped, i.e.
    # the eigenvalues of G~ below rtol of the largest
    pinv_root = np.linalg.pinv(0.5 * (root + root.T), rcond=np.sqrt(rtol), hermitian=True)
    phi_train = pinv_root @ embedding_columns(train_X)  # J x (t n)
    Y = np.asarray(train_Y, dtype=np.float64)
    if tasks is None:
        Z, obs_tasks = phi_train, np.tile(np.arange(n), len(train_X))
    else:
        Z = phi_train.reshape(len(D_X), len(train_X), n)[:, np.arange(len(train_X)), tasks]
        obs_tasks = np.asarray(tasks)
    c, noise = oracle._mean(), oracle._noise(obs_tasks)
    A = (Z / noise) @ Z.T + np.eye(Z.shape[0])
    b = Z @ ((Y.reshape(-1) - c[obs_tasks]) / noise)
    phi = pinv_root @ embedding_columns(np.asarray(X, dtype=np.float64))  # J x (q n)
    q = len(X)
    mean = (phi.T @ np.linalg.solve(A, b)).reshape(q, n) + c
    prior = oracle.gamma(np.asarray(X, dtype=np.float64), np.asarray(X)).reshape(q * n, q * n)
    covariance = prior - phi.T @ phi + phi.T @ np.linalg.solve(A, phi)
    return mean, covariance


def linear_scalarization(weights, Y):
    """``lambda^T y`` over the last axis."""
    return (np.asarray(Y) * np.asarray(weights)).sum(-1)


def chebyshev_scalarization(weights, reference_point, Y):
    """``min_i lambda_i (y_i - z_i)`` over the last axis."""
    return (np.asarray(weights) * (np.asarray(Y) - np.asarray(reference_point))).min(-1)


def ucb(mean: np.ndarray, covariance: np.ndarray, scalarize, lipschitz: float, width: float):
    """``s(mu(x)) + L * width * sqrt(lambda_max(Gamma_t(x, x)))`` for one point."""
    largest = np.linalg.eigvalsh(covariance)[-1]
    return scalarize(mean) + lipschitz * width * np.sqrt(max(largest, 0.0))


def random_psd(n: int, rank: int, rng: np.random.Generator) -> np.ndarray:
    """``A^T A`` with ``A`` of shape ``rank x n`` uniform on [0, 1] (paper 000, Sec. 5)."""
    A = rng.uniform(size=(rank, n))
    return A.T @ A


def uniform_similarity(n: int, omega: float) -> np.ndarray:
    """``omega I + (1 - omega) 11^T / n``."""
    return omega * np.eye(n) + (1.0 - omega) * np.ones((n, n)) / n
