"""Lower bounds, valid for every schedule the validator accepts, computed from the
instance alone at trace scale: deadline misses and lost value
(:mod:`sensaopt.bounds.misses`) and average JCT (:mod:`sensaopt.bounds.jct`), per speed
regime (:mod:`sensaopt.bounds.areas`); proofs in ``models/bounds.md``."""

from sensaopt.bounds.areas import REGIMES, RESOURCES, Regime, Resource
from sensaopt.bounds.jct import JctBound, jct_bound
from sensaopt.bounds.misses import Block, MissBound, miss_bound
from sensaopt.bounds.report import Bounds, bounds_lines, compute_bounds

__all__ = ["REGIMES", "RESOURCES", "Block", "Bounds", "JctBound", "MissBound", "Regime", "Resource", "bounds_lines",
           "compute_bounds", "jct_bound", "miss_bound"]
