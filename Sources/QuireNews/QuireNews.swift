// QuireNews module (placeholder until its issue lands).
