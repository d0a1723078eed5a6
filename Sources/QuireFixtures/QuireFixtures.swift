// QuireFixtures module (placeholder until its issue lands).
