r"""``load_state_dict`` for the fixed-kernel models: load, then rebuild the posterior.

A fixed-kernel model's ``state_dict`` holds what its posterior is computed from: the
kernel (data kernels' parameters and buffers, their classes, task covariances), the
training data (``train_X``, ``train_Y``, ``train_tasks``), the prior mean and the noise
variances (and, for the sketch, its dictionary). The factors computed from them
(Cholesky factors, the eigen-system of the task covariance, ``L^{-1} y``, a tracked
candidate set) are not in it: they are rebuilt from the loaded state, so that a loaded
model gives the posterior of the loaded parameters and data. The data may have another
number of rows than the receiving model's (the state of a grown model).

The checks and the rebuild run in the model's own load hooks (``_load_from_state_dict``
before anything of it is loaded, a ``load_state_dict`` post-hook after its kernel is),
so they run whether the model is loaded itself or as a submodule of what is loaded (an
``nn.ModuleList``, an acquisition function that holds the model).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch
from botorch.exceptions.errors import UnsupportedError
from torch import Tensor
from torch.nn import Module

from botorch_mtucb.kernels.task_checks import check_task_covariance
from botorch_mtucb.models.task_noise import per_task_values
from botorch_mtucb.utils.checks import check_tensor
from botorch_mtucb.utils.module_state import check_state_values


@dataclass
class _PendingLoad:
    """What a load in progress needs to finish or undo it."""

    backup: OrderedDict  # the model's state before the load (tensors cloned)
    noise: Tensor
    regularization: float
    candidates: dict | None
    error_msgs: list  # torch's list of the whole load: grows as modules fail
    errors_before: int
    assign: bool
    dtype: torch.dtype
    device: torch.device
    status: str = "loading"  # then "rebuilt" or "restored"


class RebuildOnLoadMixin:
    """``load_state_dict`` that accepts data of any size and rebuilds the posterior.

    For ``FixedKernelMultiTaskModel``: subclasses list the persistent buffers whose
    size follows the data in ``_RESIZABLE_BUFFERS`` and rebuild their posterior from
    the loaded state in ``_rebuild_state``; the constructor calls
    ``_register_rebuild_on_load``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.models import VectorValuedGP
        >>> X = torch.linspace(0, 1, 6, dtype=torch.float64).unsqueeze(-1)
        >>> short = RBFKernel().initialize(lengthscale=0.3)
        >>> grown = VectorValuedGP(X, X.sin().repeat(1, 2), short, torch.eye(2), 0.1)
        >>> model = VectorValuedGP(X[:2], X[:2].repeat(1, 2), RBFKernel(), torch.eye(2), 0.1)
        >>> _ = model.load_state_dict(grown.state_dict())  # other lengthscale, more rows
        >>> torch.equal(model.posterior(X).mean, grown.posterior(X).mean)
        True
        >>> box = torch.nn.ModuleList([model])  # also as a submodule
        >>> _ = box.load_state_dict(torch.nn.ModuleList([grown]).state_dict())
        >>> torch.equal(box[0].posterior(X).mean, grown.posterior(X).mean)
        True
    """

    _RESIZABLE_BUFFERS: tuple[str, ...] = ("train_X", "train_Y", "train_tasks")

    def _register_rebuild_on_load(self) -> None:
        """Rebuild after every load of this model, also as a submodule (constructor)."""
        self._pending_load: _PendingLoad | None = None
        self._outermost_load = False
        self._restoring = False
        self.register_load_state_dict_post_hook(_rebuild_after_load)

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False
    ):
        r"""Load the kernel, the data, the prior mean and the noise variances, then
        rebuild every factor of the posterior from them (``torch.nn.Module`` semantics
        otherwise).

        The training data may have any number of rows (the state of a model that
        grew by ``append_observations``). With ``strict=False`` the entries that the
        state lacks keep the receiving model's values, and the posterior is rebuilt
        from the mix (refused if it is inconsistent, e.g. ``train_X`` and ``train_Y``
        of different lengths). Entries of factors that earlier versions saved are
        ignored (they are rebuilt), and so is a missing kernel structure (states saved
        before it was stored). If loading or rebuilding fails the model is left as it
        was. The same checks and rebuild run when the model is a submodule of what is
        loaded (``parent.load_state_dict``); there a state refused before or while
        loading the model leaves it as it was, while keys that PyTorch reports after
        every module was loaded (``strict=True``) leave it rebuilt from what it loaded,
        as PyTorch leaves the other modules.

        Args:
            state_dict: A ``state_dict()`` of a model of the same class and structure
                (kernel classes and terms, tasks, input dimension, kind of data).
            strict: As ``torch.nn.Module.load_state_dict``.
            assign: As ``torch.nn.Module.load_state_dict``; the model keeps its dtype
                and device.

        Returns:
            ``NamedTuple`` with ``missing_keys`` and ``unexpected_keys``, as torch.

        Raises:
            UnsupportedError: If this model, or the model whose state this is, is
                conditioned beyond its own data (``condition_on_observations`` with
                batches or other noise, ``fantasize``) or a ``subset_output``: load the
                state of (into) the model built from data, then condition it or take
                the subset again.
            ValueError: If the state is of another structure (kernel classes or terms,
                tasks, input dimension, full-vector versus task-indexed data) or holds
                invalid values (NaN anywhere, a non-finite kernel hyperparameter,
                non-finite data, task indices out of range, a task covariance that is
                not symmetric PSD, noise variances ``<= 0``), naming the entry.
            RuntimeError: As torch (missing or unexpected keys with ``strict=True``).
        """
        self._outermost_load = True
        try:
            return super().load_state_dict(state_dict, strict=strict, assign=assign)
        except Exception:
            pending = self._pending_load
            if pending is not None and pending.status != "restored":
                self._restore(pending)  # torch's key errors, or a submodule raised
            raise
        finally:
            self._pending_load = None
            self._outermost_load = False

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ) -> None:
        """Check the model's entries of ``state_dict`` (before any is loaded), keep a
        backup and load them, data buffers resized (the post-hook rebuilds)."""
        args = (local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        if self._restoring:
            super()._load_from_state_dict(state_dict, prefix, *args)
            return
        derived = self._non_persistent_buffers_set  # factors saved by earlier versions
        kept = {
            key: value
            for key, value in state_dict.items()
            if not (key.startswith(prefix) and key[len(prefix) :] in derived)
        }
        state = {key[len(prefix) :]: v for key, v in kept.items() if key.startswith(prefix)}
        if state:
            self._refuse_to_load("this model is", self)
            _refuse_derived_state(state)
            self._check_state(state, prefix)
            like = self.train_X
            self._pending_load = _PendingLoad(
                backup=OrderedDict(
                    (k, v.clone() if isinstance(v, Tensor) else v)
                    for k, v in self.state_dict().items()
                ),
                noise=self.noise_variances.clone(),
                regularization=self.regularization,
                candidates=getattr(self, "_candidates", None),
                error_msgs=error_msgs,
                errors_before=len(error_msgs),
                assign=bool(local_metadata.get("assign_to_params_buffers", False)),
                dtype=like.dtype,
                device=like.device,
            )
            self._resize_buffers(state)
        super()._load_from_state_dict(kept, prefix, *args)

    def _check_state(self, state: Mapping[str, Any], prefix: str) -> None:
        """The checks of a state before it is loaded (keys relative to the model)."""
        parameters = {name for name, _ in self.named_parameters()}
        check_state_values(state, parameters, prefix)
        self._check_state_structure(state)
        key = "kernel.task_covariances"
        for j, B in enumerate(state.get(key, ())):
            check_task_covariance(B, name=f"state_dict's {prefix}{key}[{j}]")
        structure = state.get("kernel._extra_state")
        self.kernel.check_loaded_structure(structure, f"state_dict's {prefix}kernel")

    def _restore(self, pending: _PendingLoad) -> None:
        """Put back the state from before the load and rebuild the posterior from it."""
        self._restoring = True
        try:
            self._resize_buffers(pending.backup)
            Module.load_state_dict(self, pending.backup, assign=True)  # our own clones
            self.to(device=pending.device, dtype=pending.dtype)
        finally:
            self._restoring = False
        self.regularization = pending.regularization
        self._set_noise_scale()
        for parameter in self.kernel.parameters():
            parameter.requires_grad_(False)
        self._candidates = pending.candidates  # tracked again by the rebuild
        self._rebuild_state()
        pending.status = "restored"

    def _rebuild_state(self) -> None:
        """Recompute every factor from the kernel, the data, the mean and the noise."""
        raise NotImplementedError  # pragma: no cover

    def _refuse_to_load(self, whose: str, model: Any) -> None:
        if getattr(model, "_conditioning", None) is not None:
            raise UnsupportedError(
                f"load_state_dict rebuilds a model from its own data, and {whose} "
                "conditioned beyond it (condition_on_observations with batches or other "
                "noise variances, or fantasize): load the state into a model built by "
                "the constructor, then condition that one again"
            )
        if getattr(model, "_output_tasks", None) is not None:
            raise UnsupportedError(
                f"load_state_dict rebuilds all tasks of a model, and {whose} a "
                "subset_output: load the state into the full model, then call "
                "subset_output again"
            )

    def _check_state_structure(self, state: Mapping[str, Tensor]) -> None:
        """The state's kernel, tasks, input dimension and kind of data are this model's."""
        own = self.kernel.task_covariances
        key = "kernel.task_covariances"
        if key in state and tuple(state[key].shape) != tuple(own.shape):
            raise ValueError(
                f"state_dict holds {tuple(state[key].shape)[0]} kernel term(s) on "
                f"{tuple(state[key].shape)[-1]} task(s) ({key}: {tuple(state[key].shape)}); "
                f"this model has {own.shape[0]} on {own.shape[-1]}: build a model with the "
                "same kernel structure to load it into"
            )
        n = self.num_tasks
        for name in ("prior_mean", "noise_variances"):
            if name in state and tuple(state[name].shape) != (n,):
                raise ValueError(
                    f"state_dict's {name} must hold one value per task ({n}), got shape "
                    f"{tuple(state[name].shape)}"
                )
        # task-indexed data come with train_tasks; a state without data (a kernel-only
        # state with strict=False) is of neither kind
        holds_data = "train_X" in state or "train_Y" in state
        if "train_tasks" in state and self._full_vector:
            raise ValueError(
                "state_dict is that of a model of task-indexed data, and this model holds "
                "full-vector data: load it into a model built on task-indexed data (the "
                "state holds train_tasks)"
            )
        if holds_data and "train_tasks" not in state and not self._full_vector:
            raise ValueError(
                "state_dict is that of a model of full-vector data, and this model holds "
                "task-indexed data: load it into a model built on full-vector data (the "
                "state holds training data without train_tasks)"
            )
        columns = n if self._full_vector else 1
        expected = {"train_X": self._input_dim, "train_Y": columns}
        for name, width in expected.items():
            if name in state and (state[name].dim() != 2 or state[name].shape[-1] != width):
                raise ValueError(
                    f"state_dict's {name} must be N x {width} for this model, got shape "
                    f"{tuple(state[name].shape)}"
                )

    def _resize_buffers(self, state: Mapping[str, Tensor]) -> None:
        """Give the data buffers the sizes of ``state``'s (dtype and device kept)."""
        for name in self._RESIZABLE_BUFFERS:
            local, value = self._buffers.get(name), state.get(name)
            if local is None or value is None or local.shape == value.shape:
                continue
            self._buffers[name] = torch.empty(value.shape, dtype=local.dtype, device=local.device)

    def _after_load(self, noise_before: Tensor, regularization_before: float) -> None:
        """Check the loaded values, refresh ``eta`` and ``S``, rebuild the posterior."""
        check_tensor(self.train_X, "state_dict's train_X", dim=2)
        check_tensor(self.train_Y, "state_dict's train_Y", dim=2)
        self._check_training_data(self.train_X, self.train_Y, self.train_tasks)
        per_task_values(self.prior_mean, self.num_tasks, "state_dict's prior_mean", False)
        per_task_values(self.noise_variances, self.num_tasks, "state_dict's noise_variances", True)
        for j, B in enumerate(self.kernel.task_covariances):
            check_task_covariance(B, name=f"state_dict's kernel.task_covariances[{j}]")
        if torch.equal(self.noise_variances, noise_before):
            self.regularization = regularization_before  # the number it was built with
        else:
            self.regularization = float(self.noise_variances.min())
        self._set_noise_scale()
        for parameter in self.kernel.parameters():
            parameter.requires_grad_(False)
        self._rebuild_state()


