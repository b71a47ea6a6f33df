"""errkb: a catalog of ML error records, each proven by a runnable reproduction."""

from .model import Envelope, Record

__all__ = ["Envelope", "Record", "explain", "install", "match"]


def match(text: str, root=None, limit: int = 5):
    """Records of the catalog that explain the error in a pasted traceback or log, best first ([] if none)."""
    from .matching import match as _match

    return _match(text, root=root, limit=limit)


def explain(exc: BaseException, root=None):
    """The record that explains an exception (or warning) object, as a Match, or None."""
    from .run import explain as _explain

    return _explain(exc, root=root)


def install(root=None) -> None:
    """Print the matching record's cause and fix after every uncaught exception's traceback."""
    from .run import install as _install

    _install(root=root)


def load_ipython_extension(ipython) -> None:
    """`%load_ext errkb` in IPython or Jupyter."""
    from .run import load_ipython_extension as _load

    _load(ipython)
