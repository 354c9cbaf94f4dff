"""`acl-2.1`: ACL 2.1's own compressed tracks, read and sampled as ACL does, and ACL's
`acl_compressor` run as a codec beside ours."""
