"""Real traces and calibrated generators turned into instances.

* loaders: :mod:`.chronus` (Chronus Philly CSV), :mod:`.helios` (Helios job log CSV),
  :mod:`.philly` (Philly ``cluster_job_log`` JSON);
* :mod:`.generators`: Helios- and Philly-calibrated seeded generators;
* :mod:`.sensitivity`: model types for trace jobs; :mod:`.presets`: cluster presets;
* :mod:`.trace`: windows, the deadline rule, :func:`build_instance`;
  :mod:`.sources`: one name for every source; :mod:`.windows`: small instances cut
  from a trace for the gap study.

Units: minutes, cores, GB. Nothing here reads the shared data at import time.
"""

from sensaopt.traces.presets import preset_cluster, preset_names, preset_spec
from sensaopt.traces.sensitivity import SensitivityMix
from sensaopt.traces.trace import DeadlineRule, TraceData, TraceJob, build_instance, scale_load, window

__all__ = [
    "DeadlineRule", "SensitivityMix", "TraceData", "TraceJob", "build_instance", "preset_cluster", "preset_names", "preset_spec",
    "scale_load", "window",
]
