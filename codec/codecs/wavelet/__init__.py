"""`wavelet`: Daubechies D4 per track in blocks of 16, sub-band quantisation, deflate."""

from codec.codecs.wavelet.codec import WaveletCodec

__all__ = ["WaveletCodec"]
