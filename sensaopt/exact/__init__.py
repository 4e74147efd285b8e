"""Exact models: one time-indexed formulation (``models/formulation.md``), built by
:mod:`sensaopt.exact.builder` for CP-SAT (:func:`sensaopt.exact.cpsat.solve_cpsat`) and
MILP with HiGHS or CBC (:func:`sensaopt.exact.milp.solve_milp`), plus rolling-horizon
policies (:mod:`sensaopt.exact.rolling`)."""

from sensaopt.policies import register_builtin

register_builtin("rolling-cpsat", "sensaopt.exact.rolling:RollingCPSATPolicy")
register_builtin("rolling-milp", "sensaopt.exact.rolling:RollingMILPPolicy")
