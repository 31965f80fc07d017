"""Paper 002's martingale-mixture confidence bounds (exact, grid and analytic).

One bound, ``bound_base.MartingaleMixtureBoundBase`` (data, numbers, emptiness, pending
points, state, the evaluation), with pluggable spectra: ``spectra`` (the spectrum object
a bound holds; ``DenseSpectrum`` for multi-task Gram matrices), ``gram_cache_spectrum``
(``GramCacheSpectrum`` for one task, whose exact bound after new data reads the factors at
a lattice of alphas: ``factored_dual`` with ``shift_invert_lanczos``) and ``kronecker`` (``K_t (x) B`` for one ICM term and full vectors, with its
dual). Its subclasses: ``bound`` (``MartingaleMixtureBound``, one task, ``from_model``)
and ``multi_task_bound`` (``MultiTaskMartingaleMixtureBound``, multi-task kernels). The
parts they compose: ``radius`` (eq. (8) and Cor. 4.3), ``alpha_search`` (the dual of
eq. (12)), ``gram_cache`` (the Cholesky factors of ``K_t + alpha I``, Appendix E.2),
``emptiness`` (the empty-set test of Lemma 4.2 and its error), ``norm_choice`` (a norm
bound chosen from the data, for BoTorch models), ``hallucination`` (pending points,
GP-BUCB), ``repeated_inputs`` (the spectrum through the distinct inputs) and ``state``
(what a bound's ``state_dict`` holds and the rebuild after ``load_state_dict``).
"""

from botorch_mtucb.confidence.martingale_mixture.bound import MartingaleMixtureBound
from botorch_mtucb.confidence.martingale_mixture.emptiness import EmptyConfidenceSetError
from botorch_mtucb.confidence.martingale_mixture.multi_task_bound import (
    MultiTaskMartingaleMixtureBound,
)
from botorch_mtucb.confidence.martingale_mixture.norm_choice import choose_rkhs_norm_bound

__all__ = [
    "EmptyConfidenceSetError",
    "MartingaleMixtureBound",
    "MultiTaskMartingaleMixtureBound",
    "choose_rkhs_norm_bound",
]
