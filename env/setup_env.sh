# The DDS loopback fence of ACRES sessions. Source it in every shell that runs the simulator,
# the bridge or anything that publishes on the command topics:
#
#     source env/setup_env.sh
#
# The command topics of the bridge have the names of the real Polaris's command topics. With
# this fence, DDS discovery stays on this machine, so nothing published here can reach a
# vehicle's computer on the network; the bridge refuses to forward commands without it.
# ACRES_DOMAIN_ID chooses the domain (default 73), so a session also stays apart from other
# ROS 2 work on the same machine.

if [ "${ROS_DISTRO:-}" = "humble" ]; then
  export ROS_LOCALHOST_ONLY=1                      # Humble: the localhost-only switch
else
  unset ROS_LOCALHOST_ONLY                         # Jazzy and later: it is deprecated there
  export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST   # discovery on this machine only
fi
unset ROS_STATIC_PEERS                             # no peers named by address
export ROS_DOMAIN_ID="${ACRES_DOMAIN_ID:-73}"
