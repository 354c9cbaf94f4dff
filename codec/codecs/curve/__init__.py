"""`curve`: per-track Catmull-Rom splines with knots added where the error needs them."""

from codec.codecs.curve.codec import CurveCodec

__all__ = ["CurveCodec"]
