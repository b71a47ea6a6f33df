"""errkb: a catalog of ML error records, each proven by a runnable reproduction."""

from .model import Envelope, Record

__all__ = ["Envelope", "Record"]
