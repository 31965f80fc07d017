"""The papers' experiments and the command line (``python -m botorch_mtucb``).

* ``cli``: the commands ``run``, ``reproduce NAME``, ``list`` (and ``benchmark NAME``,
  given the benchmarks' catalogue by ``botorch_mtucb.__main__``).
* ``registry``: the named experiments, their options and ``run_experiment``;
  ``catalogue``: their names and descriptions, read without importing them.
* ``run_directory``: an experiment's output directory (``RunDirectory``: every file's
  path, the lock of ``output_lock``, the claim of ``experiment.json``).
* ``runs``: ``run_methods``, several methods over repetitions, every round on disk;
  ``parallel``, ``units`` and ``backends`` run them on worker processes or Ray.
* ``summary``: the one ``summary.json`` schema; ``tables``: printed tables and
  ``curves.csv``; ``plots``: curve plots on a ``matplotlib`` ``Figure``.
* ``paper000``, ``paper001``, ``paper002``: each paper's methods, experiments and plots;
  importing one registers its experiments.
"""
