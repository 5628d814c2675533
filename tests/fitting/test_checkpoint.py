"""Checkpoints: atomic saves, resume with the same meta, fresh start otherwise; chunked resumable maps."""

import json

import numpy as np
import pytest

from fitting.checkpoint import Checkpoint, file_digest, resumable_map


def test_checkpoint_resumes_only_with_the_same_meta(tmp_path):
    path = tmp_path / "run.checkpoint.json"
    first = Checkpoint(path, {"data": "a", "steps": (1, 2)})
    assert first.resumed == 0 and not first.discarded
    first.save("x", {"value": 1.5})
    again = Checkpoint(path, {"data": "a", "steps": [1, 2]})
    assert again.resumed == 1 and again["x"] == {"value": 1.5} and "x" in again
    other = Checkpoint(path, {"data": "b", "steps": [1, 2]})
    assert other.resumed == 0 and other.discarded
    path.write_text("{torn")
    assert Checkpoint(path, {"data": "a"}).discarded
    again.finish()
    assert not path.exists()
    assert not list(tmp_path.glob(".*"))  # no temporary files left behind


def test_resumable_map_skips_finished_chunks_and_equals_the_plain_map(tmp_path):
    x = np.linspace(0.0, 2.0, 11)
    calls = []

    def mapper(fn, *arrays):
        calls.append(arrays[0].size)
        return np.asarray([fn(*a) for a in zip(*arrays)])

    def interrupted(fn, *arrays):
        if len(calls) == 2:
            raise KeyboardInterrupt
        return mapper(fn, *arrays)

    fn = lambda a, b: a * b  # noqa: E731
    checkpoint = Checkpoint(tmp_path / "c.json", {"x": x.tolist()})
    with pytest.raises(KeyboardInterrupt):
        resumable_map(fn, x, x, chunk=4, checkpoint=checkpoint, mapper=interrupted)
    assert sorted(json.loads((tmp_path / "c.json").read_text())["results"]) == ["0:4", "4:8"]
    calls.clear()
    result = resumable_map(fn, x, x, chunk=4, checkpoint=Checkpoint(tmp_path / "c.json", {"x": x.tolist()}), mapper=mapper)
    np.testing.assert_array_equal(result, x * x)
    assert calls == [4]  # only the last chunk, padded to the chunk size
    with pytest.raises(ValueError, match="chunk must be"):
        resumable_map(fn, x, chunk=0, checkpoint=checkpoint)


def test_resumable_map_with_the_sharded_map(tmp_path):
    x = np.linspace(1.0, 2.0, 7)
    result = resumable_map(lambda a: a**2, x, chunk=3, checkpoint=Checkpoint(tmp_path / "c.json", {}))
    np.testing.assert_allclose(result, x**2)


def test_file_digest_changes_with_content(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("1,2\n")
    b.write_text("1,3\n")
    assert file_digest(a) != file_digest(b) and len(file_digest(a)) == 64
