"""Runtime: system prompt sections, skills, activation, compaction and the turn loop."""
