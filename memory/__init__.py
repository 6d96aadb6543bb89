"""Memories of every type (DESIGN.md, memory): extraction, dedup and reinforcement, the trust policy, graduation, procedures and censors, working memory, scratchpads and trusted state."""
