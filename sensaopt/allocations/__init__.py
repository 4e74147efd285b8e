"""The valid allocations of a job on a node: the one home of "which CPU and memory a job
may take", for the validator, the policies, the exact models and their relaxations.

**The rule** (``models/formulation.md``, "The feasible set"): on every node of its
placement a job gets a whole number of cores (:func:`whole_cores`) and any amount of
GB, at least its profile's floor per GPU (:func:`meets_floor`), within the node's
capacity (:func:`fits`). Its speed is the profile's surface at the per-GPU allocation
(:meth:`~sensaopt.profiles.SensitivityProfile.speed`).

**The sets** a policy or model chooses from, :class:`~sensaopt.profiles.Option`\\ s
(per-GPU cores and GB with their speed), each Pareto-efficient (:func:`pareto`: no
other option as fast with no more CPU and memory):

* the policies' options (:func:`job_options`): whole cores per GPU at the measured
  memory levels (:func:`whole_core_options`) plus each node type's proportional share
  (:func:`proportional_share`); the optimal demand is chosen among them
  (:func:`optimal_demand`);
* the exact models' **inner** grid (:func:`inner_options`): real allocations at their
  true speed — the policies' options, whole cores per *job* at or just above each
  measured CPU level (at the memory levels), each node type's whole-node share per GPU
  rounded *down* (:func:`whole_node_shares`; a job alone on a node, or on its GPUs of a
  node) combined with the levels, and (``refine`` > 1) the refined grid points
  (:func:`refined_axis`) rounded *up* to the lattice of 1/:data:`LATTICE` cores and GB.
  Every schedule of the inner model is a valid schedule: its optimum is an upper bound,
  attained;
* the **outer** grid (:func:`outer_options`): the refined grid rounded *down* to the
  lattice; the option at a point gets the highest speed of its whole grid box
  (:func:`box_max`: the point up to the next point on both axes; to infinity past the
  last, where the surface is flat). Every real allocation lies in some box, uses at
  least that box's point's resources and runs at most that box's speed: any valid
  schedule maps to an outer model schedule with no more resources and at least its
  progress, slot by slot, so the outer model's bound is a bound of the problem (the
  Lemma in ``models/formulation.md``, "Exact over every valid allocation"). Its
  schedules are not valid schedules; only its bound is used. With a job's GPU count its
  CPU axis holds only the per-GPU cores a node can give in whole cores
  (:func:`cpu_value`, :func:`cpu_candidates`); a job that fits one node gets the grid
  exact in CPU (:func:`exact_cpu_options`: every k/g value, memory boxes only), any
  other job the smaller of the two grids (:func:`relaxation_options`). Schedules of the
  CPU-exact grid can be *lifted* to valid ones (:mod:`sensaopt.exact.phases.lift`);
* **dominance** (:func:`dominated`, :func:`grids_dominate`): the inner grid covers the
  outer one, and the inner model's proof stands alone;
* an exact model's options of every job and the options each node holds
  (:func:`model_grids`, one call per model data build);
* **everything the exact pipeline needs**, in one call (:func:`exact_allocations`): the
  inner grids with the warm start's points, dominance, the relaxations' grids and the
  best speeds, handed down through its phases (:class:`ExactAllocations`);
* **the validator's allocation rules** over a whole schedule, in one call
  (:func:`schedule_faults`).

The modules: :mod:`~sensaopt.allocations.rule` (the rule, the lattice, dominance, the
cache, the validator's checks), :mod:`~sensaopt.allocations.grids` (the sets) and
:mod:`~sensaopt.allocations.model` (an exact model's grids). Nothing outside this
package computes allocation sets.

**One cache**: every set is computed once per profile (by value) and arguments
(:func:`~sensaopt.allocations.rule.cached`; the entries live as long as the profile), except a model grid with a
warm start's points (those differ from solve to solve).
"""

from sensaopt.allocations.grids import (
    best_speed,
    best_speeds,
    box_max,
    cpu_candidates,
    cpu_value,
    exact_cpu_axis,
    exact_cpu_options,
    inner_options,
    job_options,
    optimal_demand,
    outer_options,
    refined_axis,
    relaxation_options,
    whole_core_options,
)
from sensaopt.allocations.model import (
    ExactAllocations,
    JobGrid,
    exact_allocations,
    grids_dominate,
    model_grids,
    schedule_points,
    single_node_cores,
)
from sensaopt.allocations.rule import (
    DEFAULT_REFINE,
    LATTICE,
    NO_FAULTS,
    PlacementFaults,
    dominated,
    fits,
    meets_floor,
    pareto,
    proportional_allocation,
    proportional_share,
    schedule_faults,
    whole_cores,
    whole_node_shares,
)
from sensaopt.profiles import Option

__all__ = [
    "DEFAULT_REFINE", "LATTICE", "NO_FAULTS", "ExactAllocations", "JobGrid", "Option", "PlacementFaults", "best_speed",
    "best_speeds", "box_max", "cpu_candidates", "cpu_value", "dominated", "exact_allocations", "exact_cpu_axis",
    "exact_cpu_options", "fits", "grids_dominate", "inner_options", "job_options", "meets_floor", "model_grids",
    "optimal_demand", "outer_options", "pareto", "proportional_allocation", "proportional_share", "refined_axis",
    "relaxation_options", "schedule_faults", "schedule_points", "single_node_cores", "whole_core_options",
    "whole_cores", "whole_node_shares",
]
