"""The course's notebook layer (``import memorylib`` loads none of it); layers: pyproject.toml."""
