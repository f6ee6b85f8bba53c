"""Which paths the sandbox hides and which variables no Bash command gets, entry by entry: the
tables here are the requirement (docs/architecture.md, the security boundary), written out on
their own so that dropping an entry from `sandbox_secrets` fails a test. What the hiding looks
like inside bubblewrap is tests/test_sandbox_secrets.py."""

from __future__ import annotations

import os

import pytest

from tui_app.runtime.permissions.sandbox_policy import SandboxPolicy, SandboxSettings, parse_sandbox
from tui_app.runtime.permissions.sandbox_secrets import is_secret_variable, scrub_env, secret_paths
from tui_app.runtime.permissions.working_dirs import WorkingDirs

HIDDEN_IN_HOME = [
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
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
    ".claude",
    ".claude.json",
    ".codex",
    ".gemini",
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
    ".node_repl_history",
]
HIDDEN_IN_CONFIG = [
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
]
HIDDEN_IN_RUNTIME = ["bus", "keyring", "gnupg", "ssh-agent.socket", "systemd", "docker.sock", "podman"]
NAMING_VARIABLES = [
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
]
SHOWN_IN_HOME = [
    ".bashrc",
    ".profile",
    ".gitconfig",
    ".config/git/config",
    ".cache/pip",
    ".npm",
    ".local/bin",
    ".cargo/bin",
    "notes.txt",
]

SCRUBBED = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "KRB5CCNAME",
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "CREDENTIALS",
    "STRIPE_KEY",
    "DEPLOY_KEYS",
    "SIGNING_KEY_ID",
    "MY_TOKEN",
    "REFRESH_TOKENS",
    "NPM_TOKEN_RO",
    "APP_SECRET",
    "APP_SECRETS",
    "APP_SECRET_V2",
    "DB_PASSWORD",
    "PASSWORD_FILE",
    "MYSQL_PWD_PASSWORD2",
    "LDAP_PASSWD",
    "GCP_CREDENTIAL",
    "SERVICE_CREDENTIALS",
    "MAPS_APIKEY",
    "GITLAB_PAT",
    "BASIC_AUTH",
    "AWS_REGION",
    "AWS_PROFILE",
    "AZURE_TENANT_ID",
    "ARM_CLIENT_ID",
    "my_token",
    "Db_Password",
]
KEPT = [
    "PATH",
    "HOME",
    "TERM",
    "LANG",
    "USER",
    "SHELL",
    "PWD",
    "TMPDIR",
    "EDITOR",
    "KEYBOARD",
    "TOKENIZERS_PARALLELISM",
    "PYTHONPATH",
    "LD_LIBRARY_PATH",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_KEY_0",
    "GIT_CONFIG_VALUE_0",
    "VIGIL_REAPER",
    "NODE_OPTIONS",
    "SECRETARY",
    "PATHS",
    "XAUTH",
]


@pytest.fixture
def home(tmp_path):
    path = tmp_path / "home"
    path.mkdir()
    return path


