"""Small bundled examples; nothing here is imported by the rest of Holon."""
