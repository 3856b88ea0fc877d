#!/usr/bin/env bash
# Build acres_bridge and the interface packages the ROS 2 distribution lacks, with colcon.
# Run from the root of a colcon workspace whose src/ holds this repository, after sourcing the
# distribution (source /opt/ros/jazzy/setup.bash):
#     src/acres_bridge/tools/colcon_build.sh [extra colcon arguments]
# The distribution's own tf2_msgs, can_msgs, ds_dbw_msgs, composition_interfaces and
# simulation_interfaces win: those it provides are not built from this tree.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
provided=$(python3 "$repo/tools/build_interfaces.py" --list-provided --prefix "$PWD/install")
skip=()
if [ -n "$provided" ]; then
  echo "colcon_build: provided by the distribution, not built: $provided"
  skip=(--packages-ignore $provided)
fi
exec colcon build --base-paths "$repo" "$repo/interfaces" "${skip[@]}" "$@"
