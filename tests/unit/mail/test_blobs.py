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


def test_a_store_written_in_the_two_level_layout_is_still_read(tmp_path: Path) -> None:
    root = tmp_path / "blobs"
    digest = hashlib.sha256(b"from an older version").hexdigest()
    older = root / digest[:2] / digest[2:4] / digest
    older.parent.mkdir(parents=True)
    older.write_bytes(b"from an older version")
    store = BlobStore(root)
    assert store.get(digest) == b"from an older version" and store.exists(digest)
    assert store.put(b"from an older version") == digest  # known already: not written a second time
    assert not (root / digest[:2] / digest).exists()
    fresh = store.put(b"new mail")
    assert (root / fresh[:2] / fresh).read_bytes() == b"new mail"
    assert store.get(fresh) == b"new mail"


def test_a_new_store_is_flat_and_its_files_are_private(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    digest = store.put(b"secret mail")
    path = tmp_path / "blobs" / digest[:2] / digest
    assert path.read_bytes() == b"secret mail"
    assert path.stat().st_mode & 0o077 == 0
    assert (tmp_path / "blobs" / ".layout-flat").exists()
