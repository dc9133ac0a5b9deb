"""Platform-neutral quiz logic: banks, rules, rendering and the quiz service."""
