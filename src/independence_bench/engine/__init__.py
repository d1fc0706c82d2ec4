"""The engine: an asyncio task graph that runs conversations and judges them."""
