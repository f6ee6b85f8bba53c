"""What a sandboxed command is not shown: the credentials in the home directory, Vigil's and Claude
Code's own state, the user's session sockets, and the variables of the environment that look like
secrets (docs/architecture.md, the security boundary).

The lists are data. A path is hidden when it exists (a directory: an empty read-only tmpfs; a file:
an empty read-only file); a variable is left out of every Bash command's environment. Settings
bring one back: `sandbox.filesystem.allowRead` (Claude Code's key) names a path to show, and
`sandbox.env.keep` (Vigil's) the variables to keep (names, `*` wildcards allowed).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase

#: relative to the home directory
HOME_SECRETS = (
    # keys and cloud credentials
    ".ssh",
    ".aws",
    ".config/gcloud",
    ".azure",
    ".kube",
    ".gnupg",
    ".netrc",
    ".docker/config.json",
    ".npmrc",
    ".pypirc",
    # package managers' settings, where private index tokens live
    ".config/pip/pip.conf",
    ".pip/pip.conf",
    ".yarnrc.yml",
    ".m2/settings.xml",
    ".gradle/gradle.properties",
    ".git-credentials",
    ".config/git/credentials",
    ".config/gh",
    ".config/hub",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
    ".pgpass",
    ".my.cnf",
    ".s3cfg",
    ".config/rclone",
    ".password-store",
    ".local/share/password-store",
    ".local/share/keyrings",
    ".pki",
    # browser profiles (cookies, saved passwords)
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
    # agents' own state (sessions, tokens, settings)
    ".claude",
    ".claude.json",
    ".codex",
    ".gemini",
    # shell and tool histories (pasted tokens)
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
    ".node_repl_history",
)
#: relative to $XDG_CONFIG_HOME, where it is not ~/.config
CONFIG_SECRETS = (
    "gcloud",
    "gh",
    "hub",
    "git/credentials",
    "pip/pip.conf",
    "rclone",
    "google-chrome",
    "chromium",
    "BraveSoftware",
    "microsoft-edge",
)
#: relative to $XDG_RUNTIME_DIR: the session bus (a way out: `systemd-run --user`), keyrings, agents
RUNTIME_SECRETS = ("bus", "keyring", "gnupg", "ssh-agent.socket", "systemd", "docker.sock", "podman")
#: variables that name a credential file or directory (`:`-separated lists too): what they name is hidden
PATH_VARIABLES = (
    "GOOGLE_APPLICATION_CREDENTIALS",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE",
    "KUBECONFIG",
    "DOCKER_CONFIG",
    "NETRC",
    "GNUPGHOME",
    "CLOUDSDK_CONFIG",
    "AZURE_CONFIG_DIR",
    "CLAUDE_CONFIG_DIR",
    "SSH_AUTH_SOCK",
    "NPM_CONFIG_USERCONFIG",
    "PASSWORD_STORE_DIR",
)

#: variables never passed to a Bash command (upper-cased names, `*` wildcards). The provider keys
#: (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`), `GITHUB_TOKEN`, `GH_TOKEN`, `GOOGLE_APPLICATION_CREDENTIALS`
#: and the like are caught by the patterns
SECRET_VARIABLES = (
    "SSH_AUTH_SOCK", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS", "KRB5CCNAME",
    "KEY", "TOKEN", "SECRET", "CREDENTIALS",
    "*_KEY", "*_KEYS", "*_KEY_*", "*_TOKEN", "*_TOKENS", "*_TOKEN_*", "*_SECRET", "*_SECRETS", "*_SECRET_*",
    "*PASSWORD*", "*PASSWD*", "*_CREDENTIAL", "*_CREDENTIALS", "*APIKEY*", "*_PAT", "*_AUTH",
    "AWS_*", "AZURE_*", "ARM_CLIENT_*",
)  # fmt: skip
#: names the patterns above would catch that hold no secret (git's own configuration by variable)
NOT_SECRET = ("GIT_CONFIG_KEY_*",)
#: a value holding a password in a URL (`postgres://user:pw@host/db`) is a secret whatever its name
_URL_PASSWORD = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://[^/@:\s]*:[^/@\s]+@")


def secret_paths(home: str, environ: Mapping[str, str], state: Iterable[str] = ()) -> list[str]:
    """Every path to hide that exists now, resolved (a link's target is what gets hidden).
    `state`: Vigil's own directories (its home, its user settings)."""
    candidates = [os.path.join(home, rel) for rel in HOME_SECRETS]
    config = environ.get("XDG_CONFIG_HOME", "")
    if os.path.isabs(config):  # ~/.config itself: the same paths again, found once
        candidates += [os.path.join(config, rel) for rel in CONFIG_SECRETS]
    runtime = environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime):
        candidates += [os.path.join(runtime, rel) for rel in RUNTIME_SECRETS]
    for name in PATH_VARIABLES:
        candidates += [p for p in environ.get(name, "").split(os.pathsep) if os.path.isabs(p)]
    candidates += [p for p in state if os.path.isabs(p)]
    found: list[str] = []
    for path in candidates:
        if os.path.lexists(path):
            real = os.path.realpath(path)
            if real not in found and real != "/":
                found.append(real)
    return found


def is_secret_variable(name: str, value: str = "") -> bool:
    upper = name.upper()
    if any(fnmatchcase(upper, pattern) for pattern in NOT_SECRET):
        return False
    return any(fnmatchcase(upper, pattern) for pattern in SECRET_VARIABLES) or bool(_URL_PASSWORD.match(value))


def scrub_env(env: Mapping[str, str], keep: Iterable[str] = ()) -> dict[str, str]:
    """The environment without what looks like a secret, but for the names `keep` matches."""
    kept = tuple(keep)
    return {
        name: value
        for name, value in env.items()
        if not is_secret_variable(name, value) or any(fnmatchcase(name, k) for k in kept)
    }
