"""`keyreduce`: per-track linear key reduction with time markers (the 2016 survey)."""

from codec.codecs.keyreduce.codec import KeyReduceCodec

__all__ = ["KeyReduceCodec"]
