"""The martingale-mixture upper confidence bound as a BoTorch acquisition function.

Source: paper 002, Algorithm 1 (KernelUCB) with the bounds of Sections 5.3-5.5:
exact (Kernel CMM-UCB, eq. (10) / (12)), grid (Kernel DMM-UCB) and analytic (Kernel
AMM-UCB, Cor. 4.6). Built from a fitted BoTorch GP it is a drop-in for BoTorch's
``UpperConfidenceBound``; pending points follow GP-BUCB (Desautels, Krause & Burdick
2014, JMLR 15).
"""

from __future__ import annotations

from collections.abc import Sequence

from botorch.acquisition.acquisition import AcquisitionFunction
from botorch.acquisition.objective import PosteriorTransform
from botorch.models.model import Model
from torch import Tensor
from torch.nn import Module

from botorch_mtucb.acquisition.candidates import one_candidate_per_batch
from botorch_mtucb.acquisition.posterior_moments import check_posterior_transform
from botorch_mtucb.confidence.martingale_mixture import MartingaleMixtureBound
from botorch_mtucb.utils.checks import check_alphas, check_X_pending

DEFAULT_DELTA = 0.01
DMM_MULTIPLES = (0.1, 0.3, 1.0, 3.0, 10.0)  # DMM-UCB's grid / (sigma^2 / c) (paper 002, Sec. 7)


