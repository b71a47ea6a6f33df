"""errkb: a catalog of ML error records, each proven by a runnable reproduction."""

from .bundled import NoCatalog
from .model import Envelope, Record

__all__ = ["Envelope", "NoCatalog", "Record", "explain", "explanation", "install", "match"]


def match(text: str, root=None, limit: int = 5):
    """Records of the catalog that explain the error in a pasted traceback or log, best first ([] if none).

    The catalog: `root`, else the nearest catalog folder, else the one bundled with errkb (NoCatalog if none).
    """
    from .matching import match as _match

    return _match(text, root=root, limit=limit)


def explain(exc: BaseException, root=None):
    """The record that best matches an exception (or warning) object, as a Match, or None.

    The Match says which record and why (`slug`, `score`, `why()`), not the cause or the fix:
    `explanation(exc)` gives that text.
    """
    from .run import explain as _explain

    return _explain(exc, root=root)


def explanation(exc: BaseException, root=None) -> str | None:
    """What errkb prints after a traceback for an exception object: the matching record's cause, fix and
    verification, or None when no record matches."""
    from .run import explanation as _explanation

    return _explanation(exc, root=root)


def install(root=None) -> None:
    """Print the matching record's cause and fix after every uncaught exception's traceback."""
    from .run import install as _install

    _install(root=root)


def load_ipython_extension(ipython) -> None:
    """`%load_ext errkb` in IPython or Jupyter."""
    from .run import load_ipython_extension as _load

    _load(ipython)
