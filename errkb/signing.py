"""Signed results: who vouches for each file of verifications/.

Beside `verifications/<slug>/<environment>.json` lies `<environment>.intoto.jsonl`: an in-toto Statement (v1)
whose one subject is that file, named by its path and the sha256 of its exact bytes, in a DSSE envelope
(securesystemslib). A maintainer signs with an ed25519 key whose public half is committed under
keys/maintainers/<name>.pub (PEM); `errkb build` verifies offline against those keys only. A result without
a signature file is *unsigned*; a signature that does not verify, or that covers other bytes or another file,
is an error naming the file. ed25519 signatures are deterministic, so signing the same bytes again writes the
same envelope: `errkb sign --all` is idempotent.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import (
    Encoding, NoEncryption, PrivateFormat, PublicFormat, load_pem_private_key, load_pem_public_key,
)
from securesystemslib.dsse import Envelope
from securesystemslib.exceptions import VerificationError
from securesystemslib.signer import CryptoSigner, SSlibKey

from .problems import InvalidInput, Problem
from .store import write_atomically
from .jsonfile import display_name, read_plain

PAYLOAD_TYPE = "application/vnd.in-toto+json"
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://errkb.dev/attestation/verification-result/v1"
KEYS_DIR = Path("keys") / "maintainers"
SUFFIX = ".intoto.jsonl"
TRUST_ENV = "ERRKB_TRUST_UNSIGNED"  # "1": this machine's own unsigned runs count (a maintainer's opt-in)
KEY_ENV = "ERRKB_SIGNING_KEY"  # path of a maintainer's private key (PEM), never inside the repository
MAX_SIGNATURE_BYTES = 64 * 1024


@dataclass(frozen=True)
class MaintainerKey:
    name: str  # the .pub file's stem
    key: SSlibKey

    @property
    def identity(self) -> str:
        return f"{self.name} (ed25519 {self.key.keyid[:16]})"


def trusts_unsigned(flag: bool = False) -> bool:
    return flag or os.environ.get(TRUST_ENV) == "1"


def signature_path(result: Path) -> Path:
    return result.with_name(result.name.removesuffix(".json") + SUFFIX)


def subject_name(result: Path) -> str:
    """The result file as the statement names it, the same from any catalog root or working folder."""
    return f"verifications/{result.parent.name}/{result.name}"


def statement(subject: str, data: bytes) -> bytes:
    """The in-toto Statement over one result file, serialised canonically (sorted keys, no spaces)."""
    body = {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": subject, "digest": {"sha256": hashlib.sha256(data).hexdigest()}}],
        "predicateType": PREDICATE_TYPE,
        "predicate": {},
    }
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode()


def maintainer_keys(root: Path) -> list[MaintainerKey]:
    """The public keys listed in the repository; a file that is not an ed25519 PEM public key is an error."""
    folder = root / KEYS_DIR
    keys = []
    for path in sorted(folder.glob("*.pub")) if folder.is_dir() else []:
        name = display_name(path, root)
        try:
            public = load_pem_public_key(read_plain(path, name, 16 * 1024))
        except (ValueError, UnsupportedAlgorithm) as exc:
            raise InvalidInput([Problem(name, "$", f"not a PEM public key ({exc}), expected an ed25519 public key")]) from None
        if not isinstance(public, Ed25519PublicKey):
            raise InvalidInput([Problem(name, "$", f"a {type(public).__name__}, expected an ed25519 public key")])
        keys.append(MaintainerKey(path.stem, SSlibKey.from_crypto(public)))
    return keys


def load_private_key(path: Path) -> CryptoSigner:
    try:
        private = load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise InvalidInput([Problem(str(path), "$", f"cannot load the private key ({exc}), expected an unencrypted ed25519 PEM key")]) from None
    if not isinstance(private, Ed25519PrivateKey):
        raise InvalidInput([Problem(str(path), "$", f"a {type(private).__name__}, expected an ed25519 private key")])
    return CryptoSigner(private)


def generate_key(private_path: Path, public_path: Path) -> str:
    """A new maintainer key: the private half to `private_path` (mode 0600), the public half to commit."""
    private = Ed25519PrivateKey.generate()
    private_path.parent.mkdir(parents=True, exist_ok=True)
    private_path.touch(mode=0o600, exist_ok=False)
    private_path.write_bytes(private.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))
    public_path.parent.mkdir(parents=True, exist_ok=True)
    public_path.write_bytes(private.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo))
    return SSlibKey.from_crypto(private.public_key()).keyid


def listed_key(root: Path, signer: CryptoSigner) -> MaintainerKey:
    """The listed maintainer key whose private half `signer` holds (a key that is not listed would sign results
    no build accepts)."""
    keyid = signer.public_key.keyid
    for key in maintainer_keys(root):
        if key.key.keyid == keyid:
            return key
    raise InvalidInput([Problem(KEYS_DIR.as_posix(), "$", f"no .pub file holds the public half of key {keyid[:16]}, "
                                                          "expected it listed (commit keys/maintainers/NAME.pub)")])


def sign(root: Path, result: Path, signer: CryptoSigner, keys: list[MaintainerKey] = ()) -> bool:
    """Sign one result file's exact bytes; returns False when it already carries this key's signature of them,
    or a valid signature of them by another of `keys`: a maintainer vouches for the results they ran, and never
    replaces another maintainer's signature of a result they did not run."""
    data = read_plain(result, display_name(result, root))
    if keys and _signed_by_any(root, result, data, keys):
        return False
    envelope = Envelope(statement(subject_name(result), data), PAYLOAD_TYPE, {})
    envelope.sign(signer)
    text = json.dumps(envelope.to_dict(), sort_keys=True, separators=(",", ":")) + "\n"
    target = signature_path(result)
    if target.is_file() and not target.is_symlink() and target.read_text(encoding="utf-8") == text:
        return False
    write_atomically(target, text)
    return True