class MartingaleMixtureUCB(AcquisitionFunction):
    r"""``u_t(x)``: the martingale-mixture upper confidence bound of paper 002.

    ``u_t(x) = min_{alpha in A} mu_alpha(x) + R~_alpha / sqrt(alpha) rho_alpha(x)``, with
    ``A = (0, inf)`` (``alphas=None``: the exact bound of eq. (10), CMM-UCB), a grid
    (DMM-UCB) or one ``alpha`` (the analytic bound of Cor. 4.6, AMM-UCB). Gradients with
    respect to ``X`` flow through the bound at the minimizing ``alpha``, so
    ``optimize_acqf`` can maximize it over a box; ``optimize_acqf_discrete`` over a
    finite set. Values have the dtype of ``X`` (float32 or float64; internally float64).

    **From a fitted BoTorch GP** (the one-line swap for ``UpperConfidenceBound(gp,
    beta=...)``): ``MartingaleMixtureUCB(gp, delta=0.01)`` builds the bound with
    ``MartingaleMixtureBound.from_model`` in the model's transformed space (its input
    transform, ``Standardize``, its kernel and likelihood noise) and returns values in
    the user's outcome units, maximized over the user's input space. The acquisition
    is a snapshot: build a new one after refitting the model (as BoTorch's loop does).
    ``rkhs_norm_bound=None`` chooses ``B`` from the data (``norm_choice``: the
    confidence set is never empty; a practical choice without the theorem's
    guarantee); an explicit ``B`` (transformed units) keeps paper 002's guarantee and
    raises ``EmptyConfidenceSetError`` when the data contradict it.

    **From a prebuilt bound**: ``MartingaleMixtureUCB(bound)`` or
    ``MartingaleMixtureUCB.from_bound(bound, alphas)``; the acquisition's ``model`` is
    then ``None`` (the bound is not a BoTorch ``Model``).

    **Pending points** (``X_pending``, ``set_X_pending``; ``optimize_acqf(q=k,
    sequential=True)`` and ``optimize_acqf_discrete(q=k)``): GP-BUCB (Desautels et al.
    2014, Section 4): the mean and the radius of the bound are those of the real
    observations; only ``rho_alpha`` is computed as if the pending points had been
    observed, which pushes the next point away from them. Why the batch is still
    covered: paper 002's confidence sets hold with probability ``1 - delta`` for *any*
    sequence of query points that is predictable (each ``x_s`` chosen before ``y_s``
    is seen; Assumption 6.1's filtration). A batch chosen from the data up to ``t`` is
    such a sequence, so the sets built after its observations arrive (real data only;
    hallucinated values never enter them) stay valid, and so does every bound
    reported with them. The hallucinated score used to rank the 2nd, ..., k-th point is
    smaller than ``u_t(x)`` and is not itself a bound on ``f(x)``; it changes only
    which points are chosen. (Paper 002's regret bounds are for ``q = 1``; GP-BUCB's
    batch regret analysis needs a width inflated by ``exp(C)``, which is not applied.)
    Joint ``q > 1`` batches (``sequential=False``) raise a ``ValueError``.

    **posterior_transform**: ``None`` or a ``ScalarizedPosteriorTransform`` with one
    weight ``w`` and offset ``c`` (Ax passes ``w = -1`` for a minimization): the value
    is the upper bound of ``w f + c``, i.e. ``c + w u_t(x)`` for ``w > 0`` and ``c + w
    l_t(x)`` (the lower bound) for ``w < 0``; another transform raises
    ``UnsupportedError``.

    ``.to(device)`` moves the bound (it stays float64).

    Example:
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> from botorch.optim import optimize_acqf
        >>> from botorch_mtucb.acquisition import MartingaleMixtureUCB
        >>> train_X = torch.rand(10, 2, dtype=torch.float64)
        >>> train_Y = 50.0 + 10.0 * train_X.sum(-1, keepdim=True).sin()
        >>> gp = SingleTaskGP(train_X, train_Y)  # Standardize by default
        >>> acqf = MartingaleMixtureUCB(gp, delta=0.01)
        >>> bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
        >>> candidate, value = optimize_acqf(acqf, bounds, q=1, num_restarts=4,
        ...                                  raw_samples=64)
        >>> candidate.shape, bool(value > 40.0)  # in the units of train_Y
        (torch.Size([1, 2]), True)
        >>> batch, _ = optimize_acqf(acqf, bounds, q=3, num_restarts=4, raw_samples=64,
        ...                          sequential=True)  # GP-BUCB
        >>> batch.shape
        torch.Size([3, 2])
    """

    def __init__(
        self,
        model_or_bound: object,
        *,
        delta: float | None = None,
        rkhs_norm_bound: float | None = None,
        noise_std: float | None = None,
        alphas: float | Sequence[float] | Tensor | str | None = None,
        X_pending: Tensor | None = None,
        posterior_transform: PosteriorTransform | None = None,
        mixture_scale: float | None = None,
    ) -> None:
        r"""Build the acquisition.

        Args:
            model_or_bound: A fitted single-output exact BoTorch GP (``SingleTaskGP``
                with or without outcome and input transforms, fixed or learned noise;
                see ``models.single_output_data``), or a ``MartingaleMixtureBound``.
            delta: Confidence level in ``(0, 1)``; ``None``: 0.01 for a model. Not
                given with a bound (it has its own).
            rkhs_norm_bound: ``B > 0`` on ``||f_tilde||_H`` (transformed units);
                ``None`` chooses it from the data. Model only.
            noise_std: ``sigma > 0`` (transformed units); ``None`` takes the model's
                likelihood noise. Model only.
            alphas: ``None`` for the exact bound, a grid of ``alpha > 0`` (DMM-UCB) or
                a single ``alpha`` (AMM-UCB), in the bound's (transformed) units, or
                ``"DMM"`` (the grid ``{0.1, 0.3, 1, 3, 10} sigma^2 / c`` of paper 002,
                Section 7) or ``"AMM"`` (``alpha = sigma^2 / c``). Kept as a float64
                CPU tensor (not a buffer, so that ``.to(dtype)`` cannot round it).
            X_pending: ``m x d`` points chosen but not yet observed (GP-BUCB).
            posterior_transform: ``None`` or a ``ScalarizedPosteriorTransform`` with
                one weight.
            mixture_scale: ``c > 0`` of eq. (8) for a model (``None``: 1). Model only.

        Raises:
            TypeError: For a ``model_or_bound`` that is neither a bound nor a model the
                route reads (naming its type and what is accepted).
            ValueError: For non-positive or non-finite ``alphas``, an unknown string,
                ``delta``, ``rkhs_norm_bound``, ``noise_std`` or ``mixture_scale``
                given with a bound, a bad ``X_pending`` (shape ``m x d``, NaN/inf) or
                a model the route refuses (``MartingaleMixtureBound.from_model``).
            UnsupportedError: For a ``posterior_transform`` other than a
                ``ScalarizedPosteriorTransform``.
            EmptyConfidenceSetError: For an explicit ``rkhs_norm_bound`` that the
                model's data contradict.
        """
        Module.__init__(self)  # AcquisitionFunction.__init__ would need a Model
        if isinstance(model_or_bound, MartingaleMixtureBound):
            given = {"delta": delta, "rkhs_norm_bound": rkhs_norm_bound, "noise_std": noise_std}
            given["mixture_scale"] = mixture_scale
            extra = [name for name, value in given.items() if value is not None]
            if extra:
                raise ValueError(
                    f"{', '.join(extra)} must not be given with a MartingaleMixtureBound "
                    "(the bound fixes them); pass a BoTorch model to build a new bound"
                )
            bound = model_or_bound
            self.model = None  # no BoTorch Model (optimize_acqf(sequential=True) reads it)
        else:
            if not isinstance(model_or_bound, Model):
                raise TypeError(
                    "model_or_bound must be a fitted single-output BoTorch GP (e.g. "
                    "SingleTaskGP) or a MartingaleMixtureBound, got "
                    f"{type(model_or_bound).__name__}"
                )
            bound = MartingaleMixtureBound.from_model(
                model_or_bound,
                rkhs_norm_bound=rkhs_norm_bound,
                noise_std=noise_std,
                delta=DEFAULT_DELTA if delta is None else delta,
                mixture_scale=1.0 if mixture_scale is None else mixture_scale,
            )
            self.model = model_or_bound
        self.bound = bound
        self.alphas = _resolve_alphas(alphas, bound)
        self.posterior_transform = check_posterior_transform(posterior_transform, 1)
        self.set_X_pending(X_pending)

    @classmethod
    def from_bound(
        cls,
        bound: MartingaleMixtureBound,
        alphas: float | Sequence[float] | Tensor | str | None = None,
        X_pending: Tensor | None = None,
    ) -> MartingaleMixtureUCB:
        r"""The acquisition of a prebuilt ``MartingaleMixtureBound``.

        Args:
            bound: A ``MartingaleMixtureBound`` on the data seen so far.
            alphas, X_pending: As in the constructor.

        Raises:
            TypeError: If ``bound`` is not a ``MartingaleMixtureBound``.
            ValueError: For bad ``alphas`` or ``X_pending``.

        Example:
            >>> import torch
            >>> from gpytorch.kernels import RBFKernel
            >>> from botorch_mtucb.acquisition import MartingaleMixtureUCB
            >>> from botorch_mtucb.confidence import MartingaleMixtureBound
            >>> train_X = torch.rand(10, 2, dtype=torch.float64)
            >>> bound = MartingaleMixtureBound(train_X, train_X[:, :1].sin(), RBFKernel(),
            ...                                10.0, 0.1, 0.01)
            >>> acqf = MartingaleMixtureUCB.from_bound(bound, alphas="DMM")
            >>> [round(a, 6) for a in acqf.alphas.tolist()]  # multiples of 0.1^2
            [0.001, 0.003, 0.01, 0.03, 0.1]
        """
        if not isinstance(bound, MartingaleMixtureBound):
            raise TypeError(f"bound must be a MartingaleMixtureBound, got {type(bound).__name__}")
        return cls(bound, alphas=alphas, X_pending=X_pending)

    def set_X_pending(self, X_pending: Tensor | None = None) -> None:
        """Set (or clear, with ``None``) the ``m x d`` pending points (GP-BUCB).

        Raises:
            TypeError, ValueError: For ``X_pending`` that is not ``None`` or an
                ``m x d`` floating tensor without NaN/inf.
        """
        self.X_pending = check_X_pending(X_pending, self.bound.train_X.shape[-1])

    @one_candidate_per_batch
    def forward(self, X: Tensor) -> Tensor:
        r"""Evaluate ``u_t`` at ``X``.

        Args:
            X: ``batch x 1 x d`` candidates (``ValueError`` for another shape, naming
                it: ``q = 1`` is required).

        Returns:
            A ``batch`` tensor of upper confidence bounds (the user's units of ``f``).
        """
        X = X.squeeze(-2)
        transform = self.posterior_transform
        if transform is None:
            return self.bound.upper(X, alphas=self.alphas, X_pending=self.X_pending)  # batch
        weight = float(transform.weights.reshape(()))
        side = self.bound.upper if weight >= 0 else self.bound.lower
        return transform.offset + weight * side(X, alphas=self.alphas, X_pending=self.X_pending)

    def __repr__(self) -> str:
        kind = "exact" if self.alphas is None else f"alphas={self.alphas.tolist()}"
        return f"{type(self).__name__}({kind}, t={self.bound.num_observations})"


def _resolve_alphas(
    alphas: float | Sequence[float] | Tensor | str | None, bound: MartingaleMixtureBound
) -> Tensor | None:
    """``None``, the checked alphas, or DMM's / AMM's alphas of ``bound``."""
    if isinstance(alphas, str):
        multiples = {"DMM": DMM_MULTIPLES, "AMM": (1.0,)}.get(alphas)
        if multiples is None:
            raise ValueError(
                f"alphas must be None, 'DMM', 'AMM', a positive number or a sequence of "
                f"them, got {alphas!r}"
            )
        alphas = [m * bound.base_alpha for m in multiples]
    return None if alphas is None else check_alphas(alphas)
