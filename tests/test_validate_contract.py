"""`errkb validate` checks a record against its reproduction's WORDINGS and PROVENANCE (issue 18), on real
catalog records copied into a temporary catalog with their committed results, the contract literals appended to
their reproductions' copies. The good literals pass; each planted defect is caught, naming the file and field."""

from __future__ import annotations

import json
import shutil

import pytest
from web_support import Client

from conftest import REPO, run_cli
from errkb.web.serve import make_datasette

TARGET = "cross-entropy-target-out-of-bounds"  # native: LossNLL.cpp, results for six torch releases
BATCHNORM = "batchnorm-one-value-per-channel"  # Python: torch/nn/functional.py, as installed

COMMON = {
    TARGET: (
        'VALID = {"remapped": "valid_remapped"}\n'
        'CODE_NAMES = {"exampleFix": ["torch", "labels"], "validationCode": ["logits", "targets", "ignore_index"]}\n'
        "def valid_remapped():\n    return {}\n"
    ),
    BATCHNORM: (
        'VALID = {"bigger-batches": "valid_batches"}\n'
        'CODE_NAMES = {"exampleFix": ["DataLoader", "dataset", "model", "torch", "x"], "validationCode": ["model", "loader"]}\n'
        "def valid_batches():\n    return {}\n"
    ),
}
GOOD = {
    TARGET: (
        'WORDINGS = [\n'
        '    {"text": "Target 5 is out of bounds.", "source": "torch==1.13.1", "match": "pattern"},\n'
        '    {"text": "CUDA error: device-side assert triggered", "source": "pytorch/pytorch#50259", "match": "none",\n'
        '     "why": "the CUDA run ends without the target value"},\n'
        ']\n'
        'PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "upstream-copy",\n'
        '              "commit": "cf30153c4c131c8164ee7798e5022d810682e2cb", "offset": 0}\n'
    ),
    BATCHNORM: 'PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}\n',
}


def catalog_with(tmp_path, literals: dict[str, str], records: dict[str, dict] | None = None):
    """A catalog of the two records, their committed results, and their reproductions plus `literals`."""
    root = tmp_path / "catalog"
    for folder in ("records", "reproductions", "verifications"):
        (root / folder).mkdir(parents=True)
    shutil.copytree(REPO / "keys", root / "keys")  # the public keys that verify the copied results' signatures
    for slug in (TARGET, BATCHNORM):
        shutil.copy(REPO / "records" / f"{slug}.json", root / "records")
        shutil.copytree(REPO / "verifications" / slug, root / "verifications" / slug)
        text = (REPO / "reproductions" / f"{slug}.py").read_text(encoding="utf-8")
        (root / "reproductions" / f"{slug}.py").write_text(text + "\n\n" + COMMON[slug] + literals[slug], encoding="utf-8")
    return root


def validate(root):
    result = run_cli("validate", root=root)
    return result.exit_code, [line.removeprefix("error: ") for line in result.stderr.splitlines()]


def test_good_wordings_and_provenance_pass(tmp_path):
    code, errors = validate(catalog_with(tmp_path, GOOD))
    assert (code, errors) == (0, [])


