"""Paper 000's algorithms: scalarized multi-task kernelized bandits (MT-KB, MT-BKB, their
independent-task baselines and MOBO's random-scalarization UCB)."""
