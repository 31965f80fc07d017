"""Random streams and tie-breaking.

Every random draw of a run comes from a CPU ``torch.Generator`` seeded from a key
``(seed, index, stream)``: the repetition's seed, a counter (the round ``t``, or the
number of dictionary resamplings of a sketch) and a stream number that separates
independent consumers (the environment's noise, the policy's own draws). Two methods run
with the same seed therefore see the same noise in every round (common random numbers),
and a resumed run redraws exactly what an uninterrupted one drew.

The key is mapped to a 63-bit seed by a fixed linear mix with three primes. (A
``numpy.random.SeedSequence`` hash would be the textbook choice; it is not used because
it would change every number the experiments have published: the mix is part of the
experiments' definition.)
"""

from __future__ import annotations

import torch
from torch import Tensor

ENVIRONMENT_STREAM = 0
POLICY_STREAM = 1

_SEED_PRIME, _INDEX_PRIME, _STREAM_PRIME = 1_000_003, 7_919, 104_729


def stream_seed(seed: int, index: int, stream: int = 0) -> int:
    """The 63-bit seed of key ``(seed, index, stream)``.

    ``(seed * 1000003 + index * 7919 + stream * 104729) mod 2^63``.

    Example:
        >>> from botorch_mtucb.utils.random import ENVIRONMENT_STREAM, stream_seed
        >>> stream_seed(3, 10, ENVIRONMENT_STREAM)
        3079199
    """
    return (int(seed) * _SEED_PRIME + int(index) * _INDEX_PRIME + int(stream) * _STREAM_PRIME) % (
        2**63
    )


def round_generator(seed: int, t: int, stream: int) -> torch.Generator:
    """A CPU generator seeded from ``(seed, round t, stream)`` (see ``stream_seed``).

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils.random import POLICY_STREAM, round_generator
        >>> g = round_generator(0, 5, POLICY_STREAM)
        >>> torch.rand(2, generator=g).shape
        torch.Size([2])
    """
    generator = torch.Generator()
    generator.manual_seed(stream_seed(seed, t, stream))
    return generator


def argmax_random_ties(
    values: Tensor, generator: torch.Generator | None = None, rtol: float | None = None
) -> int:
    r"""Index of a maximum of ``values`` (``A``), ties broken uniformly at random.

    Entries within ``rtol * max(|values|)`` of the maximum are ties (default
    ``rtol = 1000 * eps`` of the dtype: differences at the level of round-off). Exact
    ties are common under the prior: on a task without data and arms of equal norm
    (unit-norm MHC features, the synthetic sphere), ``mu = 0`` and ``sigma = ||x||``
    for every arm, so a plain ``torch.argmax`` picks whichever arm's ``||x||^2``
    happens to round highest: the same arm in every repetition, which biases the
    comparison of methods (paper 001's ``argmax`` in eq. 7 does not prefer any tied
    arm).

    Args:
        values: A 1-d tensor (e.g. ``mu + width * sigma`` over a task's arms).
        generator: Source of the random draw among ties; ``None``: the first tie.
            A draw is made only when there are at least two ties.
        rtol: Relative tolerance (``>= 0``); default ``1000 * torch.finfo(dtype).eps``.

    Returns:
        The index (int).

    Raises:
        ValueError: If ``values`` is not a non-empty 1-d tensor, has NaN entries, or
            ``rtol < 0``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils import argmax_random_ties
        >>> values = torch.tensor([1.0, 3.0, 3.0, 2.0])
        >>> argmax_random_ties(values)  # no generator: the first tie
        1
        >>> argmax_random_ties(values, torch.Generator().manual_seed(0)) in (1, 2)
        True
    """
    if not isinstance(values, Tensor) or values.dim() != 1 or values.numel() == 0:
        raise ValueError(
            f"values must be a non-empty 1-d tensor, got {getattr(values, 'shape', values)}"
        )
    if torch.isnan(values).any():
        raise ValueError("values must not contain NaN")
    if rtol is None:
        rtol = 1000 * torch.finfo(values.dtype).eps if values.is_floating_point() else 0.0
    if not rtol >= 0:
        raise ValueError(f"rtol must be >= 0, got {rtol}")
    top = values.max()
    if torch.isinf(top):
        ties = (values == top).nonzero().reshape(-1)
    else:
        scale = values[torch.isfinite(values)].abs().max()
        ties = (values >= top - rtol * scale).nonzero().reshape(-1)
    if ties.numel() == 1 or generator is None:
        return int(ties[0])
    return int(ties[torch.randint(ties.numel(), (1,), generator=generator)])
