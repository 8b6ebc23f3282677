"""The shared security vocabulary: every name the classifier, the sandbox and the settings must
agree on, defined once.

Secret variable names, the credential stores below the home directory (masked by the sandbox
*and* rated as secret reads by the classifier), the protected names (with the threat each one
guards against), the backend names and the autonomy levels. Where two consumers need different
views (the sandbox masks a whole directory, the classifier rates any path below it), both are
derived from the one table here, and a test checks the difference.

Reviewers: this module is the place to add a credential store or a protected name.
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

# ---------------------------------------------------------------------------------------------
# Environment variables
# ---------------------------------------------------------------------------------------------

#: Words that make a variable *name* look like it holds a credential (any case).
SECRET_NAME_WORDS: Final[tuple[str, ...]] = ("KEY", "TOKEN", "SECRET", "PASSW", "CREDENTIAL")
SECRET_NAME_PATTERN: Final = re.compile("|".join(SECRET_NAME_WORDS), re.IGNORECASE)

# ---------------------------------------------------------------------------------------------
# Credential stores below the home directory
# ---------------------------------------------------------------------------------------------


class HomeSecret(NamedTuple):
    """A place below ``$HOME`` where a tool keeps credentials.

    ``path`` is relative to the home directory; the sandbox masks it (empty and unreadable)
    when it exists, and the classifier rates reading anything at or below it as a secret read.
    """

    path: str
    tool: str


HOME_SECRETS: Final[tuple[HomeSecret, ...]] = (
    # keys and agents
    HomeSecret(".ssh", "OpenSSH: private keys, known hosts, config"),
    HomeSecret(".gnupg", "GnuPG: private keys"),
    HomeSecret(".password-store", "pass: the password store"),
    HomeSecret(".local/share/keyrings", "GNOME keyring"),
    HomeSecret(".pki", "NSS certificate and key databases"),
    # clouds
    HomeSecret(".aws", "AWS CLI: access keys"),
    HomeSecret(".config/gcloud", "Google Cloud SDK: tokens"),
    HomeSecret(".azure", "Azure CLI: tokens"),
    HomeSecret(".oci", "Oracle Cloud CLI: keys"),
    HomeSecret(".s3cfg", "s3cmd: access keys"),
    HomeSecret(".boto", "boto / gsutil: keys"),
    HomeSecret(".config/doctl", "DigitalOcean CLI: token"),
    HomeSecret(".config/hcloud", "Hetzner Cloud CLI: token"),
    HomeSecret(".fly", "Fly.io CLI: token"),
    HomeSecret(".config/rclone", "rclone: remote credentials"),
    HomeSecret(".terraform.d/credentials.tfrc.json", "Terraform: registry tokens"),
    HomeSecret(".vault-token", "HashiCorp Vault: token"),
    # containers and clusters
    HomeSecret(".docker", "Docker: registry auths (config.json)"),
    HomeSecret(".dockercfg", "Docker (legacy): registry auths"),
    HomeSecret(".kube", "kubectl: cluster credentials"),
    # source hosting and git
    HomeSecret(".git-credentials", "git credential store"),
    HomeSecret(".config/git/credentials", "git credential store (XDG)"),
    HomeSecret(".config/gh", "GitHub CLI: OAuth token (hosts.yml)"),
    HomeSecret(".config/hub", "hub: GitHub token"),
    HomeSecret(".config/glab-cli", "GitLab CLI: token"),
    HomeSecret(".config/github-copilot", "GitHub Copilot: OAuth token"),
    HomeSecret(".netrc", "netrc: passwords for curl, git, ftp"),
    # package registries
    HomeSecret(".npmrc", "npm: registry auth tokens"),
    HomeSecret(".yarnrc.yml", "Yarn 2+: npmAuthToken"),
    HomeSecret(".pypirc", "twine / PyPI: upload tokens"),
    HomeSecret(".cargo/credentials", "cargo: crates.io token (legacy name)"),
    HomeSecret(".cargo/credentials.toml", "cargo: crates.io token"),
    HomeSecret(".gem/credentials", "RubyGems: API key"),
    HomeSecret(".config/composer/auth.json", "Composer: registry auths"),
    HomeSecret(".composer/auth.json", "Composer (legacy): registry auths"),
    HomeSecret(".m2/settings-security.xml", "Maven: master password"),
    HomeSecret(".ivy2/.credentials", "Ivy / sbt: repository credentials"),
    HomeSecret(".nuget/NuGet/NuGet.Config", "NuGet: API keys"),
    # databases
    HomeSecret(".pgpass", "PostgreSQL: passwords"),
    HomeSecret(".my.cnf", "MySQL client: password"),
    HomeSecret(".mylogin.cnf", "MySQL: obfuscated login paths"),
    # AI agents and their CLIs
    HomeSecret(".claude/.credentials.json", "Claude Code: OAuth credentials"),
    HomeSecret(".codex/auth.json", "OpenAI Codex CLI: auth"),
    HomeSecret(".gemini/oauth_creds.json", "Gemini CLI: OAuth credentials"),
    # platforms
    HomeSecret(".config/heroku", "Heroku CLI"),
    HomeSecret(".config/netlify", "Netlify CLI: token"),
    HomeSecret(".local/share/com.vercel.cli", "Vercel CLI: token"),
    HomeSecret(".config/op", "1Password CLI"),
    HomeSecret(".wrangler", "Cloudflare wrangler: OAuth token"),
    HomeSecret(".config/.wrangler", "Cloudflare wrangler: OAuth token (XDG)"),
    HomeSecret(".supabase", "Supabase CLI: access token"),
    HomeSecret(".config/stripe", "Stripe CLI: keys"),
    # shell and REPL history (commands typed with secrets in them)
    HomeSecret(".bash_history", "bash history"),
    HomeSecret(".zsh_history", "zsh history"),
    HomeSecret(".local/share/fish/fish_history", "fish history"),
    HomeSecret(".python_history", "Python REPL history"),
    HomeSecret(".node_repl_history", "Node.js REPL history"),
    HomeSecret(".psql_history", "psql history"),
    HomeSecret(".mysql_history", "mysql client history"),
)

#: Directories whose contents are credentials wherever they are (not only below home): the
#: classifier and the file tools rate reading anything in one as a secret read.
SECRET_DIRECTORIES: Final[tuple[str, ...]] = (".ssh", ".aws", ".gnupg", ".azure", ".password-store")
#: Paths of credential stores recognised wherever they appear in a path (a copied home
#: directory, a path through ``..``), not only below home.
SECRET_PATHS: Final[tuple[str, ...]] = (
    ".kube/config",
    ".docker/config.json",
    ".config/gh",
    ".config/gcloud",
)


class SecretFile(NamedTuple):
    """File names that hold credentials wherever they are (a project's ``.env``, a key file).

    ``globs`` are matched against a file's name (``fnmatch``, case-sensitive). The classifier
    rates reading, copying or sending such a file as a secret read; the file tools do the same
    for ``read_file``.
    """

    globs: tuple[str, ...]
    what: str


SECRET_FILES: Final[tuple[SecretFile, ...]] = (
    SecretFile((".env", ".env.*", "*.env"), "dotenv files: the project's environment secrets"),
    SecretFile((".envrc",), "direnv: exported variables"),
    SecretFile((".netrc", "_netrc"), "netrc: passwords for curl, git, ftp"),
    SecretFile((".pgpass",), "PostgreSQL passwords"),
    SecretFile((".my.cnf",), "MySQL client password"),
    SecretFile((".npmrc",), "npm registry tokens"),
    SecretFile((".pypirc",), "PyPI upload tokens"),
    SecretFile((".git-credentials",), "git credential store"),
    SecretFile((".dockercfg",), "Docker registry auths (legacy)"),
    SecretFile((".vault-token",), "HashiCorp Vault token"),
    SecretFile((".htpasswd",), "web server password hashes"),
    SecretFile((".boto", ".s3cfg"), "boto / s3cmd keys"),
    SecretFile(
        (
            "credentials",
            "credentials.json",
            "credentials.csv",
            "credentials.xml",
            "credentials.yml",
            "credentials.yaml",
        ),
        "cloud and service credentials files",
    ),
    SecretFile(("client_secret.json", "client_secrets.json"), "OAuth client secrets"),
    SecretFile(("service-account*.json", "service_account*.json"), "service account keys"),
    SecretFile(
        tuple(
            f"{stem}.{extension}"
            for stem in ("secret", "secrets")
            for extension in ("json", "yaml", "yml", "toml", "env", "txt")
        ),
        "secrets files",
    ),
    SecretFile(
        ("id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "id_xmss*"), "SSH keys (and their .pub)"
    ),
    SecretFile(
        ("*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.ppk", "*.ovpn"),
        "private keys, certificates, keystores, VPN profiles",
    ),
    SecretFile(("*.kdbx", "*.gpg", "*.asc"), "password databases and encrypted or signed files"),
    SecretFile(("master.key",), "Rails master key"),
    SecretFile(("kubeconfig",), "Kubernetes cluster credentials"),
    SecretFile(("shadow", "gshadow", "sudoers"), "system password hashes and sudo rules"),
    SecretFile(("environ",), "/proc/PID/environ: a process's environment"),
)
#: Names the globs above match that are templates, not secrets (``.env.example``).
SECRET_FILE_EXCEPTIONS: Final[frozenset[str]] = frozenset(
    f".env.{suffix}" for suffix in ("example", "sample", "template", "dist", "defaults")
)

#: Files stockade masks only when it runs as root: uid 0 can read them, a command has no
#: business doing so.
ROOT_ONLY_SECRETS: Final[tuple[str, ...]] = (
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/shadow-",
    "/etc/gshadow-",
    "/etc/ssh/ssh_host_rsa_key",
    "/etc/ssh/ssh_host_ecdsa_key",
    "/etc/ssh/ssh_host_ed25519_key",
    "/etc/ssl/private",
    "/root/.ssh",
)

# ---------------------------------------------------------------------------------------------
# Protected names: read-only even inside a writable root
# ---------------------------------------------------------------------------------------------


class ProtectedName(NamedTuple):
    """A name (relative to a writable root) that stays read-only inside the jail."""

    name: str
    is_dir: bool
    threat: str


PROTECTED_NAMES: Final[tuple[ProtectedName, ...]] = (
    ProtectedName(".stockade", True, "stockade's project settings: would loosen the next jail"),
    ProtectedName(".git/hooks", True, "git runs hooks on the host (commit, checkout, push)"),
    ProtectedName(
        ".git/config", False, "core.fsmonitor, core.hooksPath, aliases: git runs them on the host"
    ),
    ProtectedName(".bashrc", False, "bash runs it on the host at every interactive start"),
    ProtectedName(".bash_profile", False, "bash runs it at every login"),
    ProtectedName(".zshrc", False, "zsh runs it at every interactive start"),
    ProtectedName(".zprofile", False, "zsh runs it at every login"),
    ProtectedName(".profile", False, "sh-family shells run it at every login"),
    ProtectedName(".gitconfig", False, "git reads it as user config (aliases with !, pager)"),
    ProtectedName(".gitmodules", False, "submodule URLs and update commands"),
    ProtectedName(".mcp.json", False, "agents start the MCP servers it names"),
    ProtectedName(".vscode", True, "VS Code runs tasks and uses settings on folder open"),
    ProtectedName(".idea", True, "JetBrains IDEs run configured tools on open"),
)

#: Names the classifier also rates as protected (a write is ``write.protected``, so it asks)
#: beyond PROTECTED_NAMES, which the sandbox keeps read-only. The classifier's view is
#: PROTECTED_NAMES' dot names plus exactly these (a test says so); a name that moves up to
#: PROTECTED_NAMES, where the sandbox enforces it too, drops out of this list by itself.
_CLASSIFIER_PROTECTED_EXTRA: Final[tuple[ProtectedName, ...]] = (
    ProtectedName(".zshenv", False, "zsh runs it at every start, even for scripts"),
    ProtectedName(".bash_login", False, "bash runs it at login when .bash_profile is absent"),
    ProtectedName(".bash_logout", False, "bash runs it when a login shell exits"),
    ProtectedName(".envrc", False, "direnv runs it on the host when a shell enters the directory"),
    ProtectedName(
        ".git/info/attributes", False, "names filter drivers git runs on checkout and diff"
    ),
)
CLASSIFIER_ONLY_PROTECTED: Final[tuple[ProtectedName, ...]] = tuple(
    extra
    for extra in _CLASSIFIER_PROTECTED_EXTRA
    if extra.name not in {entry.name for entry in PROTECTED_NAMES}
)

#: Inside a writable dependency store (CARGO_HOME) the executable and configuration parts stay
#: read-only: the store is data, not code that the host runs later.
CARGO_HOME_PROTECTED: Final[tuple[ProtectedName, ...]] = (
    ProtectedName("bin", True, "installed binaries run on the host"),
    ProtectedName("config", False, "build settings (rustc wrapper, runners) run on the host"),
    ProtectedName("config.toml", False, "build settings (rustc wrapper, runners)"),
    ProtectedName("env", False, "sourced by the user's shell rc files"),
)

# ---------------------------------------------------------------------------------------------
# Backends and autonomy levels
# ---------------------------------------------------------------------------------------------

#: Every value ``--backend`` / ``sandbox.backend`` accepts.
BACKEND_NAMES: Final[tuple[str, ...]] = ("auto", "bwrap", "landlock", "none")
#: What ``auto`` tries, in order, on Linux.
AUTO_ORDER: Final[tuple[str, ...]] = ("bwrap", "landlock")

#: Ordered from the least to the most autonomous; the order is the ranking.
AUTONOMY_LEVELS: Final[tuple[str, ...]] = (
    "ask",
    "conservative",
    "balanced",
    "auto-accept",
    "yolo",
)
#: Other spellings; none of them leads to ``yolo``.
AUTONOMY_ALIASES: Final[dict[str, str]] = {
    "default": "ask",
    "auto": "auto-accept",
    "accept": "auto-accept",
}
