"""The codecs by name and id, the container that names them, and the command line over both."""

from __future__ import annotations

import io
import struct

import numpy as np
import pytest

import codec
from codec.cli import main
from codec.codecs import container, registry
from codec.codecs.base import Codec, Decoder, Encoded
from codec.errors import CompressedFormatError, SettingsError
from tests.codec.helpers import DATA, chain_clip


def run(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def test_every_codec_has_a_unique_name_and_id_and_the_interface() -> None:
    codecs = [registry.get(n) for n in registry.names()]
    assert registry.names()[0] == registry.DEFAULT == "acl-style"
    assert len({c.codec_id for c in codecs}) == len(codecs)
    for c in codecs:
        assert isinstance(c, Codec) and c.description and "\n" not in c.description
        assert registry.by_id(c.codec_id) is c


def test_unknown_names_and_ids_are_named() -> None:
    with pytest.raises(SettingsError, match="unknown codec 'zip'.*acl-style"):
        registry.get("zip")
    with pytest.raises(CompressedFormatError, match="codec id 77 at byte 5"):
        registry.by_id(77)


def test_acl_style_encodes_a_payload_its_decode_reads_back() -> None:
    clip = chain_clip(num_samples=20)
    acl = registry.get("acl-style")
    enc = acl.encode(clip, codec.CompressionSettings())
    assert isinstance(enc, Encoded) and isinstance(enc.decoder, Decoder)
    again = acl.decode(enc.payload, clip.skeleton)
    np.testing.assert_array_equal(
        again.decode_source().rotations, enc.decoder.decode_source().rotations
    )
    times = np.linspace(0.0, enc.decoder.duration, 17)
    for rounding in ("none", "floor", "ceil", "nearest"):
        batched = enc.decoder.sample_times(times, rounding)
        one = [enc.decoder.sample(float(t), rounding) for t in times]
        for k in range(3):
            np.testing.assert_allclose(batched[k], np.stack([p[k] for p in one]), atol=1e-12)
    assert enc.details["level"] == "highest" and enc.costs is not None


@pytest.mark.parametrize("with_skeleton", [True, False])
def test_the_container_round_trips_any_codecs_payload(with_skeleton: bool) -> None:
    sk = chain_clip().skeleton
    frame = container.write(4, b"\x01\x02payload", sk if with_skeleton else None)
    back = container.read(frame.data)
    assert (back.codec_id, back.payload, back.version) == (4, b"\x01\x02payload", 3)
    assert back.compressed_size == container.HEADER_SIZE + 9 == frame.compressed_size
    if with_skeleton:
        assert back.skeleton is not None and back.skeleton.names == sk.names
        np.testing.assert_array_equal(back.skeleton.precision, sk.precision)
    else:
        assert back.skeleton is None and back.metadata_size == 0
    cut = bytearray(frame.data[:-1])
    struct.pack_into("<I", cut, 12, len(cut))
    with pytest.raises(CompressedFormatError):
        container.read(bytes(cut))


def test_cli_lists_the_codecs() -> None:
    code, out, err = run("codecs")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert len(lines) == len(registry.names()) + 1 and lines[-1].startswith("auto ")
    assert lines[0].startswith("acl-style ") and "(default)" in lines[0]
    assert registry.get("acl-style").description in lines[0]


def test_cli_compress_chooses_a_codec_and_names_it(tmp_path) -> None:
    clip = DATA / "acl" / "cmu_09_02.acl.sjson"
    code, out, err = run("compress", clip, "--codec", "acl-style", "-o", tmp_path / "a.ssc")
    assert code == 0, err
    assert "codec acl-style" in out
    code, out, err = run("info", tmp_path / "a.ssc")
    assert code == 0 and "codec            acl-style (id 0)" in out
    code, out, err = run("compress", clip, "--codec", "zip", "-o", tmp_path / "b.ssc")
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "--codec" in err and "acl-style" in err and not (tmp_path / "b.ssc").exists()


class _Padded:
    """A planted codec: acl-style's encoding with `pad` bytes more, strict or not."""

    description = "test only"

    def __init__(self, name: str, codec_id: int, pad: int, strict: bool) -> None:
        self.name, self.codec_id, self.pad, self.strict = name, codec_id, pad, strict

    def encode(self, clip, settings, progress=None, cancelled=None):  # type: ignore[no-untyped-def]
        enc = registry.get("acl-style").encode(clip, settings, progress, cancelled)
        payload = enc.payload[: len(enc.payload) + self.pad] + bytes(max(self.pad, 0))
        return Encoded(payload, enc.decoder, {**enc.details, "strict": self.strict}, None)

    def decode(self, payload, skeleton):  # type: ignore[no-untyped-def]
        raise NotImplementedError


def test_auto_keeps_the_smallest_strict_encoding(monkeypatch: pytest.MonkeyPatch) -> None:
    clip = chain_clip(num_samples=20)
    alone = codec.compress(clip)  # acl-style, which the planted codecs pad or trim
    assert alone.codec_name == "acl-style"
    planted = {  # the real codecs left out: this is about how auto chooses among candidates
        "acl-style": registry.CODECS["acl-style"],
        "bigger": _Padded("bigger", 90, 50, True),
        "loose": _Padded("loose", 91, -30, False),  # smaller, but not within the budget
        "smaller": _Padded("smaller", 92, -5, True),
    }
    monkeypatch.setattr(registry, "CODECS", planted)
    r = codec.compress(clip, codec.CompressionSettings(codec="auto"))
    assert r.codec_name == "smaller"  # (its decoder is acl-style's, and says so in the stats)
    assert r.stats["compressed_size"] == alone.stats["compressed_size"] - 5
    assert container.read(r.data).codec_id == 92


@pytest.mark.parametrize(
    ("name", "winner"),
    [("keyed/cmu_49_15_keys6_linear.acl.sjson.xz", "curve"), ("acl/cmu_09_02.acl.sjson", None)],
)
def test_auto_on_real_clips_is_never_larger_than_acl_style_and_says_why(name, winner) -> None:
    clip = codec.load_clip(DATA / name)
    settings = codec.CompressionSettings(precision=0.01, shell_distance=3.0, skin_error=False)
    alone = codec.compress(clip, settings)
    auto = codec.compress(clip, settings.__class__(**{**settings.__dict__, "codec": "auto"}))
    s = auto.stats
    assert s["auto"]["chosen"] == auto.codec_name == s["codec"]
    assert set(s["auto"]["codecs"]) == {c.name for c in registry.chosen(registry.AUTO, clip)}
    sizes = {n: c["compressed_size"] for n, c in s["auto"]["codecs"].items() if c["strict"]}
    assert s["compressed_size"] == min(sizes.values()) == sizes[auto.codec_name]
    assert s["auto"]["codecs"]["acl-style"]["compressed_size"] == alone.stats["compressed_size"]
    assert s["compressed_size"] <= alone.stats["compressed_size"] and s["precision_met"]
    if winner is not None:  # keyed with linear in-betweens: the curve codec stores the keys
        assert auto.codec_name == winner
