"""Google-style docstrings (mkdocs.yml: ``docstring_style: google``) on the public API: each
function listed has an ``Args:`` section naming every parameter and a ``Returns:`` section
unless it returns None, so that the API site shows parameter tables."""

from __future__ import annotations

import importlib
import inspect
import re

import pytest

FULLY = ("sensaopt.plot", "sensaopt.plot.base", "sensaopt.plot.captions", "sensaopt.plot.curves", "sensaopt.plot.schedules",
         "sensaopt.palette", "sensaopt.policies", "sensaopt.sweep.experiment_plot", "sensaopt.allocations.rule",
         "sensaopt.allocations.grids", "sensaopt.allocations.model")
"""Modules whose every public function (defined there) is documented so."""
NAMED = {
    "sensaopt.io": ("load_instance", "save_instance", "load_schedule", "save_schedule"),
    "sensaopt.simulator": ("simulate", "apply_profile_error", "public_instance"),
    "sensaopt.metrics": ("job_metrics", "compute_metrics", "objective_value"),
    "sensaopt.traces.trace": ("window", "scale_load", "thin", "build_instance"),
    "sensaopt.traces.presets": ("preset_names", "preset_spec", "preset_cluster"),
    "sensaopt.bounds.report": ("compute_bounds", "bounds_lines"),
    "sensaopt.sweep.paper.charts": ("bars_figure", "jct_cdf_figure", "figures"),
    "sensaopt.generate": ("model_classes", "deadline_rule", "generate", "provenance"),
    "sensaopt.policies.placement": ("proportional_placement", "option_placement"),
    "sensaopt.profiles": ("get_profile",),
    "sensaopt.datasets": ("where", "locate", "fetch", "packaged_instance"),
}


def _functions():
    for mod in FULLY:
        m = importlib.import_module(mod)
        for name, obj in vars(m).items():
            if inspect.isfunction(obj) and not name.startswith("_") and obj.__module__ == mod:
                yield mod, name
    for mod, names in NAMED.items():
        for name in names:
            yield mod, name


@pytest.mark.parametrize("mod, name", list(_functions()), ids=lambda x: x)
def test_public_function_has_args_and_returns_sections(mod, name):
    fn = getattr(importlib.import_module(mod), name)
    doc = inspect.getdoc(fn) or ""
    params = [p for p in inspect.signature(fn).parameters.values() if p.name not in ("self", "cls")]
    if params:
        assert "\nArgs:\n" in doc, f"{mod}.{name}: no Args: section"
        args = doc.split("\nArgs:\n", 1)[1].split("\n\n", 1)[0]
        listed = set(re.findall(r"^\s{4}\**(\w+)(?: \(.*?\))?:", args, re.M))
        assert listed == {p.name for p in params}, f"{mod}.{name}: Args lists {sorted(listed)}"
    returns = inspect.signature(fn).return_annotation
    if inspect.isgeneratorfunction(fn) or str(returns).startswith(("Iterator", "Generator")):
        assert "\nYields:\n" in doc, f"{mod}.{name}: no Yields: section"
    elif returns not in (None, "None", inspect.Signature.empty):
        assert "\nReturns:\n" in doc, f"{mod}.{name}: no Returns: section"
