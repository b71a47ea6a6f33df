"""`errkb draft` end to end: real snippets in three libraries (torch, pytorch-crf, and packaging, which no table in
errkb names: its repository comes from its metadata) are drafted, the test fills the stubs as an author would, and the
records pass `errkb validate` and `errkb reproduce`; an unfilled stub is refused; bad snippets write nothing."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from conftest import REPO, run_cli, tree_digest

CRF_SHA = "8f3203a1f1d7984c87718bfe31853242670258db"  # kmkurn/pytorch-crf at release 0.7.2 (docs/record-brief.md)
TORCH_SHA = "cf30153c4c131c8164ee7798e5022d810682e2cb"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "catalog"
    (folder / "records").mkdir(parents=True)
    (folder / "reproductions").mkdir()
    return folder


def snippet(tmp_path: Path, text: str, name: str = "snippet.py") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def draft(root: Path, path: Path, *options):
    return run_cli("draft", *options, "--", sys.executable, path, root=root)


def fill(root: Path, slug: str, solution: str, demonstration: str) -> None:
    """What an author does with a draft: write the prose and one fix, demonstrate it, drop the code-field stubs."""
    record_file = root / "records" / f"{slug}.json"
    envelope = json.loads(record_file.read_text())
    record = envelope["record"]
    record.update(
        documentation="The library checks its argument and raises before doing any work.",
        triggerScenarios="The snippet passes the value the check refuses.",
        commonSituations="Configuration read from a file or a command line.",
        solutions=[solution], exampleFix=None, validationCode=None, preventionTips=["Check the value first."],
    )
    record_file.write_text(json.dumps(envelope, indent=2))
    text = (root / "reproductions" / f"{slug}.py").read_text()
    text = text.replace("TODO(errkb-draft): one paragraph: the story of the error, which variant runs where.",
                        "The library refuses the value; the fix passes one it accepts.")
    text = re.sub(r"\n    # TODO\(errkb-draft\).*", "", text)
    text = re.sub(r"\nCODE = .*\nCODE_NAMES = .*\nVALID = .*", "\nCODE = {}", text)
    text = text[: text.index("\ndef solution_1():")] + f"\ndef solution_1():\n{demonstration}\n"
    (root / "reproductions" / f"{slug}.py").write_text(text)


CASES = {
    "torch": dict(
        code='import torch\n\nmodel = torch.nn.Sequential()\nmodel.add_module("encoder.layer", torch.nn.Linear(4, 4))\n',
        options=(), repo="pytorch/pytorch", sha=TORCH_SHA, file="torch/nn/modules/module.py", cls="KeyError",
        fix="    import torch\n    model = torch.nn.Sequential()\n    model.add_module(\"encoder_layer\", torch.nn.Linear(4, 4))\n"
            "    assert model.encoder_layer.out_features == 4",
        other='\'module name can\\\'t contain ".", got: blocks.0\'',
    ),
    "pytorch-crf": dict(
        code="from torchcrf import CRF\n\ncrf = CRF(0)\n", options=("--sha", CRF_SHA), repo="kmkurn/pytorch-crf", sha=CRF_SHA,
        file="torchcrf/__init__.py", cls="ValueError",
        fix="    from torchcrf import CRF\n    assert CRF(5).num_tags == 5", other="invalid number of tags: -1",
    ),
    "packaging": dict(
        code='from packaging.version import Version\n\nVersion("1.0-final-final")\n', options=(), repo="pypa/packaging",
        sha=None, file="packaging/version.py", cls="packaging.version.InvalidVersion",
        fix="    from packaging.version import Version\n    assert Version(\"1.0\").release == (1, 0)",
        other="Invalid version: 'latest'",
    ),
}


@pytest.mark.parametrize("library", CASES)
def test_a_drafted_record_filled_in_validates_and_reproduces(root, tmp_path, library):
    case = CASES[library]
    made = draft(root, snippet(tmp_path, case["code"]), "--slug", f"{library}-case", "--tag", "drafted", *case["options"])
    assert made.exit_code == 0, made.output
    slug = f"{library}-case"
    record = json.loads((root / "records" / f"{slug}.json").read_text())["record"]
    assert (record["repo"], record["filePath"], record["errorClass"]) == (case["repo"], case["file"], case["cls"])
    assert record["tags"][0] == "drafted"
    assert re.search(record["messagePattern"], case["other"]), "the pattern tolerates other names and numbers"
    installed = Path(__import__("importlib").util.find_spec(case["file"].split("/")[0]).origin).parent.parent
    lines = (installed / case["file"]).read_text().splitlines()
    assert record["sourceCode"] == "\n".join(lines[record["sourceCodeStart"] - 1: record["sourceCodeEnd"]])
    assert "raise" in lines[record["lineNumber"] - 1]
    reproduction = (root / "reproductions" / f"{slug}.py").read_text()
    assert "PROVENANCE = {'checked': 'installed'" in reproduction
    if case["sha"] is None:  # packaging's metadata names no commit: the draft says so instead of guessing
        assert record["analyzedSha"].startswith("TODO(errkb-draft): unresolved")
        assert "commit unresolved" in made.output
    else:
        assert record["analyzedSha"] == case["sha"]

    refused = run_cli("validate", root=root)
    assert refused.exit_code == 1 and f"{slug}.json: $.record.documentation: a draft stub is not filled in" in refused.output

    fill(root, slug, "Pass a value the library accepts", case["fix"])
    if case["sha"] is None:
        envelope = json.loads((root / "records" / f"{slug}.json").read_text())
        envelope["record"]["analyzedSha"] = "5" + "1" * 39  # what the author found; this test does not check commits
        r = envelope["record"]
        r["githubUrl"] = f"https://github.com/{r['repo']}/blob/{r['analyzedSha']}/{r['filePath']}#L{r['sourceCodeStart']}-L{r['sourceCodeEnd']}"
        (root / "records" / f"{slug}.json").write_text(json.dumps(envelope, indent=2))
    # The drafted wording's source is the release it ran on: reproducing writes the result that backs it.
    reproduced = run_cli("reproduce", slug, "--json", root=root)
    result = json.loads(reproduced.stdout.splitlines()[0])
    assert result["verdict"] == "verified", result["reason"]
    checked = run_cli("validate", root=root)
    assert checked.exit_code == 0, checked.output


def test_an_unfilled_stub_anywhere_is_refused_by_validate_and_add(root, tmp_path):
    made = draft(root, snippet(tmp_path, CASES["pytorch-crf"]["code"]), "--slug", "crf-case", "--sha", CRF_SHA)
    assert made.exit_code == 0, made.output
    fill(root, "crf-case", "Pass a positive number of tags", CASES["pytorch-crf"]["fix"])
    reproduction = root / "reproductions" / "crf-case.py"
    text = reproduction.read_text()
    reproduction.write_text(text.replace("assert CRF(5)", "raise NotImplementedError('TODO(errkb-draft): check it')\n    assert CRF(5)"))
    refused = run_cli("validate", root=root)
    assert refused.exit_code == 1 and "crf-case.py: line" in refused.output and "TODO(errkb-draft): check it" in refused.output
    added = run_cli("add", root / "records" / "crf-case.json", "--replace", root=root)
    assert added.exit_code == 1 and "crf-case.py: line" in added.output
    reproduction.write_text(text)
    record_file = root / "records" / "crf-case.json"
    envelope = json.loads(record_file.read_text())
    envelope["record"]["preventionTips"].append("TODO(errkb-draft): one more")
    record_file.write_text(json.dumps(envelope))
    refused = run_cli("validate", root=root)
    assert refused.exit_code == 1 and "crf-case.json: $.record.preventionTips[1]: a draft stub is not filled in" in refused.output


BAD = {
    "does-not-raise": ("x = 1\n", (), "ran to its end without raising"),
    "user-code": ("def load():\n    raise ValueError('my own check')\n\nload()\n", (), "from your own code"),
    "hangs": ("import time\ntime.sleep(60)\n", ("--timeout", "3"), "ran past its 3 s budget"),
    "syntax": ("def broken(:\n", (), "not valid Python"),
    "in-catalog": ("from torchcrf import CRF\nimport torch\nCRF(3)(torch.zeros(2, 3), torch.zeros(2, dtype=torch.long))\n", (),
                   "already matches this message"),
}


@pytest.mark.parametrize("case", BAD)
def test_bad_snippets_get_a_clear_message_and_nothing_is_written(root, tmp_path, case):
    code, options, expected = BAD[case]
    if case == "in-catalog":
        slug = "torchcrf-emissions-must-have-3-dimensions"
        (root / "records" / f"{slug}.json").write_text((REPO / "records" / f"{slug}.json").read_text())
    before = tree_digest(root), sorted(p.name for p in (root / "reproductions").iterdir())
    made = draft(root, snippet(tmp_path, code), *options)
    assert made.exit_code == 1
    assert expected in made.output, made.output
    assert (tree_digest(root), sorted(p.name for p in (root / "reproductions").iterdir())) == before


def test_a_snippet_that_needs_an_absent_gpu_is_refused(root, tmp_path):
    pytest.importorskip("torch")
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: the snippet would not fail for want of one")
    made = draft(root, snippet(tmp_path, "import torch\ntorch.zeros(2).to('cuda')\n"))
    assert made.exit_code == 1 and "needs a CUDA GPU, and this machine has none" in made.output
    assert not list((root / "records").iterdir())


def test_the_command_must_run_one_python_file(root, tmp_path):
    made = run_cli("draft", "--", "bash", "-c", "exit 1", root=root)
    assert made.exit_code == 1 and "expected a Python snippet and no arguments" in made.output
    made = run_cli("draft", "--slug", "Not_Kebab", "--from", snippet(tmp_path, "x = 1\n"), root=root)
    assert made.exit_code == 1 and "--slug 'Not_Kebab'" in made.output


def _clone_with(path: Path, files: dict[str, bytes], tag: str) -> str:
    """A local git repository holding `files`, tagged `tag`; returns the tag's commit."""
    import subprocess

    for name, data in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_bytes(data)
    git = ["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "release"], ["tag", tag]):
        subprocess.run([*git, *args], check=True, capture_output=True)
    return subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()


def test_upstream_gives_the_release_tags_commit_when_the_file_is_byte_identical(root, tmp_path):
    """packaging's metadata names no commit; a clone whose release tag holds the same file does (issue 19 Must 1)."""
    import packaging
    import packaging.version

    installed = Path(packaging.version.__file__).read_bytes()
    clone = tmp_path / "clone"
    commit = _clone_with(clone, {"src/packaging/version.py": installed, "README": b"x\n"}, packaging.__version__)
    made = draft(root, snippet(tmp_path, CASES["packaging"]["code"]), "--slug", "upstream-case", "--upstream", str(clone))
    assert made.exit_code == 0, made.output
    record = json.loads((root / "records" / "upstream-case.json").read_text())["record"]
    assert (record["analyzedSha"], record["filePath"]) == (commit, "src/packaging/version.py")
    assert record["githubUrl"].startswith(f"https://github.com/pypa/packaging/blob/{commit}/src/packaging/version.py#L")
    assert f"tag {packaging.__version__} of {clone}" in made.output

    # The tag's file differs from the installed one (a patched copy): the commit stays unresolved, and says why.
    for drafted in (root / "records" / "upstream-case.json", root / "reproductions" / "upstream-case.py"):
        drafted.unlink()
    other = tmp_path / "other"
    _clone_with(other, {"src/packaging/version.py": installed + b"# patched\n"}, f"v{packaging.__version__}")
    made = draft(root, snippet(tmp_path, CASES["packaging"]["code"], "other.py"), "--slug", "upstream-other", "--upstream", str(other))
    assert made.exit_code == 0, made.output
    record = json.loads((root / "records" / "upstream-other.json").read_text())["record"]
    assert record["analyzedSha"].startswith("TODO(errkb-draft): unresolved")
    assert "differs from the installed packaging/version.py" in made.output


def test_a_native_error_is_drafted_at_its_cpp_raise_site_with_an_honest_excerpt(root, tmp_path):
    """An error raised in torch's C++ code: the raise site is the C++ location the build reports
    (TORCH_SHOW_CPP_STACKTRACES=1), the wheel has no C++ source, so the excerpt is a stub and its provenance says
    the line is the build's own and the excerpt is unverified; validate refuses the draft until it is filled."""
    made = draft(root, snippet(tmp_path, "import torch\n\ntorch.zeros(3).view(2, 2)\n"), "--slug", "native-case")
    assert made.exit_code == 0, made.output
    record = json.loads((root / "records" / "native-case.json").read_text())["record"]
    assert record["errorClass"] == "RuntimeError" and record["repo"] == "pytorch/pytorch"
    assert record["analyzedSha"] == TORCH_SHA
    assert record["filePath"].startswith(("aten/", "c10/")) and record["filePath"].endswith((".h", ".cpp")), record["filePath"]
    assert f"{record['filePath']}:{record['lineNumber']}" in made.output and "TORCH_SHOW_CPP_STACKTRACES" in made.output
    assert re.search(record["messagePattern"], "shape '[4, 5]' is invalid for input of size 7")
    assert record["githubUrl"].startswith(f"https://github.com/pytorch/pytorch/blob/{TORCH_SHA}/{record['filePath']}#L")
    reproduction = (root / "reproductions" / "native-case.py").read_text()
    provenance = re.search(r"^PROVENANCE = (.*)$", reproduction, re.M).group(1)
    assert "'native-build'" in provenance and "'unverified'" in provenance, provenance
    refused = run_cli("validate", root=root)
    assert refused.exit_code == 1 and "native-case.json: $.record.sourceCode: a draft stub is not filled in" in refused.output


def test_a_name_the_library_lacks_is_drafted_at_its_module_and_reproduces(root, tmp_path):
    """`from packaging.version import LegacyVersion` (packaging 22 removed it): Python raises in the snippet's own
    line; the draft's raise site is the library module that lacks the name, its pattern keeps the name, and the
    filled record is verified by the harness against the real library."""
    made = draft(root, snippet(tmp_path, "from packaging.version import LegacyVersion\n"), "--slug", "legacy-case",
                 "--tag", "drafted")
    assert made.exit_code == 0, made.output
    record = json.loads((root / "records" / "legacy-case.json").read_text())["record"]
    assert (record["filePath"], record["errorClass"]) == ("packaging/version.py", "ImportError")
    assert "LegacyVersion" in record["messagePattern"]
    assert not re.search(record["messagePattern"], "cannot import name 'Version' from 'packaging.version' (/x.py)")
    fill(root, "legacy-case", "Use Version", "    from packaging.version import Version\n    assert Version('1.0')")
    envelope = json.loads((root / "records" / "legacy-case.json").read_text())
    r = envelope["record"]
    r["analyzedSha"] = "5" + "1" * 39
    r["githubUrl"] = f"https://github.com/{r['repo']}/blob/{r['analyzedSha']}/{r['filePath']}#L{r['sourceCodeStart']}-L{r['sourceCodeEnd']}"
    (root / "records" / "legacy-case.json").write_text(json.dumps(envelope, indent=2))
    reproduced = run_cli("reproduce", "legacy-case", "--json", root=root)
    result = json.loads(reproduced.stdout.splitlines()[0])
    assert result["verdict"] == "verified", result["reason"]
    assert "lacks packaging.version.LegacyVersion" in reproduced.stdout


def test_a_missing_top_level_package_is_not_drafted(root, tmp_path):
    made = draft(root, snippet(tmp_path, "import errkb_no_such_package.runner\n"), "--slug", "absent-case")
    assert made.exit_code == 1 and "from your own code" in made.output
    assert not (root / "records" / "absent-case.json").exists()
