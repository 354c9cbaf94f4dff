"""Our sizes and errors against ACL's own results on the shared clips (needs ../shared)."""

import json

import pytest

import codec
from codec.compressor import compress
from tests.codec.helpers import SHARED

REFERENCE = SHARED / "reference" / "acl_reference.json"
pytestmark = pytest.mark.skipif(not REFERENCE.exists(), reason="../shared is not beside the repo")


@pytest.fixture(scope="module")
def measured():
    ref = json.loads(REFERENCE.read_text())["clips"]
    out = {}
    for name, levels in ref.items():
        result = compress(codec.load_clip(SHARED / "data" / "acl" / name))
        out[name] = (result.stats, levels["automatic"])
    return out


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