def _signed_by_any(root: Path, result: Path, data: bytes, keys: list[MaintainerKey]) -> bool:
    try:
        return signer_of(root, result, data, keys) is not None
    except InvalidInput:  # a signature of older bytes, or by no listed key: replaced by this one
        return False


def orphans(root: Path) -> list[Path]:
    """Signature files whose result file is gone (a result renamed or removed)."""
    folder = root / "verifications"
    return sorted(p for p in folder.glob(f"*/*{SUFFIX}") if not p.with_name(p.name.removesuffix(SUFFIX) + ".json").exists())


def signer_of(root: Path, result: Path, data: bytes, keys: list[MaintainerKey]) -> str | None:
    """Who signed this result file's bytes (a maintainer key's identity), None when it is unsigned.

    Raises InvalidInput naming the signature file when it is malformed, names other bytes or another file, or
    verifies with none of the listed keys."""
    target = signature_path(result)
    if not target.exists() and not target.is_symlink():
        return None
    name = display_name(target, root)

    def refuse(path: str, message: str):
        raise InvalidInput([Problem(name, path, message)])

    raw = read_plain(target, name, MAX_SIGNATURE_BYTES)
    try:
        envelope = Envelope.from_dict(json.loads(raw))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        refuse("$", f"not a DSSE envelope ({exc}), expected {{payload, payloadType, signatures}}")
    if envelope.payload_type != PAYLOAD_TYPE:
        refuse("$.payloadType", f"found {envelope.payload_type!r}, expected {PAYLOAD_TYPE!r}")
    subject = subject_name(result)
    if envelope.payload != statement(subject, data):
        refuse("$.payload", f"the statement does not name {subject} with the sha256 of its bytes "
                            "(the result was changed after it was signed, or the signature is another file's)")
    try:
        accepted = envelope.verify([k.key for k in keys], 1) if keys else {}
    except (VerificationError, ValueError):
        accepted = {}
    if not accepted:
        refuse("$.signatures", f"no signature verifies with a key of {KEYS_DIR.as_posix()}/ "
                               f"(key ids {', '.join(s.keyid[:16] for s in envelope.signatures.values()) or 'none'})")
    by_id = {k.key.keyid: k for k in keys}
    return ", ".join(sorted(by_id[keyid].identity for keyid in accepted))


def encoded_payload(envelope_path: Path) -> dict:
    """The statement inside a signature file, decoded (for people and tests)."""
    return json.loads(base64.b64decode(json.loads(envelope_path.read_text(encoding="utf-8"))["payload"]))
