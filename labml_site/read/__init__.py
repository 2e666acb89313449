"""Reading sources: which files become which pages (`structure`), a file's sections (`sections`),
and each section's prose as translation keys with placeholders (`prose`, where the key format
lives and nowhere else)."""
