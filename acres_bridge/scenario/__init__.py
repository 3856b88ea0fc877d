"""Scenarios: episodes of a simulator session, a bridge and a stack under test, each judged by
named criteria; sweeps of many such episodes on Ray.

    acres_scenario run examples/scenarios/polaris_route.yaml --output runs/today

docs/scenarios.md has the file's schema, the criteria and the results.
"""

from acres_bridge.scenario.errors import ScenarioError, ScenarioFileError
from acres_bridge.scenario.loader import load_scenario, parse_scenario
from acres_bridge.scenario.results import EpisodeResult, Verdict
from acres_bridge.scenario.schema import Scenario
from acres_bridge.scenario.sweep import Episode, expand

__all__ = [
    "Episode",
    "EpisodeResult",
    "Scenario",
    "ScenarioError",
    "ScenarioFileError",
    "Verdict",
    "expand",
    "load_scenario",
    "parse_scenario",
]
