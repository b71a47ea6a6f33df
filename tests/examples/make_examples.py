"""Regenerate the example files from the seed: `python tests/examples/make_examples.py`.

Each invalid file breaks exactly one rule; cases.json says which message and JSON path errkb must report,
and whether JSON Schema can express the rule (so the schema must reject it too).
"""

import copy
import json
from pathlib import Path

HERE = Path(__file__).parent
SEED = HERE.parent / "data" / "seed-record.json"  # the seed as it was given; the catalog's copy was corrected since


def main():
    envelope = json.loads(SEED.read_text())
    record = envelope["record"]
    valid, invalid = HERE / "valid", HERE / "invalid"
    cases = {}

    def write(folder, name, data, text=None):
        path = folder / name
        if text is not None:
            path.write_bytes(text if isinstance(text, bytes) else text.encode())
        else:
            path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")

    def bad(name, path, message, schema, *, data=None, text=None, change=None):
        if change is not None:
            data = copy.deepcopy(envelope)
            change(data["record"])
        write(invalid, name, data, text)
        cases[name] = {"path": path, "message": message, "schema_rejects": schema}

    write(valid, "seed-envelope.txt", None, json.dumps(envelope, ensure_ascii=False, separators=(",", ":")))
    write(valid, "seed-bare.json", record)
    write(valid, "seed-crlf.json", None, (json.dumps(envelope, indent=2, ensure_ascii=False) + "\n").replace("\n", "\r\n"))
    nulls = copy.deepcopy(envelope)
    nulls["record"].update(id="5eed000000000001", slug="seed-with-nulls", exampleFix=None, validationCode=None, preventionTips=[])
    write(valid, "nulls-and-empty-tips.json", nulls)
    cpp = copy.deepcopy(envelope)
    r = cpp["record"]
    r.update(
        id="5eed000000000002",
        slug="cpp-raise-site",
        repo="pytorch/pytorch",
        filePath="aten/src/ATen/native/PackedSequence.cpp",
        errorMessage="'lengths' argument should be a 1D CPU int64 tensor, but got 2D cpu Long tensor",
        messagePattern=r"'lengths' argument should be a 1D CPU int64 tensor, but got \d+D \w+ \w+ tensor",
        errorClass="RuntimeError",
        analyzedSha="cf30153c4c131c8164ee7798e5022d810682e2cb",
        sourceCode="static void checkLongTensor(const Tensor& tensor) {\n  TORCH_CHECK(tensor.dim() == 1 && tensor.device().type() == at::kCPU && tensor.scalar_type() == at::kLong,\n           \"'lengths' argument should be a 1D CPU int64 tensor, but got \",\n            tensor.dim(), \"D \", tensor.device().str(), \" \", tensor.scalar_type(), \" tensor\");\n}",
        sourceCodeStart=21, sourceCodeEnd=25, lineNumber=22,
    )
    r["githubUrl"] = f"https://github.com/{r['repo']}/blob/{r['analyzedSha']}/{r['filePath']}#L21-L25"
    write(valid, "cpp-raise-site.json", cpp)

    bad("truncated.json", "$", "invalid JSON", False, text=json.dumps(envelope)[:500])
    bad("empty.json", "$", "file is empty", False, text="")
    bad("top-level-array.json", "$", "found list, expected a JSON object", True, data=[envelope])
    bad("record-null.json", "$.record", "found null, expected a JSON object", True, data={"record": None, "datasetVersion": envelope["datasetVersion"]})
    bad("missing-field.json", "$.record.errorMessage", "missing required field", True, change=lambda r: r.pop("errorMessage"))
    bad("wrong-type-string-number.json", "$.record.lineNumber", 'found "37", expected: Input should be a valid integer', True, change=lambda r: r.update(lineNumber="37"))
    bad("wrong-type-list.json", "$.record.solutions", "expected: Input should be a valid list", True, change=lambda r: r.update(solutions="Train on one GPU"))
    bad("schema-version-1.json", "$.record.schemaVersion", "found 1, expected: Input should be 2", True, change=lambda r: r.update(schemaVersion=1))
    bad("slug-path-traversal.json", "$.record.slug", 'found "../../etc/passwd"', True, change=lambda r: r.update(slug="../../etc/passwd"))
    bad("slug-spaces.json", "$.record.slug", 'found "data parallel crf"', True, change=lambda r: r.update(slug="data parallel crf"))
    bad("slug-upper-case.json", "$.record.slug", 'found "DataParallel-CRF"', True, change=lambda r: r.update(slug="DataParallel-CRF"))
    bad("short-sha.json", "$.record.analyzedSha", 'found "ddb1299"', True, change=lambda r: r.update(analyzedSha="ddb1299", githubUrl=r["githubUrl"].replace(r["analyzedSha"], "ddb1299")))
    bad("invalid-regex.json", "$.record.messagePattern", "does not compile in RE2: missing )", False, change=lambda r: r.update(messagePattern="DataParallel (not supported"))
    bad("regex-lookahead.json", "$.record.messagePattern", "does not support lookarounds", False, change=lambda r: r.update(messagePattern="DataParallel(?= not) not supported"))
    bad("regex-backreference.json", "$.record.messagePattern", "does not support backreferences", False, change=lambda r: r.update(messagePattern=r"(Data)Parallel \1"))
    bad("regex-does-not-match.json", "$.record.messagePattern", "messagePattern does not match errorMessage", False, change=lambda r: r.update(messagePattern="DistributedDataParallel not supported"))
    bad("line-outside-excerpt.json", "$.record.lineNumber", "lineNumber 70 is outside the excerpt", False, change=lambda r: r.update(lineNumber=70))
    bad("excerpt-line-count.json", "$.record.sourceCode", "sourceCode has 36 lines, expected 37", False, change=lambda r: r.update(sourceCode=r["sourceCode"].split("\n", 1)[1]))
    bad("github-url-inconsistent.json", "$.record.githubUrl", "expected 'https://github.com/hankcs/HanLP/blob/ddb1299bddff079e447af52ec12549c50636bfa8/hanlp/components/taggers/tagger.py#L19-L55'", False, change=lambda r: r.update(githubUrl=r["githubUrl"].replace("#L19-L55", "#L20-L55")))
    zeros = "0" * 40
    bad("placeholder-commit.json", "$.record.analyzedSha", "is a placeholder (one digit repeated), not a commit", False,
        change=lambda r: r.update(analyzedSha=zeros, githubUrl=r["githubUrl"].replace(r["analyzedSha"], zeros)))
    bad("unknown-field.json", "$.record.errorSeverity", "unknown field 'errorSeverity'", True, change=lambda r: r.update(errorSeverity="high"))
    bad("bad-enum.json", "$.record.severity", 'found "fatal"', True, change=lambda r: r.update(severity="fatal"))
    big = copy.deepcopy(envelope)
    big["record"]["documentation"] = "x" * (1024 * 1024)
    bad("over-size-limit.json", "$", "expected at most 1048576 bytes", False, data=big)
    bad("non-utf8.json", "$", "is not UTF-8", False, text=json.dumps(envelope, ensure_ascii=False).replace("CRF is used", "CRF is used \udcff", 1).encode("utf-8", "surrogateescape"))
    bad("absolute-file-path.json", "$.record.filePath", 'found "/hanlp/components/taggers/tagger.py"', True, change=lambda r: r.update(filePath="/" + r["filePath"], githubUrl=r["githubUrl"].replace("/hanlp/", "//hanlp/")))
    bad("dotdot-file-path.json", "$.record.filePath", 'found "hanlp/../../etc/passwd"', True, change=lambda r: r.update(filePath="hanlp/../../etc/passwd", githubUrl=r["githubUrl"].replace("hanlp/components/taggers/tagger.py", "hanlp/../../etc/passwd")))
    bad("malformed-repo.json", "$.record.repo", 'found "HanLP"', True, change=lambda r: r.update(repo="HanLP", githubUrl=r["githubUrl"].replace("hankcs/HanLP", "HanLP")))
    bad("bad-timestamp.json", "$.record.analyzedAt", 'found "27/08/2026 03:36"', True, change=lambda r: r.update(analyzedAt="27/08/2026 03:36"))
    bad("impossible-date.json", "$.record.analyzedAt", "is not a real date and time", False, change=lambda r: r.update(analyzedAt="2026-02-30T03:36:54Z"))
    bad("bad-dataset-version.json", "$.datasetVersion", 'found "yesterday"', True, data={"record": record, "datasetVersion": "yesterday"})
    text = json.dumps(envelope, ensure_ascii=False)
    bad("duplicate-keys.json", "$", "duplicate key 'severity'", False, text=text.replace('"severity":"error"', '"severity":"error","severity":"warning"').replace('"severity": "error"', '"severity": "error", "severity": "warning"'))
    bad("nan.json", "$", "NaN is not valid JSON", False, text=text.replace('"lineNumber": 37', '"lineNumber": NaN'))
    bad("deeply-nested.json", "$", "nested too deeply", False, text="[" * 100_000 + "]" * 100_000)
    bad("empty-solutions.json", "$.record.solutions", "expected: List should have at least 1 item", True, change=lambda r: r.update(solutions=[]))
    bad("empty-string-nullable.json", "$.record.exampleFix", 'found ""', True, change=lambda r: r.update(exampleFix=""))
    bad("bad-id.json", "$.record.id", 'found "228DB24696AAF48G"', True, change=lambda r: r.update(id="228DB24696AAF48G"))
    bad("slug-conflict.json", "$.record.slug", "already exists", False, change=lambda r: r.update(documentation="Another story about the same slug."))
    (invalid / "cases.json").write_text(json.dumps(cases, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
