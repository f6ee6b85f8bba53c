"""Panels that stay beside the chat: the project's files (changed ones marked) and the agent's
plan (its todo list). Widgets only: they show what they are given and post what the user picks."""
