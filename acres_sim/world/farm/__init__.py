"""The state of the farm: crop and soil per grid cell over the crop fields, changed by the agents.

The models are described in acres_sim.world.farm.model; the constants are in ``params``, what a step takes
and returns in ``columns``, the grid in ``grid`` and each vehicle's contact geometry in ``contact``.
"""

from acres_sim.world.farm.columns import (
    EVENT_UNITS,
    EventKind,
    Events,
    FarmAgent,
    FarmStep,
    ImplementAction,
    Part,
    Stamps,
)
from acres_sim.world.farm.grid import Heights
from acres_sim.world.farm.model import Farm
from acres_sim.world.farm.params import (
    IMPLEMENT_FOOTPRINTS,
    MAXXUM_CONTACT,
    POLARIS_CONTACT,
    ContactParams,
    FarmParams,
    ImplementFootprint,
    contact_params,
)

__all__ = [
    "EVENT_UNITS",
    "IMPLEMENT_FOOTPRINTS",
    "MAXXUM_CONTACT",
    "POLARIS_CONTACT",
    "ContactParams",
    "EventKind",
    "Events",
    "Farm",
    "FarmAgent",
    "FarmParams",
    "FarmStep",
    "Heights",
    "ImplementAction",
    "ImplementFootprint",
    "Part",
    "Stamps",
    "contact_params",
]
