"""Bag tools of acres_bridge: record topics to MCAP as rosbag2 does, and check a simulator's bags
against the real vehicle's.

Command-line tools (docs/tools.md):
  acres_record        (acres_bridge.tools.record)        record topics into an MCAP file
  check_topic_parity  (acres_bridge.tools.check_topic_parity)  types, QoS and frames against reference bags
                                                         or a msg_profiles table
  check_msg_defs      (acres_bridge.tools.check_msg_defs)      round-trip the ds_dbw_msgs messages of a bag

The library below them: MCAP writing and reading (bag), rosbag2's offered-QoS YAML (qos), message
definitions (msgdef), reading serialised messages (cdr).
"""

from acres_bridge.tools.bag import BagMessage, BagReader, BagTopic, BagWriter, Compression, open_bag
from acres_bridge.tools.errors import (
    AllowFileError,
    BagError,
    CdrError,
    DefinitionError,
    QosYamlError,
    ToolError,
)
from acres_bridge.tools.msgdef import definition_text, message_class, type_hash
from acres_bridge.tools.qos import (
    Durability,
    OfferedQos,
    Reliability,
    dump_offered_qos,
    parse_offered_qos,
)

__all__ = [
    "AllowFileError",
    "BagError",
    "BagMessage",
    "BagReader",
    "BagTopic",
    "BagWriter",
    "CdrError",
    "Compression",
    "DefinitionError",
    "Durability",
    "OfferedQos",
    "QosYamlError",
    "Reliability",
    "ToolError",
    "definition_text",
    "dump_offered_qos",
    "message_class",
    "open_bag",
    "parse_offered_qos",
    "type_hash",
]
