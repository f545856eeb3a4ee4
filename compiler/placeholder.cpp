// Temporary translation unit until the implementation lands; nothing is implemented yet.
