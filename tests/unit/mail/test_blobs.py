"""The content-addressed blob store on a real directory."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from plmail.mail.blobs import BlobStore


def test_blobs_are_named_by_content_and_written_once(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    first = store.put(b"hello")
    assert first == hashlib.sha256(b"hello").hexdigest()
    assert store.put(b"hello") == first  # the same bytes again cost nothing
    assert store.get(first) == b"hello"
    names = store.put_many([b"part %d" % i for i in range(10)] + [b"hello"])
    assert [store.get(n) for n in names] == [b"part %d" % i for i in range(10)] + [b"hello"]
    assert not list((tmp_path / "blobs").rglob(".incoming-*"))  # no half-written files are left


def test_a_directory_removed_while_running_is_made_again(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    digest = store.put(b"one")
    shutil.rmtree(tmp_path / "blobs")
    # the store remembers the fan-out directory it made; writing there again must not fail
    again = store.put(b"one")
    assert again == digest and store.get(digest) == b"one"
