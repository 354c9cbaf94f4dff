"""The codecs, one package each; a codec never imports another."""