@pytest.mark.parametrize(
    "slug, change, expected",
    [
        # a declared wording the pattern misses
        (TARGET, ('"match": "none",\n     "why": "the CUDA run ends without the target value"', '"match": "pattern"'),
         "records/cross-entropy-target-out-of-bounds.json: $.record.messagePattern: does not accept "
         "'CUDA error: device-side assert triggered', which WORDINGS[1] (pytorch/pytorch#50259) declares as matched"),
        # a wording the release's committed result did not print
        (TARGET, ('"text": "Target 5 is out of bounds."', '"text": "Target 5 out of bounds"'),
         "reproductions/cross-entropy-target-out-of-bounds.py: WORDINGS[0].text: 'Target 5 out of bounds' is not what "
         "the committed result(s) for torch==1.13.1 observed: ['Target 5 is out of bounds.']"),
        # a release no committed result backs
        (TARGET, ('"source": "torch==1.13.1"', '"source": "torch==1.5.0"'),
         "reproductions/cross-entropy-target-out-of-bounds.py: WORDINGS[0].source: no committed result for torch==1.5.0 backs"),
        # a native raise line the build does not report
        (TARGET, ('"version": "2.13.0", "excerpt"', '"version": "1.13.1", "excerpt"'),
         "records/cross-entropy-target-out-of-bounds.json: $.record.lineNumber: is 259, but the torch 1.13.1 build "
         "reports the raise at aten/src/ATen/native/LossNLL.cpp:226"),
        # an upstream copy whose offset does not add up
        (TARGET, ('{"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "upstream-copy",\n'
                  '              "commit": "cf30153c4c131c8164ee7798e5022d810682e2cb", "offset": 0}',
                  '{"checked": "upstream-copy", "repo": "pytorch/pytorch", "commit": "68e217b9' + "0" * 32 + '",'
                  ' "path": "aten/src/ATen/native/LossNLL.cpp", "line": 258, "offset": 0}'),
         "reproductions/cross-entropy-target-out-of-bounds.py: PROVENANCE.offset: is 0, but lineNumber 259 - line 258 of the copy is 1"),
        # an 'installed' excerpt of a native file
        (TARGET, ('{"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "upstream-copy",\n'
                  '              "commit": "cf30153c4c131c8164ee7798e5022d810682e2cb", "offset": 0}',
                  '{"checked": "installed", "dist": "torch", "version": "2.13.0"}'),
         "PROVENANCE.checked: aten/src/ATen/native/LossNLL.cpp is native source, which no installed package holds"),
    ],
    ids=["pattern-misses-wording", "wording-not-observed", "release-without-result", "native-line-wrong",
         "upstream-offset-wrong", "installed-native"],
)
def test_planted_wording_and_provenance_defects_are_caught(tmp_path, slug, change, expected):
    literals = dict(GOOD)
    assert change[0] in literals[slug]
    literals[slug] = literals[slug].replace(*change)
    code, errors = validate(catalog_with(tmp_path, literals))
    assert code == 1
    assert any(expected in error for error in errors), errors


def test_an_installed_excerpt_is_reread_byte_for_byte(tmp_path):
    root = catalog_with(tmp_path, GOOD)
    path = root / "records" / f"{BATCHNORM}.json"
    text = path.read_text(encoding="utf-8")
    assert "raise ValueError(" in text
    path.write_text(text.replace("raise ValueError(", "raise  ValueError(", 1), encoding="utf-8")
    code, errors = validate(root)
    assert code == 1
    (error,) = errors
    assert error.startswith(f"{path}: $.record.sourceCode: is not lines 2840-2856 of the installed torch 2.13.0")
    assert "reads '        raise ValueError(" in error and "the record has '        raise  ValueError(" in error


@pytest.mark.parametrize(
    "wordings, message",
    [
        ('[{"text": "x", "source": "torch==2.13.0", "match": "none"}]', "'why' must say why the record does not match it"),
        ('[{"text": "x", "source": "torch 2.13.0", "match": "pattern"}]', "WORDINGS[0]['source'] is 'torch 2.13.0', expected a release"),
        ('[{"text": "x", "source": "pytorch/pytorch#50259", "match": "regex"}]', "WORDINGS[0]['match'] is 'regex'"),
    ],
)
def test_malformed_wordings_are_refused(tmp_path, wordings, message):
    literals = dict(GOOD, **{TARGET: GOOD[TARGET].split("WORDINGS")[0] + f"WORDINGS = {wordings}\n" + "PROVENANCE" + GOOD[TARGET].split("PROVENANCE")[1]})
    code, errors = validate(catalog_with(tmp_path, literals))
    assert code == 1
    assert any("invalid reproduction reproductions/cross-entropy-target-out-of-bounds.py" in e and message in e for e in errors), errors


def test_show_json_and_the_record_page_state_the_provenance(tmp_path):
    root = catalog_with(tmp_path, GOOD)
    shown = json.loads(run_cli("show", "--json", TARGET, root=root).stdout)
    assert shown["provenance"]["checked"] == "native-build"
    assert shown["provenanceSummary"] == (
        "raise line as the torch 2.13.0 build reports it; excerpt from the upstream source at cf30153c4c (offset 0)")
    assert run_cli("build", root=root).exit_code == 0
    client = Client(make_datasette(root / "catalog.db"))
    html = client.get(f"/-/errkb/record/{BATCHNORM}").text
    assert "Excerpt provenance: excerpt identical to the installed torch 2.13.0 file" in html
    (root / "reproductions" / f"{BATCHNORM}.py").unlink()
    assert "Excerpt provenance: not stated" in client.get(f"/-/errkb/record/{BATCHNORM}").text
