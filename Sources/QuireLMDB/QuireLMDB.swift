// QuireLMDB module (placeholder until its issue lands).
