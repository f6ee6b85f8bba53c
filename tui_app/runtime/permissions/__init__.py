"""Permissions: Claude Code-compatible rules, modes, bash parsing and classification, the ApprovalBroker.
May import the runtime's base modules (contract, events, display); never the pipeline, a tool or the UI.
"""
