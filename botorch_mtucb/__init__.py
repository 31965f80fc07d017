"""botorch-mtucb: multi-task kernels, confidence widths with regret guarantees and
martingale-mixture confidence bounds as a BoTorch / GPyTorch plugin."""

__version__ = "0.1.0"
