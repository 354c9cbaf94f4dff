"""Measurement: any decoder against the raw clip (shell error, between samples, skin error,
stats). Imports no codec."""