def make(path, directory: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if directory:
        path.mkdir()
    else:
        path.write_text("x\n")


@pytest.mark.parametrize("rel", HIDDEN_IN_HOME)
def test_every_credential_in_the_home_is_hidden(home, rel):
    make(home / rel)
    assert secret_paths(str(home), {}) == [str(home / rel)]


@pytest.mark.parametrize("rel", SHOWN_IN_HOME)
def test_the_rest_of_the_home_is_shown(home, rel):
    make(home / rel)
    assert secret_paths(str(home), {}) == []


@pytest.mark.parametrize("rel", HIDDEN_IN_CONFIG)
def test_credentials_under_a_config_home_elsewhere_are_hidden(home, tmp_path, rel):
    config = tmp_path / "xdg"
    make(config / rel)
    assert secret_paths(str(home), {"XDG_CONFIG_HOME": str(config)}) == [str(config / rel)]


def test_a_relative_config_home_is_ignored(home, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make(tmp_path / "xdg" / "gh")
    assert secret_paths(str(home), {"XDG_CONFIG_HOME": "xdg"}) == []


def test_a_config_home_that_is_the_usual_one_is_not_counted_twice(home):
    make(home / ".config" / "gh")
    assert secret_paths(str(home), {"XDG_CONFIG_HOME": str(home / ".config")}) == [str(home / ".config" / "gh")]


@pytest.mark.parametrize("rel", HIDDEN_IN_RUNTIME)
def test_the_sessions_sockets_and_agents_are_hidden(home, tmp_path, rel):
    runtime = tmp_path / "run"
    make(runtime / rel)
    make(runtime / "pulse" / "native")  # the rest stays
    assert secret_paths(str(home), {"XDG_RUNTIME_DIR": str(runtime)}) == [str(runtime / rel)]


def test_a_relative_runtime_dir_is_ignored(home, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make(tmp_path / "run" / "bus")
    assert secret_paths(str(home), {"XDG_RUNTIME_DIR": "run"}) == []


@pytest.mark.parametrize("name", NAMING_VARIABLES)
def test_what_a_credential_variable_names_is_hidden(home, tmp_path, name):
    make(tmp_path / "elsewhere" / "cred")
    assert secret_paths(str(home), {name: str(tmp_path / "elsewhere" / "cred")}) == [
        str(tmp_path / "elsewhere" / "cred")
    ]


def test_a_list_of_paths_in_a_variable_is_hidden_whole_but_not_relative_ones(home, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # `rel` exists relative to the cwd: still not hidden (nor resolved)
    for name in ("a", "b", "rel"):
        make(tmp_path / name)
    value = os.pathsep.join([str(tmp_path / "a"), "rel", str(tmp_path / "b")])
    assert secret_paths(str(home), {"KUBECONFIG": value}) == [str(tmp_path / "a"), str(tmp_path / "b")]


def test_vigils_state_is_hidden_and_a_link_at_its_target(home, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make(tmp_path / "relative", directory=True)
    make(tmp_path / "state", directory=True)
    make(tmp_path / "real-ssh", directory=True)
    os.symlink(tmp_path / "real-ssh", home / ".ssh")
    found = secret_paths(str(home), {}, state=[str(tmp_path / "state"), "", "relative"])
    assert found == [str(tmp_path / "real-ssh"), str(tmp_path / "state")]


def test_the_root_is_never_hidden_nor_one_path_twice(home, tmp_path):
    make(tmp_path / "cred")
    found = secret_paths(
        str(home), {"NETRC": str(tmp_path / "cred"), "KUBECONFIG": "/"}, state=[str(tmp_path / "cred")]
    )
    assert found == [str(tmp_path / "cred")]


def test_what_does_not_exist_is_not_hidden(home):
    assert secret_paths(str(home), {"NETRC": str(home / "nothing")}) == []


@pytest.mark.parametrize("name", SCRUBBED)
def test_a_secret_variable_is_left_out(name):
    assert is_secret_variable(name)
    assert scrub_env({name: "v", "PATH": "/bin"}) == {"PATH": "/bin"}


@pytest.mark.parametrize("name", KEPT)
def test_an_ordinary_variable_is_kept(name):
    assert is_secret_variable(name, "plain value") is False
    assert scrub_env({name: "plain value"}) == {name: "plain value"}


@pytest.mark.parametrize(
    "value, secret",
    [
        ("postgres://app:hunter2@db/app", True),
        ("https://user:tok@example.com", True),
        ("redis://:pw@cache:6379", True),
        ("https://example.com/a:b@c", False),
        ("https://user@example.com", False),
        ("http://example.com", False),
        ("a:b@c", False),
    ],
)
def test_a_url_with_a_password_is_a_secret_whatever_its_name(value, secret):
    assert is_secret_variable("DATABASE_URL", value) is secret


def test_names_settings_keep_are_passed_on_exactly_or_by_wildcard():
    env = {"MY_TOKEN": "a", "GITHUB_TOKEN": "b", "NPM_CONFIG_TOKEN": "c", "OTHER_TOKEN": "d", "PATH": "/bin"}
    assert scrub_env(env, ["MY_TOKEN", "NPM_CONFIG_*"]) == {"MY_TOKEN": "a", "NPM_CONFIG_TOKEN": "c", "PATH": "/bin"}
    assert scrub_env(env, ["my_token"]) == {"PATH": "/bin"}  # names are case-sensitive


# ---- the settings and the layout ----------------------------------------------------------------


def test_env_keep_is_read_from_every_settings_file():
    values, errors = parse_sandbox(
        [("user", "/h", {"env": {"keep": ["A_TOKEN"]}}), ("project", "/p", {"env": {"keep": ["B_KEY", "A_TOKEN"]}})],
        "/h",
    )
    assert values.env_keep == ("A_TOKEN", "B_KEY") and errors == []


@pytest.mark.parametrize("value", [["A", 1], "A_TOKEN", {"x": 1}])
def test_a_wrong_env_keep_is_reported(value):
    data = {"env": {"keep": value}} if not isinstance(value, dict) else {"env": value}
    values, errors = parse_sandbox([("f", "/p", data)], "/h")
    assert values.env_keep == () and (errors or isinstance(value, dict))


def test_a_wrong_env_object_is_reported():
    values, errors = parse_sandbox([("f", "/p", {"env": ["A"]})], "/h")
    assert values.env_keep == () and errors[0]["reason"] == "`sandbox.env` must be an object"


def test_the_command_env_keeps_what_the_settings_name():
    policy = SandboxPolicy(SandboxSettings(env_keep=("MY_TOKEN",)), dirs=WorkingDirs("/"), home="/nowhere")
    assert policy.command_env({"MY_TOKEN": "a", "GH_TOKEN": "b", "HOME": "/h"}) == {"MY_TOKEN": "a", "HOME": "/h"}


def policy_for(tmp_path, home, **settings) -> SandboxPolicy:
    proj = tmp_path / "proj"
    proj.mkdir(exist_ok=True)
    return SandboxPolicy(SandboxSettings(**settings), dirs=WorkingDirs(str(proj)), home=str(home), environ={})


def test_the_layout_hides_directories_as_masks_and_files_as_empty_files(tmp_path, home):
    make(home / ".ssh" / "id_rsa")
    make(home / ".netrc")
    layout = policy_for(tmp_path, home).layout()
    assert str(home / ".ssh") in layout.masked_dirs
    assert layout.empty_files == (str(home / ".netrc"),) and str(home / ".netrc") not in layout.masked_files


def test_allow_read_shows_a_credential_or_a_path_inside_one(tmp_path, home):
    make(home / ".ssh" / "known_hosts")
    make(home / ".netrc")
    layout = policy_for(tmp_path, home, allow_read=(str(home / ".netrc"), str(home / ".ssh" / "known_hosts"))).layout()
    assert layout.empty_files == () and layout.shown == (str(home / ".ssh" / "known_hosts"),)
    assert str(home / ".ssh") in layout.masked_dirs
    whole = policy_for(tmp_path, home, allow_read=(str(home),)).layout()
    assert str(home / ".ssh") not in whole.masked_dirs and whole.empty_files == ()


def test_a_credential_directory_holding_a_working_directory_stays(tmp_path, home):
    make(home / ".claude" / "work" / "x")
    policy = SandboxPolicy(
        SandboxSettings(), dirs=WorkingDirs(str(home / ".claude" / "work")), home=str(home), environ={}
    )
    assert str(home / ".claude") not in policy.layout().masked_dirs


def test_a_credential_inside_a_working_directory_is_hidden(tmp_path, home):
    make(home / ".ssh" / "id_rsa")
    policy = SandboxPolicy(SandboxSettings(), dirs=WorkingDirs(str(home)), home=str(home), environ={})
    assert str(home / ".ssh") in policy.layout().masked_dirs


def test_a_readable_directory_inside_vigils_hidden_home_is_shown(tmp_path, home):
    artifacts = tmp_path / "vigil" / "sessions" / "s1" / "artifacts"
    artifacts.mkdir(parents=True)
    dirs = WorkingDirs(str(tmp_path / "proj"))
    (tmp_path / "proj").mkdir()
    dirs.add_readable([str(artifacts), str(tmp_path / "elsewhere")])
    policy = SandboxPolicy(
        SandboxSettings(), dirs=dirs, home=str(home), environ={}, state_dirs=(str(tmp_path / "vigil"),)
    )
    layout = policy.layout()
    assert str(tmp_path / "vigil") in layout.masked_dirs and layout.shown == (str(artifacts),)


def test_only_what_exists_inside_a_hidden_directory_is_shown(tmp_path, home):
    """bwrap cannot bind what is not there: a named path that is missing is left out."""
    make(home / ".ssh" / "id_rsa")
    make(home / ".aws" / "credentials")
    make(home / ".aws" / "config")
    named = (str(home / ".ssh" / "known_hosts"), str(home / ".aws" / "config"))
    layout = policy_for(tmp_path, home, allow_read=named).layout()
    assert layout.shown == (str(home / ".aws" / "config"),)
    assert {str(home / ".ssh"), str(home / ".aws")} <= set(layout.masked_dirs)


def test_a_readable_directory_that_is_a_hidden_one_or_under_a_deny_mask_is_not_shown(tmp_path, home):
    vigil = tmp_path / "vigil"
    (vigil / "sessions" / "s1" / "artifacts").mkdir(parents=True)
    (tmp_path / "proj").mkdir()
    dirs = WorkingDirs(str(tmp_path / "proj"))
    dirs.add_readable([str(vigil), str(vigil / "sessions" / "s1" / "artifacts")])
    policy = SandboxPolicy(
        SandboxSettings(deny_read=(str(vigil / "sessions"),)),
        dirs=dirs,
        home=str(home),
        environ={},
        state_dirs=(str(vigil),),
    )
    layout = policy.layout()
    assert str(vigil) in layout.masked_dirs and layout.shown == ()


def test_a_hidden_file_under_a_deny_mask_gets_no_bind_of_its_own(tmp_path, home):
    """Inside a read-only tmpfs no mount point can be made: the mask alone hides it."""
    make(home / ".docker" / "config.json")
    make(home / ".netrc")
    layout = policy_for(tmp_path, home, deny_read=(str(home / ".docker"), str(home / ".netrc"))).layout()
    assert str(home / ".docker") in layout.masked_dirs and layout.empty_files == ()
    assert layout.masked_files == (str(home / ".netrc"),)


def test_a_denied_file_inside_a_hidden_directory_is_left_to_the_directory(tmp_path, home):
    make(home / ".ssh" / "id_rsa")
    layout = policy_for(tmp_path, home, deny_read=(str(home / ".ssh" / "id_rsa"),)).layout()
    assert str(home / ".ssh") in layout.masked_dirs and layout.masked_files == ()


def test_any_working_directory_inside_a_credential_directory_keeps_it_shown(tmp_path, home):
    make(home / ".claude" / "work" / "x")
    (tmp_path / "proj").mkdir()
    dirs = WorkingDirs(str(tmp_path / "proj"), additional=[str(home / ".claude" / "work")])
    layout = SandboxPolicy(SandboxSettings(), dirs=dirs, home=str(home), environ={}).layout()
    assert str(home / ".claude") not in layout.masked_dirs