def _rebuild_after_load(model: RebuildOnLoadMixin, incompatible_keys) -> None:
    """``load_state_dict`` post-hook (after the model's kernel is loaded): rebuild the
    posterior from the loaded state, or restore the model's own state when loading it
    failed (torch raises the errors after the hooks) or the rebuild refuses it."""
    pending = model._pending_load
    if model._restoring or pending is None or pending.status != "loading":
        return
    try:
        if len(pending.error_msgs) > pending.errors_before:  # its entries failed to load
            model._restore(pending)
            return
        try:
            if pending.assign:
                model.to(device=pending.device, dtype=pending.dtype)
            model._after_load(pending.noise, pending.regularization)
        except Exception:
            model._restore(pending)
            raise
        pending.status = "rebuilt"
    finally:
        if not model._outermost_load:  # a submodule: nothing of the load is left to undo
            model._pending_load = None


def _refuse_derived_state(state: Mapping[str, Tensor]) -> None:
    """Refuse the state of a conditioned or subset model (not rebuilt from data)."""
    if any(key.startswith("_conditioning.") for key in state):
        raise UnsupportedError(
            "state_dict is that of a model conditioned beyond its own data "
            "(condition_on_observations with batches or other noise variances, or "
            "fantasize), which load_state_dict does not rebuild: load the state of the "
            "model it came from, then condition it again"
        )
    if "_output_tasks" in state:
        raise UnsupportedError(
            "state_dict is that of a subset_output model: load the state of the full "
            "model, then call subset_output again"
        )
