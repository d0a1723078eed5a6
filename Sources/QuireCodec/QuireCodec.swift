// QuireCodec module (placeholder until its issue lands).
