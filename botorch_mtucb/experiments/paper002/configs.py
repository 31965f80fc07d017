"""Paper 002's synthetic kernel bandits (Section 7, Appendix F) and its Table 1.

Test functions ``f = b sum_{i <= 20} w_i k(., z_i)`` with ``||f||_H = B = 10``, Gaussian
noise with ``sigma = 0.1`` and 100 actions uniform in ``[0, 1]^d`` per round. Repetition
``r`` of configuration ``j`` draws its test function from seed ``1000 j + r``; its action
sets and noise come from the runner's seed ``r``, shared by all methods. In
``002-loose`` the text of Appendix F.3 (``d = 3``) is followed where the caption of
Figure 7 says ``[0, 1]^4``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from botorch_mtucb.problems import KernelBanditEnvironment, RKHSTestFunction, make_kernel

RKHS_NORM = 10.0
NOISE_STD = 0.1
NUM_ACTIONS = 100
FAMILY_LABELS = {"rbf": "RBF", "matern52": "Matern 5/2", "matern32": "Matern 3/2"}

# Paper 002, Table 1 (d = 3, T = 1000, 10 repetitions): mean and sd of the cumulative
# regret; columns in the order of ``table_configs(3)``. Kernel CMM-UCB ran only 200 rounds.
PAPER_TABLE1: dict[str, list[tuple[float, float]]] = {
    "DMM-UCB": [
        (32.2, 20.9),
        (491.4, 117.1),
        (129.5, 45.6),
        (795.1, 206.0),
        (195.6, 78.0),
        (814.1, 344.4),
    ],
    "AMM-UCB": [
        (88.8, 6.1),
        (1206.2, 20.8),
        (197.0, 24.4),
        (1661.5, 90.1),
        (316.1, 51.1),
        (1741.2, 351.2),
    ],
    "AY-GP-UCB": [
        (136.9, 12.7),
        (1518.4, 38.9),
        (331.7, 45.2),
        (2382.4, 135.4),
        (546.0, 70.0),
        (2421.3, 568.5),
    ],
    "IGP-UCB": [
        (314.1, 110.5),
        (1433.0, 122.8),
        (553.3, 67.5),
        (1853.1, 105.7),
        (655.6, 67.4),
        (1707.5, 375.5),
    ],
    "Random": [
        (4282.4, 1015.4),
        (3872.4, 783.7),
        (4264.7, 778.0),
        (3677.5, 559.2),
        (4175.1, 681.0),
        (3442.0, 1080.4),
    ],
}


@dataclass(frozen=True)
class BanditConfig:
    """One synthetic kernel bandit: kernel family (``"rbf"``, ``"matern52"``,
    ``"matern32"``), lengthscale, dimension ``d``, and the bounds given to the
    algorithms (``assumed_*``; the truth is ``B = 10``, ``sigma = 0.1``).

    Example:
        >>> from botorch_mtucb.experiments.paper002.configs import BanditConfig
        >>> config = BanditConfig("matern52", 0.5, 3, assumed_noise=0.2)
        >>> config.label, config.slug
        ('Matern 5/2 l=0.5 (sigma=0.2, B=10)', 'matern52-l0.5-d3-s0.2-B10')
    """

    family: str
    lengthscale: float
    dim: int = 3
    assumed_norm: float = RKHS_NORM
    assumed_noise: float = NOISE_STD

    @property
    def label(self) -> str:
        """A short name, e.g. ``"RBF l=0.5"`` (the key of its problem in ``summary.json``)."""
        text = f"{FAMILY_LABELS[self.family]} l={self.lengthscale:g}"
        if self.assumed_norm != RKHS_NORM or self.assumed_noise != NOISE_STD:
            text += f" (sigma={self.assumed_noise:g}, B={self.assumed_norm:g})"
        return text

    @property
    def slug(self) -> str:
        """A directory name, e.g. ``"rbf-l0.5-d3"``."""
        text = f"{self.family}-l{self.lengthscale:g}-d{self.dim}"
        if self.assumed_norm != RKHS_NORM or self.assumed_noise != NOISE_STD:
            text += f"-s{self.assumed_noise:g}-B{self.assumed_norm:g}"
        return text


def table_configs(dim: int) -> list[BanditConfig]:
    """The six columns of Table 1 / Figures 2, 5, 6 for dimension ``dim``: RBF, Matern
    5/2 and Matern 3/2 kernels with lengthscales 0.5 and 0.2.

    Example:
        >>> from botorch_mtucb.experiments.paper002.configs import table_configs
        >>> [config.label for config in table_configs(3)][:2]
        ['RBF l=0.5', 'RBF l=0.2']
    """
    return [
        BanditConfig(family, lengthscale, dim)
        for family in ("rbf", "matern52", "matern32")
        for lengthscale in (0.5, 0.2)
    ]


# Figure 7: Matern 5/2, l = 0.5, d = 3, assumed (sigma, B) in {0.1, 0.2} x {10, 20}.
LOOSE_CONFIGS = [
    BanditConfig("matern52", 0.5, 3, assumed_norm=norm, assumed_noise=noise)
    for noise in (0.1, 0.2)
    for norm in (10.0, 20.0)
]


def config_folder(config: BanditConfig, horizon: int) -> str:
    """The sub-directory of a configuration's runs: the horizon is part of it because
    ``c`` and ``eta`` depend on ``T`` (the runner would otherwise resume a shorter run
    made with other parameters).

    Example:
        >>> from botorch_mtucb.experiments.paper002.configs import BanditConfig, config_folder
        >>> config_folder(BanditConfig("rbf", 0.5), 1000)
        'rbf-l0.5-d3-T1000'
    """
    return f"{config.slug}-T{horizon}"


def make_environment(config: BanditConfig, config_index: int, rep: int) -> KernelBanditEnvironment:
    """The bandit of repetition ``rep`` of configuration ``config_index``: a test
    function drawn from seed ``1000 config_index + rep`` (true ``B = 10``), noise
    ``sigma = 0.1``, 100 actions per round.

    Example:
        >>> from botorch_mtucb.experiments.paper002.configs import BanditConfig, make_environment
        >>> make_environment(BanditConfig("rbf", 0.5), 0, 0).dim
        3
    """
    generator = torch.Generator().manual_seed(1000 * config_index + rep)
    kernel = make_kernel(config.family, config.lengthscale)
    function = RKHSTestFunction.sample(kernel, config.dim, RKHS_NORM, generator=generator)
    return KernelBanditEnvironment(function, NOISE_STD, NUM_ACTIONS)
