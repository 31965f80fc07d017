"""The papers' experiments and the command line (``python -m botorch_mtucb``).

* ``cli``: the commands ``run``, ``reproduce NAME``, ``list`` (and ``benchmark NAME``,
  given the benchmarks' catalogue by ``botorch_mtucb.__main__``).
* ``registry``: the named experiments and ``run_experiment`` (output directory, settings
  check, resumption).
* ``runs``: ``run_methods``, several methods over repetitions, every round on disk.
* ``report``: the one ``summary.json`` schema, ``curves.csv``, tables, plots, thread
  pinning and option checks.
* ``paper000``, ``paper001``, ``paper002``: each paper's methods, experiments and plots;
  importing one registers its experiments.
"""
