"""The JSON Schema of a record file, generated from the Pydantic models (checked in under schema/)."""

from __future__ import annotations

import json

from .model import FIELD_DESCRIPTIONS, SCHEMA_ID, Envelope

SCHEMA_FILE = "schema/error-record.v2.schema.json"


def json_schema() -> dict:
    """A record file is either the envelope or a bare record; cross-field rules are only in the models."""
    envelope = Envelope.model_json_schema(ref_template="#/$defs/{model}")
    defs = envelope.pop("$defs")
    defs["Envelope"] = envelope
    for name, prop in defs["Record"]["properties"].items():
        prop.pop("title", None)
        prop["description"] = FIELD_DESCRIPTIONS[name]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "errkb error record, schema v2",
        "description": (
            "One error record, as the envelope {record, datasetVersion} or as a bare record. "
            "Rules that span fields (excerpt line count, lineNumber inside the excerpt, githubUrl "
            "derived from repo/analyzedSha/filePath/lines, messagePattern compiling in RE2 and "
            "matching errorMessage) are enforced by errkb's models, not by this schema."
        ),
        "oneOf": [{"$ref": "#/$defs/Envelope"}, {"$ref": "#/$defs/Record"}],
        "$defs": dict(sorted(defs.items())),
    }


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


