"""`authored`: the file's own keys and interpolation, quantised, read as the file reads them."""

from codec.codecs.authored.codec import AuthoredCodec

__all__ = ["AuthoredCodec"]
