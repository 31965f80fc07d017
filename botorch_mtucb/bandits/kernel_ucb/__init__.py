"""Paper 002's kernel UCB with martingale-mixture bounds, and its baselines."""
