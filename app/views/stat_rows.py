"""The rows of the Stats sheet: its groups of `result.stats` keys and their labels, shared by
the Stats panel and the A | B | change table (so neither view imports the other)."""

SECTIONS = {  # the sheet's groups of result.stats keys
    "Size": (
        "raw_size",
        "compressed_size",
        "metadata_size",
        "file_size",
        "compression_ratio",
    ),
    "Error": (
        "max_error",
        "worst_track",
        "worst_time",
        "error_p99",
        "max_error_between_samples",
        "worst_time_between_samples",
        "precision_met",
    ),
    "Run": (
        "codec",
        "compression_time",
        "level",
        "num_segments",
        "num_stripped_keyframes",
        "bind_mode",
    ),
    "Clip": ("duration", "num_samples", "num_bones", "sample_rate", "looping", "has_scale"),
}
LABELS = {
    "raw_size": "Raw size",
    "compressed_size": "Compressed size",
    "metadata_size": "Metadata",
    "file_size": "File size (.ssc)",
    "compression_ratio": "Ratio",
    "max_error": "Max error",
    "worst_track": "Worst joint",
    "worst_time": "Worst time",
    "error_p99": "99th percentile",
    "max_error_between_samples": "Max between samples",
    "worst_time_between_samples": "Worst time between",  # its own row: one line at 1280x800
    "precision_met": "Precision met",
    "codec": "Codec",
    "compression_time": "Compression time",
    "level": "Level",
    "num_segments": "Segments",
    "num_stripped_keyframes": "Keyframes stripped",
    "bind_mode": "Bind pose",
    "duration": "Duration",
    "num_samples": "Samples",
    "num_bones": "Joints",
    "sample_rate": "Sample rate",
    "looping": "Looping",
    "has_scale": "Has scale",
}
