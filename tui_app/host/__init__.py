"""The host: one long-running Vigil process per user (per `VIGIL_HOME`) that owns sessions while
clients come and go, the wire they speak over its Unix socket, the client side of it and the CLI
commands (`vigil new`, `ls`, `attach`, `send`, `watch`, `inbox`, `answer`, `end`, `host`). May
import the runtime, the composition root and headless; Textual only through the app, which
`vigil attach` opens over the socket (`remote.py` is the app's runner for it). See docs/architecture.md,
"The host".
"""
