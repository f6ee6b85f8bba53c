"""Results: budgets, serialisation for the model, artifacts, display projections and sanitising.
May import the runtime's base modules (contract, events, messages, display); never the pipeline or the UI.
"""
