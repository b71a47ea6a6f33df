"""What a runner with declared hardware should do with each record, decided from the files alone.

A runner (a CI job, a maintainer's GPU machine) declares its hardware: how many CUDA devices it has, whether an
NVIDIA driver is loaded, and which build of torch it runs. Against that declaration and the releases it runs,
each record's NEEDS says whether it runs or is skipped, and whether the skip is expected:

    expected    the declaration explains it: more devices than declared, the other torch build, a driver
                the record must not see, a release outside the record's range
    unexpected  nothing declared explains it: a library that is not installed, a device the runner declared
                but did not find, an environment that could not be made

`errkb reproduce --plan` prints this without installing or running anything; `errkb reproduce --strict` with a
declaration fails only on what is unexpected (and on every verdict other than verified or skipped).
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from .compare import SKIPPED, VERIFIED
from .contract import TORCH_BUILDS, Needs

RUN, SKIP = "run", "skip"
ADMITTED = "admitted"  # a distribution the environment installs at a version the record's NEEDS admits


@dataclass(frozen=True)
class Hardware:
    """What a runner declares about itself."""

    gpus: int
    driver: bool
    torch_build: str  # "cpu" or "cuda"

    def __post_init__(self):
        if self.gpus < 0:
            raise ValueError(f"a runner has 0 or more GPUs, not {self.gpus}")
        if self.torch_build not in TORCH_BUILDS:
            raise ValueError(f"torch build is one of {', '.join(TORCH_BUILDS)}, not {self.torch_build!r}")
        if self.gpus and not self.driver:
            raise ValueError(f"{self.gpus} GPU(s) cannot be reached without an NVIDIA driver")

    def describe(self) -> str:
        driver = "an NVIDIA driver" if self.driver else "no NVIDIA driver"
        return f"{self.gpus} GPU(s), {driver}, a {self.torch_build.upper() if self.torch_build == 'cpu' else 'CUDA'} build of torch"


@dataclass(frozen=True)
class Planned:
    slug: str
    action: str  # RUN or SKIP
    reasons: tuple[str, ...] = ()
    expected: bool = True  # for a skip: the declaration explains it

    def to_json(self) -> dict:
        return {"slug": self.slug, "action": self.action, "expected": self.expected, "reasons": list(self.reasons)}


def plan_needs(slug: str, needs: Needs, hardware: Hardware, versions: dict[str, str | None],
               releases: set[str] = frozenset({"torch"})) -> Planned:
    """`versions`: the release each distribution will have (None: it will not be installed; ADMITTED: one that
    the record's NEEDS admits). `releases`: the distributions whose release the run chose (its --with pins,
    or torch): a record outside their range is an expected skip; any other version that does not fit is not."""
    expected, unexpected = [], []
    if needs.cuda_devices > hardware.gpus:
        noun = "device" if needs.cuda_devices == 1 else "devices"
        expected.append(f"needs {needs.cuda_devices} CUDA {noun}, the runner declares {hardware.gpus}")
    if needs.torch_build and needs.torch_build != hardware.torch_build:
        expected.append(f"needs a {needs.torch_build.upper() if needs.torch_build == 'cpu' else 'CUDA'} build of torch, "
                        f"the runner declares a {hardware.torch_build.upper() if hardware.torch_build == 'cpu' else 'CUDA'} build")
    if needs.nvidia_driver is not None and needs.nvidia_driver != hardware.driver:
        want = "an NVIDIA driver" if needs.nvidia_driver else "a machine without an NVIDIA driver"
        expected.append(f"needs {want}, the runner declares {'one' if hardware.driver else 'none'}")
    for name, spec in needs.packages.items():
        version = versions.get(canonicalize_name(name))
        if version is None:
            unexpected.append(f"needs {name}{spec}, which will not be installed")
        elif version != ADMITTED and not SpecifierSet(spec).contains(version, prereleases=True):
            chosen = canonicalize_name(name) in releases
            (expected if chosen else unexpected).append(f"needs {name}{spec}, the run has {name} {version}")
    if unexpected:
        return Planned(slug, SKIP, tuple(unexpected + expected), expected=False)
    if expected:
        return Planned(slug, SKIP, tuple(expected), expected=True)
    return Planned(slug, RUN)


def planned_versions(needs_by_slug: dict[str, Needs], pinned: dict[str, str] | None) -> dict[str, str | None]:
    """The versions a run will see. With `--with` pins, the pinned releases, and every other distribution the
    reproductions need at a version its NEEDS admits (the environment installs them so: ADMITTED); without, what is
    installed beside errkb now (read from metadata: nothing is imported)."""
    names = {canonicalize_name(name) for needs in needs_by_slug.values() for name in needs.packages}
    if pinned is not None:
        pins = {canonicalize_name(name): version for name, version in pinned.items()}
        return {name: pins.get(name, ADMITTED) for name in names | set(pins)}
    return {name: _installed(name) for name in names}


def _installed(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def classify(verdict: str, planned: Planned | None) -> str:
    """'ok', 'expected-skip' or 'failed' for one result under a declaration."""
    if verdict == VERIFIED:
        return "ok"
    if verdict == SKIPPED and planned is not None and planned.action == SKIP and planned.expected:
        return "expected-skip"
    return "failed"


def plan_for(slugs: list[str], needs_by_slug: dict[str, Needs], hardware: Hardware, requirements=None) -> list[Planned]:
    """The plan of one environment: `requirements` are its --with pins (None: the installed packages)."""
    pinned = None if requirements is None else {r.name: next(iter(r.specifier)).version for r in requirements}
    versions = planned_versions(needs_by_slug, pinned)
    releases = {canonicalize_name(name) for name in pinned} if pinned is not None else {"torch"}
    return [
        plan_needs(slug, needs_by_slug[slug], hardware, versions, releases) if slug in needs_by_slug
        else Planned(slug, SKIP, ("its reproduction is missing or cannot be read",), expected=False)
        for slug in slugs
    ]


def installed_torch_build() -> str:
    """'cpu' for a CPU wheel (its version says +cpu), else 'cuda'; read from metadata, torch is not imported."""
    version = _installed("torch") or ""
    return "cpu" if version.endswith("+cpu") else "cuda"
