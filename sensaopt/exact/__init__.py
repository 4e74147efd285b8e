"""Exact models: one time-indexed formulation (``models/formulation.md``), built by
:mod:`sensaopt.exact.model.builder` on any backend of :mod:`sensaopt.solvers` and solved
by the pipeline of :mod:`sensaopt.exact.pipeline` from a warm start its caller gives.
This layer imports no policy and no simulator: the public entries that simulate the
default warm start (:func:`sensaopt.solve.solve_cpsat`, :func:`sensaopt.solve.solve_milp`,
``solve(..., solver=...)``) and the rolling-horizon policies (:mod:`sensaopt.rolling`)
sit in the layer above both."""
