"""Reusable learners. Each exposes ``init`` and a pure, jittable ``update(carry, key)``."""
