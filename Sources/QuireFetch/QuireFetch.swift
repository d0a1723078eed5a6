// QuireFetch module (placeholder until its issue lands).
