"""Records a real MCP session with `errkb mcp` (match, then show) into docs/mcp-transcript.md.

    python docs/mcp_transcript.py [OUT]

The SDK's Client starts `errkb --root <this checkout> mcp` over stdio, as an agent's client would.
"""

import asyncio
import json
import sys
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters

REPO = Path(__file__).resolve().parents[1]
PASTE = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 57, in <module>\n'
    "    loss = criterion(model(x), y)\n"
    "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n"
)
LONG_FIELDS = ("sourceCode", "documentation", "triggerScenarios", "commonSituations", "exampleFix", "validationCode",
               "typeGuard", "tryCatchPattern", "messagePattern")


def shortened(record: dict) -> dict:
    """A record (or match) with its long prose and code fields cut to 120 characters, and only the first of its
    result files' entries in full (the others by path)."""
    record = dict(record)
    for name in LONG_FIELDS:
        if isinstance(record.get(name), str) and len(record[name]) > 120:
            record[name] = record[name][:120] + f"… [{len(record[name])} characters in all]"
    holder = record if "verifications" in record else record.get("evidence")
    if holder and len(holder["verifications"]) > 1:
        first, *others = holder["verifications"]
        holder = dict(holder, verifications=[first, *({"path": entry["path"], "…": "cut in this transcript"} for entry in others)])
        if "verifications" in record:
            record = holder
        else:
            record["evidence"] = holder
    return record


async def session() -> list[tuple[str, dict, dict]]:
    errkb = str(Path(sys.executable).with_name("errkb"))
    params = StdioServerParameters(command=errkb, args=["--root", str(REPO), "mcp"], cwd=str(REPO))
    async with Client(params) as client:
        tools = await client.list_tools()
        steps = [("tools/list", {}, {"tools": [{"name": t.name, "description": t.description} for t in tools.tools]})]
        matched = json.loads((await client.call_tool("match", {"paste": PASTE})).content[0].text)
        steps.append(("tools/call match", {"paste": PASTE}, {**matched, "matches": [shortened(m) for m in matched["matches"]]}))
        slug = matched["matches"][0]["slug"]
        shown = json.loads((await client.call_tool("show", {"slug": slug})).content[0].text)
        steps.append(("tools/call show", {"slug": slug}, {**shown, "record": shortened(shown["record"])}))
        nothing = json.loads((await client.call_tool("match", {"paste": "KeyError: 'banana split with sprinkles'"})).content[0].text)
        steps.append(("tools/call match", {"paste": "KeyError: 'banana split with sprinkles'"}, nothing))
        return steps


def main(out: Path) -> None:
    steps = asyncio.run(session())
    lines = [
        "# An MCP session with `errkb mcp`: match, then show",
        "",
        "Recorded by `python docs/mcp_transcript.py` with the official `mcp` SDK's Client over stdio, against",
        "`errkb --root <checkout> mcp` on this repository's catalog and committed verification results. Cut here",
        "(and marked): the record's long prose and code fields, to 120 characters, and every result file's entry",
        "but the first, to its path; everything else is as the server sent it.",
        "",
    ]
    for number, (call, arguments, answer) in enumerate(steps, 1):
        lines += [f"## {number}. `{call}`", ""]
        if arguments:
            lines += ["Arguments:", "", "```json", json.dumps(arguments, indent=2, ensure_ascii=False), "```", ""]
        lines += ["Answer:", "", "```json", json.dumps(answer, indent=2, ensure_ascii=False), "```", ""]
    out.write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "docs" / "mcp-transcript.md")
