"""`subsample`: the whole clip at the lowest uniform rate that meets the budget."""

from codec.codecs.subsample.codec import SubsampleCodec

__all__ = ["SubsampleCodec"]
