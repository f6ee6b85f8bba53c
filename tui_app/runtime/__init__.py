"""Vigil's tool runtime: UI-agnostic, observable as session events. Never imports Textual."""
