"""Local models run in this process: GGUF weights through llama-cpp-python."""
