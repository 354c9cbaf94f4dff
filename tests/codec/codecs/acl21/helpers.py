"""ACL 2.1's own output kept in tests/data/acl21 (made by acl_compressor, its stats beside
each file), and the raw clips they were made from."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from codec.formats import load_clip, sjson
from codec.model.clip import Clip
from tests.codec.helpers import DATA

FIXTURES = DATA / "acl21"
RAW = {
    "cmu_09_02": DATA / "acl" / "cmu_09_02.acl.sjson",
    "cmu_09_02_with_zero_scale": DATA / "acl" / "cmu_09_02_with_zero_scale.acl.sjson",
    "cmu_81_18_looping": DATA / "acl" / "cmu_81_18_looping.acl.sjson.xz",
    "cmu_49_15_keys6_linear": DATA / "keyed" / "cmu_49_15_keys6_linear.acl.sjson.xz",
}
NAMES = sorted(p.name for p in FIXTURES.glob("*.acl"))


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


@cache
def acl_stats(name: str) -> dict:
    """ACL's stats of the run that wrote `name` (its first run)."""
    path = FIXTURES / (name.removesuffix(".acl") + ".acl_stats")
    return dict(sjson.parse(path.read_text(), path)["runs"][0])


@cache
def raw_clip(name: str) -> Clip:
    """The raw clip `name` was compressed from."""
    return load_clip(RAW[name.split(".")[0]])


def raw_path(name: str) -> Path:
    return RAW[name.split(".")[0]]
