"""What the survey's codecs (subsample, keyreduce, curve, wavelet, authored) share; no codec
itself.

Each of those codecs stores every sub-track (rotation, translation, scale of a joint) on its
own, so they share one frame, a part per module:

- `byte_io`: the byte helpers that check every length, and the seal (raw, deflate or LZMA2);
- `streams`: integers on the wire (zigzag, LEB128, delta streams) and values quantised in
  their own range;
- `frame`: the sub-track kinds (default, constant, animated), the header and the kinds as
  every payload starts;
- `local_error`: the error of a sub-track on its joint's dominant shell (what a track fitter
  measures);
- `fitting`: the loop that drives every fit by the object-space shell error of the whole
  clip, and the float64 check every encode ends with;
- `decoder`: the decoder base, which turns the source sample grid's rounding modes into
  positions at which a codec evaluates its own representation; `grid` and `keyed`: the
  tables of tracks on one grid (subsample, wavelet) and of keyed tracks (keyreduce, curve).

Positions: a position `u` is a time in source samples (`t * sample_rate`); the source sample
`i` sits at `u = i`. Rounding (floor, ceil, nearest, per joint) snaps `u` to a source sample
first, exactly as `codec.model.sampling.sample_keys` does for the raw clip, so stepped playback
means the same for every codec; `none` evaluates the codec's representation at `u`.
"""
