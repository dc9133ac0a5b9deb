"""The terminal platform: the local console channel and `quizmaster play`."""
