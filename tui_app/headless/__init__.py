"""Headless: the -p runner and its output formats, a recorded session replayed as text, the export;
Vigil driven by others (the Agent SDKs' control protocol, ACP). May import the runtime, tools,
providers and agents; never Textual.
"""
