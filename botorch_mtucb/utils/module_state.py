r"""What a ``state_dict`` must satisfy before a module that rebuilds from it loads it.

The fixed-kernel models and the martingale-mixture bounds keep only their defining
tensors in ``state_dict`` and rebuild everything else after ``load_state_dict``. A
``state_dict`` carries no class: the state of an ``RBFKernel`` loads into a
``MaternKernel`` (the same parameter names) and a NaN lengthscale loads like any other.
These checks run on the state *before* anything is loaded, so that a refused state leaves
the module as it was:

* ``check_state_values``: no NaN in any floating entry and no inf in a parameter (a
  kernel's raw hyperparameters; buffers such as a constraint's ``upper_bound`` may be
  infinite);
* ``module_structure`` / ``check_structure``: the class of every submodule of a kernel
  (or input transform), with the attributes that change its values without being in the
  state (Matern's ``nu``, a polynomial kernel's ``power``), stored in the extra state by
  the modules that own the kernel and compared on loading.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from gpytorch.priors import Prior
from torch import Tensor
from torch.nn import Module

# Attributes of GPyTorch kernels that change their values and are not in the state.
STRUCTURAL_ATTRIBUTES = ("nu", "power")


def module_structure(module: Module | None) -> list[str]:
    """The structure of ``module``: ``"path=ClassName"`` for it (path ``.``) and each
    submodule, ``nu`` / ``power`` appended where a module has them; priors are left out
    (they do not change what a fixed kernel computes). ``[]`` for ``None``.

    Example:
        >>> from gpytorch.kernels import MaternKernel, ScaleKernel
        >>> from botorch_mtucb.utils.module_state import module_structure
        >>> module_structure(ScaleKernel(MaternKernel(nu=1.5)))[:2]
        ['.=ScaleKernel', 'base_kernel=MaternKernel(nu=1.5)']
    """
    if module is None:
        return []
    entries: list[str] = []
    priors: list[str] = []
    for path, submodule in module.named_modules():
        if isinstance(submodule, Prior) or any(path.startswith(p + ".") for p in priors):
            priors.append(path)
            continue
        name = type(submodule).__name__
        for attribute in STRUCTURAL_ATTRIBUTES:
            value = submodule.__dict__.get(attribute)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                name += f"({attribute}={value:g})"
        entries.append(f"{path or '.'}={name}")
    return entries


def check_structure(loaded: object, own: list[str], name: str) -> None:
    """Refuse a state whose module structure ``loaded`` differs from ``own``.

    Args:
        loaded: The structure stored in the state (``module_structure`` of the module
            it was saved from), or ``None`` for a state saved before structures were
            stored (accepted: nothing to compare).
        own: ``module_structure`` of the receiving module.
        name: What ``loaded`` is, for the message (e.g. ``"state_dict's kernel"``).

    Raises:
        ValueError: If ``loaded`` is not a list of strings, or not ``own``.

    Example:
        >>> from gpytorch.kernels import MaternKernel, RBFKernel
        >>> from botorch_mtucb.utils.module_state import check_structure, module_structure
        >>> try:
        ...     check_structure(module_structure(RBFKernel()), module_structure(MaternKernel()),
        ...                     "state_dict's kernel")
        ... except ValueError as error:
        ...     print(str(error)[:67])
        state_dict's kernel is of other classes: .=RBFKernel where this one
    """
    if loaded is None:
        return
    if not isinstance(loaded, (list, tuple)) or not all(isinstance(e, str) for e in loaded):
        raise ValueError(
            f"{name}'s structure must be a list of strings ('path=ClassName', as saved by "
            f"state_dict), got {type(loaded).__name__}"
        )
    loaded = list(loaded)
    if loaded == own:
        return
    pairs = list(zip(loaded, own))
    theirs, mine = next(((a, b) for a, b in pairs if a != b), (None, None))
    if theirs is None:  # one is a prefix of the other
        longer = loaded if len(loaded) > len(own) else own
        theirs = loaded[len(pairs)] if longer is loaded else "nothing"
        mine = own[len(pairs)] if longer is own else "nothing"
    raise ValueError(
        f"{name} is of other classes: {theirs} where this one has {mine} (state: "
        f"{', '.join(loaded) or 'nothing'}); a state_dict holds values, not classes, so it "
        "loads only into a module built with the same classes (kernels and their "
        "constraints, Matern nu, input transform)"
    )


def check_state_values(
    state: Mapping[str, object], parameters: Collection[str], prefix: str = ""
) -> None:
    """Refuse NaN in a floating tensor of ``state`` and inf in a parameter.

    Args:
        state: A module's entries of a ``state_dict``, keys relative to the module.
        parameters: The names (relative keys) of the module's parameters, e.g. a
            kernel's ``raw_lengthscale`` (``dict(module.named_parameters())``).
        prefix: The module's prefix in the ``state_dict``, for the message.

    Raises:
        ValueError: Naming the first such entry.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils.module_state import check_state_values
        >>> state = {"kernel.raw_lengthscale": torch.tensor([[float("nan")]])}
        >>> try:
        ...     check_state_values(state, {"kernel.raw_lengthscale"})
        ... except ValueError as error:
        ...     print(str(error)[:45])
        state_dict's kernel.raw_lengthscale holds NaN
    """
    for key, value in state.items():
        if not isinstance(value, Tensor) or not value.is_floating_point():
            continue
        if key in parameters and not value.isfinite().all():
            what = "NaN" if value.isnan().any() else "inf"
            raise ValueError(
                f"state_dict's {prefix}{key} holds {what}: the parameters of a loaded state "
                "(a kernel's hyperparameters) must be finite; load the state of a module "
                "with finite hyperparameters"
            )
        if value.isnan().any():
            raise ValueError(
                f"state_dict's {prefix}{key} holds NaN: load a state without NaN (data, "
                "covariances and constraint bounds are numbers)"
            )
