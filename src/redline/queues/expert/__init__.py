"""The expert queue (corrections-reference.txt): the runs a project's rules want corrected, its rules,
and the engine that moves its items as corrections arrive."""
