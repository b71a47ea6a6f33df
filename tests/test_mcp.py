"""`errkb mcp`: a real MCP client session (the SDK's Client over stdio) against the real server process."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path

import pytest
from conftest import REPO
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ERRKB = str(Path(sys.executable).with_name("errkb"))
DEVICE_PASTE = (
    "Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n    loss = criterion(out, y)\n"
    "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n"
)
DEVICE_SLUG = "expected-all-tensors-on-same-device"


def session(root: Path, calls: list[tuple[str, dict]]) -> tuple[list[str], list[dict]]:
    """Start `errkb --root ROOT mcp`, list its tools, make the calls in one session; the answers as JSON."""

    async def run():
        params = StdioServerParameters(command=ERRKB, args=["--root", str(root), "mcp"], cwd=str(root))
        async with Client(params) as client:
            tools = [tool.name for tool in (await client.list_tools()).tools]
            answers = []
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                assert not result.is_error, result.content
                answer = json.loads(result.content[0].text)
                assert result.structured_content == answer  # for clients that read structured content
                answers.append(answer)
            return tools, answers

    return asyncio.run(run())


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("catalog")
    for folder in ("records", "reproductions", "verifications", "keys"):  # keys: to verify the results
        shutil.copytree(REPO / folder, root / folder)
    return root


def test_match_then_show_gives_the_fix_with_its_evidence(root):
    tools, (matched, shown, nothing, found, listed) = session(root, [
        ("match", {"paste": DEVICE_PASTE}),
        ("show", {"slug": DEVICE_SLUG}),
        ("match", {"paste": "KeyError: 'banana split with sprinkles'"}),
        ("search", {"query": "OOM"}),
        ("list", {"tag": ["Multi-GPU"], "library": "torch"}),
    ])
    assert tools == ["match", "show", "search", "list"]
    assert matched["status"] == "match"
    best = matched["matches"][0]
    assert best["slug"] == DEVICE_SLUG and best["title"] == "Expected all tensors to be on the same device"
    assert best["firstSolution"]["mark"].startswith("verified in ")
    assert best["verifiedOn"] and "torch" in best["verifiedOn"]

    assert shown["status"] == "record"
    record = shown["record"]
    assert record["verifiedOn"] == best["verifiedOn"]
    assert record["claimMarks"]["solution 1"]["verified"] is True
    paths = [entry["path"] for entry in record["verifications"]]
    assert paths and all((root / path).is_file() for path in paths)  # committed result files, citable
    assert {entry["environment"] for entry in record["verifications"] if entry["current"]}

    assert nothing["status"] == "no-match" and "no proven fix" in nothing["answer"] and nothing["matches"] == []
    assert found["status"] == "hits" and found["hits"][0]["slug"] == "cuda-out-of-memory"
    oom = found["hits"][0]["evidence"]  # a GPU-only record: never verified here, and it says where it was not
    assert oom["verifiedOn"] is None and oom["notProvenOn"] and all(e["verdict"] == "skipped" for e in oom["notProvenOn"])
    assert listed["status"] == "records" and listed["count"] > 0
    assert all("multi-gpu" in entry["tags"] for entry in listed["records"])
    proven = [entry["evidence"] for entry in listed["records"] if entry["evidence"]["verifiedOn"]]
    assert proven and all(e["claimMarks"] and e["resultPaths"] for e in proven)
    assert all((root / path).is_file() for e in proven for path in e["resultPaths"])  # committed, citable


def test_a_planted_stale_result_is_not_cited_as_proof(root, tmp_path):
    """Edit the reproduction: its committed results are stale, and the server must stop calling the fix verified."""
    stale = tmp_path / "stale"
    shutil.copytree(root, stale)
    with open(stale / "reproductions" / f"{DEVICE_SLUG}.py", "a", encoding="utf-8") as handle:
        handle.write("\n# edited after the runs\n")
    _, (shown,) = session(stale, [("show", {"slug": DEVICE_SLUG})])
    record = shown["record"]
    assert record["verifiedOn"] is None and record["lastVerdict"] is None
    assert not any(entry["current"] for entry in record["verifications"])


def test_unknown_slug_and_no_catalog_are_said_as_such(root, tmp_path):
    _, (unknown,) = session(root, [("show", {"slug": "expected-all-tensors-on-same-devic"})])
    assert unknown["status"] == "unknown-slug" and "did you mean expected-all-tensors-on-same-device" in unknown["answer"]
    empty = tmp_path / "empty"
    empty.mkdir()
    _, answers = session(empty, [("match", {"paste": DEVICE_PASTE}), ("show", {"slug": DEVICE_SLUG}),
                                 ("search", {"query": "OOM"}), ("list", {})])
    for answer in answers:
        assert answer["status"] == "no-catalog" and "no catalog" in answer["answer"], answer
