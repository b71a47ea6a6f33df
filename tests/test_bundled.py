"""The catalog that ships in the wheel: found outside any catalog folder, built once into the cache, reused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from errkb import bundled
from errkb.cli import cli

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def shipped(tmp_path: Path) -> Path:
    """A package-data folder like the wheel's errkb/_catalog/, with two real records."""
    data = tmp_path / "data"
    (data / "records").mkdir(parents=True)
    for slug in ("state-dict-keys-have-module-prefix", "dataparallel-object-has-no-attribute"):
        shutil.copy(REPO / "records" / f"{slug}.json", data / "records")
    return data


def test_built_once_into_the_cache_then_reused(shipped: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    root = bundled.bundled_root(shipped, cache)
    assert root is not None and root.parent == cache
    assert sorted(path.name for path in (root / "records").iterdir()) == [
        "dataparallel-object-has-no-attribute.json", "state-dict-keys-have-module-prefix.json"]
    database = root / "catalog.db"
    built = database.stat().st_mtime_ns
    assert bundled.bundled_root(shipped, cache) == root
    assert database.stat().st_mtime_ns == built  # reused, not rebuilt
    assert [path.name for path in cache.iterdir()] == [root.name]  # no half-built folder left behind


def test_rebuilt_when_the_bundled_content_changes(shipped: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    first = bundled.bundled_root(shipped, cache)
    (shipped / "records" / "dataparallel-object-has-no-attribute.json").unlink()
    second = bundled.bundled_root(shipped, cache)
    assert second != first
    assert [path.name for path in (second / "records").iterdir()] == ["state-dict-keys-have-module-prefix.json"]


def test_verification_results_ship_with_the_records(shipped: Path, tmp_path: Path):
    from test_verifications import result

    shutil.copy(REPO / "records" / "dataparallel-not-supported-when-crf-is-used.json", shipped / "records")
    data = result(shipped)  # a result of the seed, shaped as `errkb reproduce` writes it
    path = shipped / "verifications" / data["slug"] / f"{data['environment']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    root = bundled.bundled_root(shipped, tmp_path / "cache")
    assert (root / "verifications" / data["slug"] / path.name).is_file()


def test_nothing_shipped_means_no_bundled_catalog(tmp_path: Path):
    assert bundled.bundled_root(tmp_path / "nothing", tmp_path / "cache") is None


def test_a_root_without_records_is_no_catalog(tmp_path: Path):
    with pytest.raises(bundled.NoCatalog, match="has no records"):
        bundled.locate(tmp_path)


def test_match_without_any_catalog_says_so_and_never_no_match(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ERRKB_ROOT", raising=False)
    monkeypatch.setattr(bundled, "find_root", lambda: None)
    monkeypatch.setattr(bundled, "bundled_root", lambda: None)
    paste = tmp_path / "paste.txt"
    paste.write_text("AttributeError: 'DataParallel' object has no attribute 'generate'\n")
    result = CliRunner().invoke(cli, ["match", str(paste)])
    assert result.exit_code == 2
    assert "no catalog found" in result.output
    assert "no match" not in result.output
    with pytest.raises(bundled.NoCatalog):
        import errkb

        errkb.match(paste.read_text())


def test_match_outside_a_catalog_uses_the_bundled_one(shipped: Path, tmp_path: Path, monkeypatch):
    work = tmp_path / "project"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("ERRKB_ROOT", raising=False)
    monkeypatch.setattr(bundled, "find_root", lambda: None)
    build = bundled.bundled_root
    monkeypatch.setattr(bundled, "bundled_root", lambda: build(shipped, tmp_path / "cache"))
    paste = work / "paste.txt"
    paste.write_text('RuntimeError: Error(s) in loading state_dict for Net:\n\tUnexpected key(s) in state_dict: "module.fc.weight"\n')
    result = CliRunner().invoke(cli, ["match", str(paste)])
    assert result.exit_code == 0, result.output
    assert "[state-dict-keys-have-module-prefix, score" in result.output.splitlines()[0]
    assert not (work / "catalog.db").exists()  # nothing written into the user's project


def test_a_root_option_without_records_is_no_catalog_on_the_command_line(tmp_path: Path):
    paste = tmp_path / "paste.txt"
    paste.write_text("AttributeError: 'DataParallel' object has no attribute 'generate'\n")
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(cli, ["--root", str(tmp_path / "empty"), "match", str(paste)])
    assert result.exit_code == 2
    assert "has no records/*.json" in result.output and "no match" not in result.output
