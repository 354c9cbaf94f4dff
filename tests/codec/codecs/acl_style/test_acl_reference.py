"""Our sizes and errors against ACL's own results on its regression clips (tests/data)."""

import json

import pytest

import codec
from codec.compression import compress
from tests.codec.helpers import DATA, data_clip


@pytest.fixture(scope="module")
def measured():
    ref = json.loads((DATA / "acl_reference.json").read_text())["clips"]
    out = {}
    for name, levels in ref.items():
        result = compress(codec.load_clip(data_clip(name)))
        out[name] = (result.stats, levels["automatic"])
    return out


def test_all_eight_reference_clips_are_measured(measured):
    assert len(measured) == 8


def test_strict_precision_on_every_reference_clip(measured):
    for name, (ours, _) in measured.items():
        assert ours["max_error"] <= 0.01, name


def test_size_against_acl(measured):
    ours = sum(s["compressed_size"] for s, _ in measured.values())
    acl = sum(a["compressed_size"] for _, a in measured.values())
    assert acl == 61_858
    assert ours <= 1.05 * acl
    for name, (s, a) in measured.items():
        assert s["compressed_size"] <= 1.15 * a["compressed_size"], name


def test_same_sample_and_segment_counts_as_acl(measured):
    for name, (s, a) in measured.items():
        assert s["num_stored_samples"] == a["num_samples"], name
        assert s["num_segments"] == a["num_segments"], name
        assert s["raw_size"] == a["raw_size"] or s["num_stored_samples"] != s["num_samples"]


def test_packed_clips_are_the_unmodified_files():
    import hashlib

    sha = hashlib.sha256(data_clip("cmu_13_07.acl.sjson").read_bytes()).hexdigest()
    assert sha == "9f7c0e56ddc33fb8f27d49a070dc0dd6b506aa47cd9df335c05d99227fda1ab7"
