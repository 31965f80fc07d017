"""Paper 002's KernelUCB with its confidence rules (martingale mixtures, AY-GP-UCB,
IGP-UCB), the factory of the paper's named methods, and the random baseline."""
