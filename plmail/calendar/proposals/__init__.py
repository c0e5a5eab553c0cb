"""Proposals: a date read from an ordinary sentence, offered on a card, never assumed.

Three stages: a gate that says "certainly not" to most mail for the price of one regular expression,
a deterministic detector that reads German and English sentences, and the proposer that holds every
noise rule. A proposal is not an event; nothing here writes or reads a calendar.
"""

from plmail.calendar.proposals.detector import DeterministicDateDetector
from plmail.calendar.proposals.gate import DateShapeGate, GateAnswer
from plmail.calendar.proposals.proposer import (
    BULK_HEADERS,
    DEDUP_KEY_VERSION,
    HORIZON_DAYS,
    CandidateVerdict,
    EventProposer,
    Proposal,
    ProposalDecision,
    ProposalInput,
    Refusal,
    dedup_key,
    has_schema_markup,
    hash_dedup_key,
    suppressed_among,
)
from plmail.calendar.proposals.text import split_sentences, strip_quoted
from plmail.domain.calendar import DetectionRequest, ProposalCandidate
from plmail.domain.ports import ProposalDetector

__all__ = [
    "BULK_HEADERS",
    "DEDUP_KEY_VERSION",
    "HORIZON_DAYS",
    "CandidateVerdict",
    "DateShapeGate",
    "DetectionRequest",
    "DeterministicDateDetector",
    "EventProposer",
    "GateAnswer",
    "Proposal",
    "ProposalCandidate",
    "ProposalDecision",
    "ProposalDetector",
    "ProposalInput",
    "Refusal",
    "dedup_key",
    "has_schema_markup",
    "hash_dedup_key",
    "split_sentences",
    "strip_quoted",
    "suppressed_among",
]
