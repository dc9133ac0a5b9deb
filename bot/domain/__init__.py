"""Pure rules and the records the quiz core and storage share: below both, importing neither."""
