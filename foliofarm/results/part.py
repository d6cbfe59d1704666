"""What every part of results.json is made of (schema.py): a model that
refuses a field it does not know, and the sides of a comparison."""

from __future__ import annotations

import enum

from pydantic import BaseModel, ConfigDict


class Role(enum.StrEnum):
    """Which side of a comparison a kernel is (a plain run has none: None)."""
    BASE = "base"
    SERIES = "series"


class Part(BaseModel):
    # A field this farm does not know is refused: a misspelt one is an error
    # where it is written, not a figure silently kept. Documents of earlier
    # versions are made today's shape first (read.upgrade), a newer one is
    # refused by its schema_version.
    model_config = ConfigDict(extra="forbid")
