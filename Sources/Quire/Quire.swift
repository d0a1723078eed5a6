// Quire module (placeholder until its issue lands).
