r"""What a martingale-mixture bound's ``state_dict`` holds, and the rebuild after loading.

A bound of paper 002 is defined by its kernel (and input transform), its data and a few
numbers: ``rkhs_norm_bound``, ``noise_std``, ``delta``, ``mixture_scale`` (and the
outcome map of a bound built from a model). Its ``state_dict`` holds exactly these: the
kernel's and the transform's parameters and buffers, the data buffers, and the numbers
as the module's extra state (``get_extra_state``: a dict of Python floats and booleans,
which ``torch.save`` and ``torch.load(weights_only=True)`` accept). Everything derived
from them (the Gram matrix, its Cholesky factors and spectrum, the distinct inputs, the
emptiness check) is not in the state: it is recomputed from the loaded kernel, data and
numbers when ``load_state_dict`` has loaded them, so a loaded bound gives the values of
the bound whose state it loaded, whatever its own kernel hyperparameters and number of
observations were (the data buffers are resized to the loaded ones).

A state dict carries no class, so the extra state also holds the structure of the
kernel and the input transform (``utils.module_state.module_structure``: the class of
each of their modules, Matern's ``nu``; the multi-task bound's kernel stores its own).
Before anything is loaded, a state is refused with a ``ValueError`` that names the entry
if it is of other classes (an RBF state into a Matern bound, an input transform on one
side only; a state saved without the structure is not compared), holds NaN anywhere or
a non-finite kernel hyperparameter, or (multi-task bound) a task covariance that the
constructor refuses; the bound is then left as it was. A state that fails later (other
shapes, as PyTorch reports them; numbers or data that the rebuild refuses) leaves the
bound unusable: it refuses to give values until a complete state is loaded. Loading
does not raise ``EmptyConfidenceSetError`` (the loaded numbers and data are those of a
built bound, or the next bound raises it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor
from torch.nn import Module

from botorch_mtucb.utils.module_state import (
    check_state_values,
    check_structure,
    module_structure,
)


class RebuiltOnLoad(Module):
    r"""A module whose state is its defining tensors and numbers, rebuilt after loading.

    Subclasses name their data buffers (``DATA_BUFFERS``: resized to the loaded shapes),
    defining numbers (``DEFINING_NUMBERS``: attributes kept in the extra state) and the
    submodules whose classes the extra state records (``STRUCTURE_MODULES``), check a
    state before it is loaded in ``_check_state``, validate loaded numbers in
    ``_set_defining_numbers`` and recompute everything else in ``_rebuild`` (called
    after every successful ``load_state_dict``, also when the bound is a submodule of
    what is loaded).

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence import MartingaleMixtureBound
        >>> X = torch.rand(8, 1, dtype=torch.float64)
        >>> kernel = RBFKernel()
        >>> kernel.lengthscale = 0.3
        >>> source = MartingaleMixtureBound(X, X.sin(), kernel, 5.0, 0.1, 0.01)
        >>> target = MartingaleMixtureBound(X[:3], X[:3].sin(), RBFKernel(), 2.0, 0.2, 0.1)
        >>> _ = target.load_state_dict(source.state_dict())
        >>> target.num_observations, target.rkhs_norm_bound
        (8, 5.0)
        >>> bool(torch.equal(target.upper(X), source.upper(X)))
        True
    """

    DATA_BUFFERS: tuple[str, ...] = ()
    DEFINING_NUMBERS: tuple[str, ...] = ()
    STRUCTURE_MODULES: tuple[str, ...] = ()

    def __init__(self) -> None:
        super().__init__()
        self._load_errors: list[str] | None = None
        self.register_load_state_dict_post_hook(_rebuild_after_load)

    # ------------------------------------------------------------ subclass hooks
    def _set_defining_numbers(self, numbers: Mapping[str, float | bool]) -> None:
        """Validate and set the numbers of ``DEFINING_NUMBERS``."""
        raise NotImplementedError

    def _rebuild(self) -> None:
        """Recompute everything derived from the kernel, the data and the numbers."""
        raise NotImplementedError

    # ------------------------------------------------------------ state
    def get_extra_state(self) -> dict[str, Any]:
        """The defining numbers (``DEFINING_NUMBERS``) as Python scalars and, under
        ``"structure"``, the classes of the ``STRUCTURE_MODULES`` (lists of strings)."""
        state: dict[str, Any] = {name: getattr(self, name) for name in self.DEFINING_NUMBERS}
        if self.STRUCTURE_MODULES:
            state["structure"] = self._structure()
        return state

    def set_extra_state(self, state: object) -> None:
        """Set the defining numbers from a loaded state (validated as the constructor
        does).

        Raises:
            ValueError: If ``state`` is not a dict with the keys of ``DEFINING_NUMBERS``
                (and ``"structure"``, optional), a number is out of its range or the
                structure is not this bound's.
        """
        expected = set(self.DEFINING_NUMBERS)
        keys = set(state) if isinstance(state, Mapping) else None
        if keys is None or not (keys == expected or keys == expected | {"structure"}):
            got = sorted(state) if isinstance(state, Mapping) else type(state).__name__
            raise ValueError(
                f"the extra state of a {type(self).__name__} must be a dict with the keys "
                f"{sorted(expected)} (and 'structure'), got {got}; load the state_dict of a "
                "bound of the same class"
            )
        self._check_structure(state.get("structure"), "state_dict's ")
        self._set_defining_numbers(state)

    def _structure(self) -> dict[str, list[str]]:
        return {name: module_structure(getattr(self, name)) for name in self.STRUCTURE_MODULES}

    def _check_structure(self, loaded: object, whose: str) -> None:
        """Refuse a stored structure of other classes (``None``: not stored, accepted)."""
        if loaded is None:
            return
        if not isinstance(loaded, Mapping) or set(loaded) != set(self.STRUCTURE_MODULES):
            raise ValueError(
                f"{whose}structure of a {type(self).__name__} must be a dict with the keys "
                f"{list(self.STRUCTURE_MODULES)}, got {type(loaded).__name__}"
            )
        own = self._structure()
        for name in self.STRUCTURE_MODULES:
            check_structure(loaded[name], own[name], f"{whose}{name}")

    def _check_state(self, state: Mapping[str, Any], prefix: str) -> None:
        """Refuse a state before anything of it is loaded (keys relative to the bound):
        NaN, a non-finite parameter, a structure of other classes. Subclasses extend."""
        parameters = {name for name, _ in self.named_parameters()}
        check_state_values(state, parameters, prefix)
        extra = state.get("_extra_state")
        if isinstance(extra, Mapping):
            self._check_structure(extra.get("structure"), f"state_dict's {prefix}")

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ) -> None:
        own = {key[len(prefix) :]: v for key, v in state_dict.items() if key.startswith(prefix)}
        self._check_state(own, prefix)  # refused: nothing is loaded, the bound stays usable
        for name in self.DATA_BUFFERS:  # the data may have another number of rows
            loaded, own = state_dict.get(prefix + name), self._buffers.get(name)
            if isinstance(loaded, Tensor) and own is not None and loaded.shape != own.shape:
                self._buffers[name] = torch.empty(loaded.shape, dtype=own.dtype, device=own.device)
        self._load_errors = error_msgs  # children append to it: read after they are loaded
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )

    def _check_loaded(self) -> None:
        """Raise if the last ``load_state_dict`` failed (the bound is half loaded)."""
        if self._load_errors is not None:
            raise RuntimeError(
                f"this {type(self).__name__} is unusable: its last load_state_dict failed "
                f"({'; '.join(self._load_errors)[:300]}), so its kernel, data and numbers "
                "may come from two bounds. Load the complete state_dict of a bound of the "
                "same structure, or build a new bound"
            )


def _rebuild_after_load(module: RebuiltOnLoad, incompatible_keys) -> None:
    """``load_state_dict`` post-hook: rebuild the derived state, or mark the bound
    unusable when loading failed (PyTorch raises the error after the hooks)."""
    errors = module._load_errors
    module._load_errors = list(errors) if errors else None
    if module._load_errors is None:
        try:
            module._rebuild()
        except Exception as error:
            module._load_errors = [f"{type(error).__name__}: {error}"]
            raise
