"""Paper 001's algorithms: task-indexed multitask regression, MT-UCB, AdaMT-UCB and
multitask active learning."""
