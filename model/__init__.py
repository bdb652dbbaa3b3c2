"""replicheck's reference model: a pure-functional, executable spec of one
partition replicated on a KRaft-era Kafka cluster (chapters 2–8 of the
replication protocol description).

Public face: ``Config``, ``initial_state``, ``enabled_actions``, ``step``,
``ActionNotEnabled``, the state types and the action classes, and what an
implementation under test is compared on: ``observe`` (the observable projection)
and ``outcome`` (what an action visibly did).
"""

from .actions import *  # noqa: F403  (every action class and the action registry)
from .config import (LIVENESS_VARIANTS, MAX_BROKERS, MIN_BROKERS, UNCLEAN_RECOVERY_STRATEGIES, VARIANT_DOCS, Config,
                     Variant)
from .profile import (CHAPTERS, KAFKA, KAFKA_RELEASE, KAFKA_RELEASES, PROFILES, RULE_DOCS, Rule, RuleDoc,
                      kafka_release_error, release_number, rules_without)
from .errors import ActionNotEnabled, ControllerFault
from .initial import initial_state
from .log import end_offset_for_epoch, epoch_entries, truncation_offset
from .observation import (BrokerObservation, ListOffsetsResult, Observation, Outcome, ReplicaObservation, observe,
                      observe_replica, outcome)
from .clock import REPLICA_LAG_TIME_MAX_MS, is_caught_up
from .replica import hwm_quorum
from .state import (DYNAMIC_CONFIGS, ELR_FEATURE, LEADER_RECOVERY_STATES, MIN_INSYNC_REPLICAS, NO_LEADER, NO_LEADER_CHANGE, RECOVERED,
                    RECOVERING, STATIC_MIN_INSYNC_REPLICAS, UNCLEAN_LEADER_ELECTION_ENABLE,
                    AckedWrite, AlterPartitionRequest,
                    AlterPartitionResponse, Broker, BrokerRegistration, BrokerStatus, ClusterState,
                    ClearElrRecord, ConfigRecord, ControlledShutdownRecord, ControllerState, EpochEndOffset, FeatureLevelRecord, FenceBrokerRecord, FetchRequest, FetchResponse,
                    FollowerState, History, ListOffsetsAnswer, Message, MetadataRecord, Network,
                    PartitionChangeRecord, PartitionMetadata, PartitionRecord, PendingWrite, Record,
                    RegisterBrokerRecord, Replica, Role, UncleanElectionReport, UnfenceBrokerRecord,
                    materialize, merge)
from .enumeration import enabled_actions
from .step import step, why_not_enabled

import types as _types

__all__ = sorted(name for name, value in globals().items()
                 if not name.startswith("_") and not isinstance(value, _types.ModuleType))
