"""Which installed distribution a traceback's files belong to, asked of the interpreter that ran the snippet.

    python errkb/draft/locate.py '{"files": [...], "modules": [...]}'
      ->  {"files": {path: {"distribution", "version", "relative"}}, "distributions": {name: {...metadata}}}

Standard library only (it runs under the snippet's interpreter, which need not have errkb's dependencies).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import sys
import sysconfig


def _probe_module():
    """errkb/reproduce/probe.py, loaded by path: this script runs where errkb itself may not be importable."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "reproduce", "probe.py")
    spec = importlib.util.spec_from_file_location("errkb_probe", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


probe = _probe_module()


def _stdlib_folders() -> list[str]:
    paths = sysconfig.get_paths()
    return [os.path.realpath(paths[key]) for key in ("stdlib", "platstdlib") if paths.get(key)]


def _site_folders() -> list[str]:
    return sorted({os.path.realpath(p) for p in sys.path if p and os.path.isdir(p)}, key=len, reverse=True)


def _owners() -> dict[str, str]:
    """Real path of every installed file -> its distribution (from the distributions' RECORD files)."""
    owners = {}
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        for file in dist.files or []:
            if str(file).endswith(".py"):
                owners[os.path.realpath(dist.locate_file(file))] = name
    return owners


def _metadata(name: str) -> dict:
    dist = importlib.metadata.distribution(name)
    urls = probe.project_urls(dist)
    direct = None
    try:
        text = dist.read_text("direct_url.json")
        direct = json.loads(text) if text else None
    except (OSError, ValueError):
        direct = None
    facts = {"version": dist.version, "urls": urls, "direct_url": direct}
    if name.lower() == "torch":
        build = {}
        probe.torch_build(build)
        facts["git_version"] = build.get("torch_git_version")
    return facts


def locate(files: list[str], modules: list[str]) -> dict:
    owners = _owners()
    stdlib, sites = _stdlib_folders(), _site_folders()
    found, dists = {}, set()
    for path in files:
        real = os.path.realpath(path)
        name = owners.get(real)
        entry = {"distribution": name, "stdlib": any(real.startswith(f + os.sep) for f in stdlib) and "site-packages" not in real}
        if name:
            site = next((s for s in sites if real.startswith(s + os.sep)), None)
            entry["relative"] = os.path.relpath(real, site).replace(os.sep, "/") if site else None
            dists.add(name)
        found[path] = entry
    by_package = importlib.metadata.packages_distributions()
    for module in modules:
        dists.update(by_package.get(module, []))
    return {"files": found, "distributions": {name: _metadata(name) for name in sorted(dists)}, "python": sys.version.split()[0]}


if __name__ == "__main__":
    if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]
    request = json.loads(sys.argv[1])
    sys.stdout.write(json.dumps(locate(request.get("files", []), request.get("modules", []))))
