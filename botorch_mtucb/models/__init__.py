"""BoTorch models: the exact vector-valued GP and its Nystrom sketch (MT-BKB), the
posterior they keep at a finite candidate set, and (``botorch_readers``) the readers
of fitted BoTorch models that ``VectorValuedGP.from_model`` and the confidence layer use."""

from botorch_mtucb.models.candidate_posterior import CandidatePosterior
from botorch_mtucb.models.nystrom_vector_valued_gp import NystromVectorValuedGP
from botorch_mtucb.models.vector_valued_gp import VectorValuedGP

__all__ = [
    "CandidatePosterior",
    "NystromVectorValuedGP",
    "VectorValuedGP",
]
