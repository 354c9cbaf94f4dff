"""The ACL-style codec: constant/default tracks, per-segment bit rates, the .ssc layout."""
