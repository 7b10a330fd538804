"""ctorch.utils: hooks and data loading helpers."""
