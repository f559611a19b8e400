"""The teacher/student turn engine that generate, chain and calibrate share: one turn, the loop
that runs turns, its progress and its settings."""
