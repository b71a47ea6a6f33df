"""Keep each reproduction run: its result file in verifications/ (unless told not to) and its row in catalog.db's
`reproduction_runs`, so the catalog shows when and where, on which releases and hardware, a record was proven.
The writing itself is writes.keep_result's (lock, then file, then row), after the stages have run."""

from __future__ import annotations

from pathlib import Path

from .. import verifications, writes


def keep(root: Path, result, write_file: bool = True, signer=None, trust_unsigned: bool = False) -> Path | None:
    """Write the run's result file and row; raise lock.CatalogBusy when another process holds the lock."""
    return writes.keep_result(root, verifications.from_result(result), write_file and not result.authoring_problem,
                              signer, trust_unsigned)
