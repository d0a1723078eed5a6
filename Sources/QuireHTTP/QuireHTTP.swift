// QuireHTTP module (placeholder until its issue lands).
