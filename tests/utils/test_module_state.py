"""The checks of a state before it is loaded: the classes of a kernel's modules (priors
left out, Matern's nu and a polynomial power kept), their comparison, and NaN / non-finite
parameters named by key."""

from __future__ import annotations

import pytest
import torch
from botorch.models import SingleTaskGP
from gpytorch.kernels import MaternKernel, PolynomialKernel, RBFKernel, ScaleKernel

from botorch_mtucb.utils.module_state import (
    check_state_values,
    check_structure,
    module_structure,
)


def test_module_structure_names_every_module_but_the_priors():
    assert module_structure(ScaleKernel(MaternKernel(nu=0.5))) == [
        ".=ScaleKernel",
        "base_kernel=MaternKernel(nu=0.5)",
        "base_kernel.raw_lengthscale_constraint=Positive",
        "base_kernel.raw_lengthscale_constraint._transform=Softplus",
        "raw_outputscale_constraint=Positive",
    ]
    X = torch.rand(4, 2, dtype=torch.float64)
    botorch_kernel = SingleTaskGP(X, X[:, :1]).covar_module  # LogNormalPrior, GreaterThan
    assert module_structure(botorch_kernel) == [
        ".=RBFKernel",
        "raw_lengthscale_constraint=GreaterThan",
    ]
    assert module_structure(PolynomialKernel(power=3))[0] == ".=PolynomialKernel(power=3)"
    assert module_structure(None) == []


def test_check_structure_accepts_the_same_and_a_missing_one():
    own = module_structure(RBFKernel())
    check_structure(list(own), own, "state_dict's kernel")
    check_structure(tuple(own), own, "state_dict's kernel")
    check_structure(None, own, "state_dict's kernel")  # saved before structures were stored
    with pytest.raises(ValueError, match=r"kernel is of other classes: \.=MaternKernel\(nu=2.5\) "
                       r"where this one has \.=RBFKernel"):  # fmt: skip
        check_structure(module_structure(MaternKernel()), own, "state_dict's kernel")
    with pytest.raises(ValueError, match="base_kernel=RBFKernel where this one has nothing"):
        check_structure(module_structure(ScaleKernel(RBFKernel())), [".=ScaleKernel"], "k")
    with pytest.raises(ValueError, match="nothing where this one has"):
        check_structure([], own, "state_dict's input_transform")
    with pytest.raises(ValueError, match="must be a list of strings"):
        check_structure("RBFKernel", own, "state_dict's kernel")


def test_check_state_values_names_nan_anywhere_and_inf_in_parameters():
    state = {
        "kernel.raw_lengthscale": torch.tensor([[0.3]]),
        "kernel.raw_lengthscale_constraint.upper_bound": torch.tensor(float("inf")),
        "train_tasks": torch.tensor([0, 1]),
    }
    parameters = {"kernel.raw_lengthscale"}
    check_state_values(state, parameters)  # an infinite constraint bound is a number
    for value in (float("nan"), float("inf"), -float("inf")):
        bad = dict(state, **{"kernel.raw_lengthscale": torch.tensor([[value]])})
        word = "NaN" if value != value else "inf"
        with pytest.raises(
            ValueError, match=rf"state_dict's 0\.kernel\.raw_lengthscale holds {word}"
        ):
            check_state_values(bad, parameters, prefix="0.")
    nan_data = dict(state, train_X=torch.tensor([[float("nan")]]))
    with pytest.raises(ValueError, match="state_dict's train_X holds NaN"):
        check_state_values(nan_data, parameters)
