"""Example files, one case each: errkb must accept every valid one and reject every invalid one clearly."""

import json
from pathlib import Path

import jsonschema
import pytest

from conftest import REPO, run_cli, tree_digest

EXAMPLES = REPO / "tests" / "examples"
VALID = sorted((EXAMPLES / "valid").iterdir())
CASES = json.loads((EXAMPLES / "invalid" / "cases.json").read_text())
SCHEMA = json.loads((REPO / "schema" / "error-record.v2.schema.json").read_text())


def test_every_invalid_file_has_a_case():
    files = {p.name for p in (EXAMPLES / "invalid").iterdir()} - {"cases.json"}
    assert files == set(CASES)


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_valid_example_is_added(tmp_path, path):
    result = run_cli("add", path, root=tmp_path)
    assert result.exit_code == 0, result.stderr
    assert "added:" in result.stdout
    assert len(list((tmp_path / "records").glob("*.json"))) == 1


@pytest.mark.parametrize("name", sorted(CASES))
def test_invalid_example_is_rejected_and_nothing_written(seeded_root, name):
    case = CASES[name]
    path = EXAMPLES / "invalid" / name
    before = tree_digest(seeded_root)
    result = run_cli("add", path, root=seeded_root)
    assert result.exit_code == 1
    assert f"{path}: {case['path']}: " in result.stderr
    assert case["message"] in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert tree_digest(seeded_root) == before


@pytest.mark.parametrize("name", sorted(n for n in CASES if n != "slug-conflict.json"))
def test_validate_reports_the_same_problem(name):
    path = EXAMPLES / "invalid" / name
    result = run_cli("validate", path)
    assert result.exit_code == 1
    assert CASES[name]["message"] in result.stderr


def _reject(constant):
    raise ValueError(f"{constant} is not JSON")


def _plain_json(path: Path):
    """What a non-Python consumer's JSON parser would see, or None if it is not JSON at all."""
    try:
        return json.loads(path.read_bytes().decode("utf-8"), parse_constant=_reject)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_schema_accepts_valid_examples(path):
    jsonschema.Draft202012Validator(SCHEMA).validate(json.loads(path.read_bytes().decode("utf-8-sig")))


@pytest.mark.parametrize("name", sorted(CASES))
def test_schema_agrees_where_it_can_express_the_rule(name):
    data = _plain_json(EXAMPLES / "invalid" / name)
    if data is None:
        assert not CASES[name]["schema_rejects"]
        return
    schema_rejects = not jsonschema.Draft202012Validator(SCHEMA).is_valid(data)
    assert schema_rejects == CASES[name]["schema_rejects"], "the case's schema_rejects flag is wrong"


def test_schema_file_is_generated_from_the_models():
    from errkb.schema import schema_text

    assert (REPO / "schema" / "error-record.v2.schema.json").read_text() == schema_text()
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$id"].endswith("error-record.v2.schema.json")
