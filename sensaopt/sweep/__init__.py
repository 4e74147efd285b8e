"""Parameter sweeps on Dask distributed with a resumable, hash-keyed result store.

>>> from sensaopt.sweep import RunConfig, ResultStore, grid, run_sweep
>>> cfgs = grid(RunConfig(trace="synthetic", jobs=20), policy=["edf", "fifo"], seed=[0, 1])
>>> report = run_sweep(cfgs, ResultStore("sweep-out"))        # LocalCluster, 2 workers
"""

from sensaopt.sweep.config import RunConfig, grid, run_config
from sensaopt.sweep.runner import SweepReport, run_serial, run_sweep
from sensaopt.sweep.store import ResultStore

__all__ = ["ResultStore", "RunConfig", "SweepReport", "grid", "run_config", "run_serial", "run_sweep"]
