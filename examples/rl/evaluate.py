"""Evaluate a policy on the Polaris through policy_driver, the node that drives the real vehicle.

    python examples/rl/evaluate.py route_ppo.zip
    python examples/rl/evaluate.py acres_bridge.gym.policy:route_follower

Runs the scenario route_policy.yaml (beside this file, or --scenario) with the policy as the
stack's ``policy`` parameter: each episode in a session of its own, judged by the scenario's
criteria. Prints a line per episode and exits 0 when every episode passed, 1 otherwise. The
episodes' folders (recording.mcap, verdict.json, the node's log) and results.jsonl are under
--output, a new or empty folder (as for acres_scenario run, any other is refused):
``acres_report OUTPUT -o report.html`` makes the run's page.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from acres_bridge.scenario.episode import run_episode
from acres_bridge.scenario.loader import load_scenario
from acres_bridge.scenario.results import Verdict, append_result
from acres_bridge.scenario.run_folder import RunFolderError, claim_run_folder
from acres_bridge.scenario.sweep import expand

HERE = Path(__file__).resolve().parent


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("policy", help="a Stable-Baselines3 .zip or module:callable")
    parser.add_argument("--scenario", type=Path, default=HERE / "route_policy.yaml")
    parser.add_argument("--output", type=Path, help="a new or empty folder (default acres_runs/evaluate-UTC)")
    parser.add_argument("--first", type=int, help="run only the sweep's first N episodes")
    options = parser.parse_args(argv)
    policy = str(Path(options.policy).resolve()) if options.policy.endswith(".zip") else options.policy
    scenario = load_scenario(options.scenario)
    stack = scenario.stack.model_copy(update={"args": {**scenario.stack.args, "policy": policy}})
    scenario = scenario.model_copy(update={"stack": stack})
    output = options.output or Path("acres_runs") / f"evaluate-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}"
    try:
        run_dir = claim_run_folder(output, scenario.name, resume=False)
    except RunFolderError as refused:
        print(f"evaluate: {refused}", file=sys.stderr)
        return 2
    passed = True
    for episode in expand(scenario)[: options.first]:
        result = run_episode(episode, run_dir, scenario_dir=options.scenario.resolve().parent)
        append_result(run_dir, result)  # results.jsonl: acres_report OUTPUT -o page.html
        passed = passed and result.verdict is Verdict.PASS
        detail = result.error or ", ".join(result.failed) or "every criterion held"
        print(f"{result.verdict} {result.episode}: {detail} ({result.folder})")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
