"""Platform adapters: they translate payloads to the neutral model and back."""
