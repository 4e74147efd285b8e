"""Exact models: one time-indexed formulation (``models/formulation.md``), built by
:mod:`sensaopt.exact.model.builder` on any backend of :mod:`sensaopt.solvers` and solved by
CP-SAT (:func:`sensaopt.exact.cpsat.solve_cpsat`) or MILP with HiGHS or CBC
(:func:`sensaopt.exact.milp.solve_milp`), plus rolling-horizon policies
(:mod:`sensaopt.exact.rolling`; registered once, as plugins, in
:data:`sensaopt.policies.POLICIES`)."""
