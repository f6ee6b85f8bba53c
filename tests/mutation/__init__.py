"""Mutation testing of the permission room (`make mutate`): see plugin.py, mutants.py, scope.py."""
