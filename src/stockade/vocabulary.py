"""The shared security vocabulary: every name the classifier, the sandbox and the settings must
agree on, defined once.

Secret variable names, the credential stores below the home directory (masked by the sandbox
*and* rated as secret reads by the classifier), the protected names (with the threat each one
guards against, where it applies and how a created one is judged), the backend names and the
autonomy levels. Where two consumers need different
views (the sandbox masks a whole directory, the classifier rates any path below it), both are
derived from the one table here, and a test checks the difference.

Reviewers: this module is the place to add a credential store, a protected name, a variable
that may enter the jail or a credential-value shape.
"""

from __future__ import annotations

import re
import sys
from typing import Final, NamedTuple

# ---------------------------------------------------------------------------------------------
# Environment variables
# ---------------------------------------------------------------------------------------------

#: Words that make a variable *name* look like it holds a credential (any case).
SECRET_NAME_WORDS: Final[tuple[str, ...]] = ("KEY", "TOKEN", "SECRET", "PASSW", "CREDENTIAL")
SECRET_NAME_PATTERN: Final = re.compile("|".join(SECRET_NAME_WORDS), re.IGNORECASE)


class AllowedVariables(NamedTuple):
    """Variables that enter the jail by default: they configure tools and carry no credentials.

    A name ending in ``*`` is a prefix. Everything not listed here stays on the host unless the
    operator passes it by name (``--env NAME``, ``sandbox.env_passthrough``); a listed variable
    whose *value* looks like a credential (``CREDENTIAL_VALUES``) is dropped all the same.
    """

    names: tuple[str, ...]
    why: str


ENVIRONMENT_ALLOW_LIST: Final[tuple[AllowedVariables, ...]] = (
    AllowedVariables(
        ("PATH", "HOME", "USER", "LOGNAME", "SHELL"), "who and where: every program expects them"
    ),
    AllowedVariables(("LANG", "LANGUAGE", "LC_*", "TZ"), "locale and time zone"),
    AllowedVariables(
        ("TERM", "COLORTERM", "COLUMNS", "LINES", "TERM_PROGRAM", "TERM_PROGRAM_VERSION"),
        "the terminal: size, colours, capabilities",
    ),
    AllowedVariables(
        ("NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "EDITOR", "VISUAL", "PAGER"),
        "output preferences and the editor/pager tools start",
    ),
    AllowedVariables(
        ("TMPDIR", "TMP", "TEMP", "XDG_CACHE_HOME"),
        "temp and cache locations (stockade points them at the session's own directory)",
    ),
    AllowedVariables(
        ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_DIRS", "XDG_DATA_DIRS"),
        "where tools look for their configuration and data (not XDG_RUNTIME_DIR: sockets)",
    ),
    AllowedVariables(
        (
            "GIT_AUTHOR_NAME",
            "GIT_AUTHOR_EMAIL",
            "GIT_COMMITTER_NAME",
            "GIT_COMMITTER_EMAIL",
        ),
        "git identity for commits made inside",
    ),
    AllowedVariables(
        (
            "GOPATH",
            "GOROOT",
            "GOBIN",
            "GOMODCACHE",
            "GOFLAGS",
            "GOPROXY",
            "GOPRIVATE",
            "GONOPROXY",
            "GONOSUMDB",
            "GOSUMDB",
            "GO111MODULE",
            "GOTOOLCHAIN",
            "GOOS",
            "GOARCH",
            "CGO_ENABLED",
        ),
        "Go toolchain locations and module settings",
    ),
    AllowedVariables(
        (
            "CARGO_HOME",
            "RUSTUP_HOME",
            "RUSTUP_TOOLCHAIN",
            "CARGO_TARGET_DIR",
            "RUSTFLAGS",
            "RUST_LOG",
            "RUST_BACKTRACE",
        ),
        "Rust toolchain locations and settings",
    ),
    AllowedVariables(
        (
            "VIRTUAL_ENV",
            "PYENV_ROOT",
            "PYENV_VERSION",
            "CONDA_PREFIX",
            "CONDA_DEFAULT_ENV",
            "PYTHONPATH",
            "PYTHONDONTWRITEBYTECODE",
            "PYTHONUNBUFFERED",
            "PYTHONIOENCODING",
            "PIPX_HOME",
            "POETRY_HOME",
            "UV_PYTHON",
        ),
        "Python interpreters, environments and their settings",
    ),
    AllowedVariables(
        ("NVM_DIR", "NVM_BIN", "NODE_PATH", "VOLTA_HOME", "PNPM_HOME", "BUN_INSTALL", "DENO_DIR"),
        "JavaScript runtimes and package managers' locations",
    ),
    AllowedVariables(
        ("JAVA_HOME", "GRADLE_USER_HOME", "MAVEN_HOME", "M2_HOME", "SDKMAN_DIR", "KOTLIN_HOME"),
        "JVM toolchains",
    ),
    AllowedVariables(("GEM_HOME", "GEM_PATH", "RBENV_ROOT", "BUNDLE_PATH"), "Ruby toolchains"),
    AllowedVariables(
        ("HOMEBREW_PREFIX", "HOMEBREW_CELLAR", "HOMEBREW_REPOSITORY"), "Homebrew's locations"
    ),
    AllowedVariables(
        (
            "CC",
            "CXX",
            "CFLAGS",
            "CXXFLAGS",
            "CPPFLAGS",
            "LDFLAGS",
            "PKG_CONFIG_PATH",
            "MAKEFLAGS",
            "LD_LIBRARY_PATH",
        ),
        "C/C++ build settings (set inside the jail, so no LD_* acts on the launcher)",
    ),
    AllowedVariables(
        ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "UV_INDEX_URL", "npm_config_registry"),
        "package index locations (one with a password in its URL is dropped by its value)",
    ),
    AllowedVariables(
        (
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "ALL_PROXY",
            "NO_PROXY",
            "http_proxy",
            "https_proxy",
            "all_proxy",
            "no_proxy",
        ),
        "the host's proxies (allowlist mode replaces them; one with userinfo is dropped)",
    ),
    AllowedVariables(
        (
            "SSL_CERT_FILE",
            "SSL_CERT_DIR",
            "REQUESTS_CA_BUNDLE",
            "CURL_CA_BUNDLE",
            "NODE_EXTRA_CA_CERTS",
            "GIT_SSL_CAINFO",
            "PIP_CERT",
            "NIX_SSL_CERT_FILE",
        ),
        "where TLS clients find CA certificates (public data)",
    ),
    AllowedVariables(("CI",), "tools behave non-interactively in CI"),
)


class CredentialValue(NamedTuple):
    """A shape of value that is a credential whatever the variable is called (searched, not
    anchored: a token inside a longer value counts).

    ``markers`` are lowercase literals, one of which every match contains (a test checks it):
    a value without any is not searched, so the patterns compile only when a value needs them.
    """

    pattern: str
    what: str
    markers: tuple[str, ...]


CREDENTIAL_VALUES: Final[tuple[CredentialValue, ...]] = (
    # credentials inside URLs and connection strings
    CredentialValue(
        r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#\s@]+@", "a URL with a user name or password", ("@",)
    ),
    CredentialValue(
        r"(?i:\b(?:password|passwd|pwd|accountkey|sharedaccesskey)=)[^;&\s]",
        "a password in a connection string",
        ("password=", "passwd=", "pwd=", "accountkey=", "sharedaccesskey="),
    ),
    CredentialValue(
        r"hooks\.slack\.com/services/|discord(?:app)?\.com/api/webhooks/",
        "a chat webhook URL",
        ("hooks.slack.com/services/", "discord.com/api/webhooks/", "discordapp.com/api/webhooks/"),
    ),
    CredentialValue(r"-----BEGIN [A-Z ]*PRIVATE KEY-----", "a private key", ("private key-----",)),
    CredentialValue(r"(?i:\bbearer\s+)[A-Za-z0-9._~+/=-]{16,}", "a bearer token", ("bearer",)),
    CredentialValue(
        r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*", "a JSON web token", ("eyj",)
    ),
    # token prefixes of well-known issuers
    CredentialValue(
        r"\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}",
        "a GitHub token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    CredentialValue(
        r"\bgl(?:pat|dt|rt|ptt|cbt|soat|ft|imt|oas|agent)-[A-Za-z0-9_-]{16,}",
        "a GitLab token",
        (
            "glpat-",
            "gldt-",
            "glrt-",
            "glptt-",
            "glcbt-",
            "glsoat-",
            "glft-",
            "glimt-",
            "gloas-",
            "glagent-",
        ),
    ),
    CredentialValue(
        r"\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-[0-9]-[A-Za-z0-9-]{10,}",
        "a Slack token",
        ("xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe-", "xapp-"),
    ),
    CredentialValue(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b", "an AWS access key id", ("akia", "asia")),
    CredentialValue(r"\bsk-[A-Za-z0-9_-]{20,}", "an OpenAI / Anthropic API key", ("sk-",)),
    CredentialValue(
        r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}|\bwhsec_[A-Za-z0-9]{16,}",
        "a Stripe key",
        ("sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_"),
    ),
    CredentialValue(r"\bnpm_[A-Za-z0-9]{36}\b", "an npm token", ("npm_",)),
    CredentialValue(r"\bpypi-[A-Za-z0-9_-]{16,}", "a PyPI token", ("pypi-",)),
    CredentialValue(
        r"\bAIza[0-9A-Za-z_-]{35}|\bya29\.[0-9A-Za-z_-]{20,}",
        "a Google API key or OAuth token",
        ("aiza", "ya29."),
    ),
    CredentialValue(r"\bhf_[A-Za-z0-9]{30,}", "a Hugging Face token", ("hf_",)),
    CredentialValue(r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", "a SendGrid key", ("sg.",)),
    CredentialValue(
        r"\bdo[opr]_v1_[a-f0-9]{64}", "a DigitalOcean token", ("doo_v1_", "dop_v1_", "dor_v1_")
    ),
    CredentialValue(
        r"\bhv[sbr]\.[A-Za-z0-9_-]{20,}|\.atlasv1\.[A-Za-z0-9_-]{20,}",
        "a HashiCorp Vault / Terraform token",
        ("hvs.", "hvb.", "hvr.", ".atlasv1."),
    ),
    CredentialValue(
        r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}",
        "a Shopify token",
        ("shpat_", "shpss_", "shpca_", "shppa_"),
    ),
    CredentialValue(r"\bsntry[su]_[A-Za-z0-9_=+/-]{20,}", "a Sentry token", ("sntrys_", "sntryu_")),
    CredentialValue(
        r"\blin_(?:api|oauth)_[A-Za-z0-9]{32,}", "a Linear key", ("lin_api_", "lin_oauth_")
    ),
    CredentialValue(
        r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{20,}",
        "a Doppler token",
        ("dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."),
    ),
    CredentialValue(
        r"\bglsa_[A-Za-z0-9_]{32}|\bglc_[A-Za-z0-9+/=]{30,}", "a Grafana token", ("glsa_", "glc_")
    ),
    CredentialValue(r"\bdapi[a-f0-9]{32}", "a Databricks token", ("dapi",)),
    CredentialValue(r"\bATATT3[A-Za-z0-9_=-]{30,}", "an Atlassian token", ("atatt3",)),
    CredentialValue(r"\bPMAK-[A-Za-z0-9]{24}-[A-Za-z0-9]{34}", "a Postman key", ("pmak-",)),
    CredentialValue(r"\bSK[0-9a-fA-F]{32}\b", "a Twilio key", ("sk",)),
)

# ---------------------------------------------------------------------------------------------
# Credential stores below the home directory
# ---------------------------------------------------------------------------------------------


class HomeSecret(NamedTuple):
    """A place below ``$HOME`` where a tool keeps credentials.

    ``path`` is relative to the home directory; the sandbox masks it (empty and unreadable)
    when it exists, and the classifier rates reading anything at or below it as a secret read.
    A file that also carries settings the tool needs (registry, proxy) has ``keep_lines``: the
    jail then sees a per-session copy, at the same path, of only the lines that match it - an
    allow-list, so a credential in a spelling nobody foresaw stays on the host (a kept line
    whose value looks like a credential, ``CREDENTIAL_VALUES``, is dropped all the same).
    """

    path: str
    tool: str
    keep_lines: str | None = None


HOME_SECRETS: Final[tuple[HomeSecret, ...]] = (
    # keys and agents
    HomeSecret(".ssh", "OpenSSH: private keys, known hosts, config"),
    HomeSecret(".gnupg", "GnuPG: private keys"),
    HomeSecret(".password-store", "pass: the password store"),
    HomeSecret(".local/share/keyrings", "GNOME keyring"),
    HomeSecret(".pki", "NSS certificate and key databases"),
    HomeSecret("Library/Keychains", "macOS keychains (the jail cannot ask securityd either)"),
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
    HomeSecret(
        ".npmrc",
        "npm: registry auth tokens",
        # the registry (also per scope), proxies, TLS trust, and plain install behaviour
        keep_lines=r"(?i)^\s*((@[\w.-]+:)?registry|(https-)?proxy|noproxy|strict-ssl|cafile|ca"
        r"|maxsockets|fetch-retr\w*|fetch-timeout|prefer-offline|prefer-online|save-exact"
        r"|save-prefix|engine-strict|legacy-peer-deps|fund|audit|update-notifier|loglevel"
        r"|progress|color|lockfile-version|package-lock|ignore-scripts)\s*=",
    ),
    HomeSecret(
        ".yarnrc.yml",
        "Yarn 2+: npmAuthToken",
        # top-level settings only: scoped blocks (npmScopes, npmRegistries) can carry tokens
        keep_lines=r"^(npmRegistryServer|httpProxy|httpsProxy|caFilePath|enableStrictSsl"
        r"|nodeLinker|enableTelemetry|enableGlobalCache|httpRetry|httpTimeout"
        r"|networkConcurrency|enableProgressBars|enableColors)\s*:",
    ),
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


class RootSecret(NamedTuple):
    """A file or directory outside every home that only root can read, and a command has no
    business reading. ``path`` is absolute and may hold ``*`` (a glob)."""

    path: str
    what: str


#: What stockade masks when it runs as root. Under bwrap a root launcher's command runs as an
#: unprivileged jail uid, so plain file permissions already keep these (and every other
#: root-only file) out of reach; the masks are what protects them where the command runs as
#: host root (the Landlock backend, ``sandbox.root_jail = true``).
ROOT_ONLY_SECRETS: Final[tuple[RootSecret, ...]] = (
    # accounts
    RootSecret("/etc/shadow", "password hashes"),
    RootSecret("/etc/shadow-", "password hashes (backup)"),
    RootSecret("/etc/gshadow", "group password hashes"),
    RootSecret("/etc/gshadow-", "group password hashes (backup)"),
    RootSecret("/etc/security/opasswd", "previous password hashes (pam_pwhistory)"),
    RootSecret("/var/backups/*shadow*", "password hash backups (Debian's daily backup)"),
    RootSecret("/etc/sudoers", "sudo policy: who may become root, and how"),
    RootSecret("/etc/sudoers.d", "sudo policy drop-ins"),
    RootSecret("/var/lib/sss", "SSSD: cached credentials and secrets"),
    RootSecret("/etc/krb5.keytab", "Kerberos: the host's long-term keys"),
    RootSecret("/etc/samba/smbpasswd", "Samba: password hashes"),
    RootSecret("/var/lib/samba/private", "Samba: password database, machine secrets"),
    # host keys and certificates
    RootSecret("/etc/ssh/ssh_host_*_key", "OpenSSH: the host's private keys"),
    RootSecret("/etc/ssl/private", "TLS private keys (Debian)"),
    RootSecret("/etc/pki/tls/private", "TLS private keys (Red Hat)"),
    RootSecret("/etc/letsencrypt/archive", "certbot: certificate private keys"),
    RootSecret("/etc/letsencrypt/keys", "certbot: private keys"),
    RootSecret("/etc/letsencrypt/accounts", "certbot: ACME account keys"),
    # networks and VPNs
    RootSecret("/etc/NetworkManager/system-connections", "Wi-Fi and VPN passwords"),
    RootSecret("/etc/wireguard", "WireGuard: private keys"),
    RootSecret("/etc/ipsec.secrets", "IPsec: pre-shared and private keys"),
    RootSecret("/etc/ipsec.d/private", "IPsec: private keys"),
    RootSecret("/etc/ppp/chap-secrets", "PPP: CHAP passwords"),
    RootSecret("/etc/ppp/pap-secrets", "PPP: PAP passwords"),
    RootSecret("/etc/openvpn", "OpenVPN: keys and credentials"),
    RootSecret("/var/lib/tailscale", "Tailscale: the node key"),
    RootSecret("/var/lib/zerotier-one", "ZeroTier: identity.secret"),
    # services and CI
    RootSecret("/etc/mysql/debian.cnf", "MySQL/MariaDB: the maintenance account's password"),
    RootSecret("/etc/gitlab-runner/config.toml", "GitLab Runner: runner tokens"),
    RootSecret("/etc/gitlab/gitlab-secrets.json", "GitLab: instance secrets"),
    RootSecret("/var/lib/jenkins/secrets", "Jenkins: the master key and secrets"),
    RootSecret("/var/lib/jenkins/credentials.xml", "Jenkins: stored credentials"),
    RootSecret("/etc/ceph/*keyring*", "Ceph: cluster keys"),
    RootSecret("/etc/libvirt/secrets", "libvirt: stored secrets"),
    RootSecret("/var/lib/cloud", "cloud-init: user-data (often holds secrets)"),
    RootSecret("/var/lib/systemd/credential.secret", "systemd: the credential encryption key"),
    RootSecret("/etc/credstore", "systemd: system credentials"),
    RootSecret("/etc/credstore.encrypted", "systemd: encrypted system credentials"),
    RootSecret("/var/spool/cron", "crontabs of every user (commands with secrets in them)"),
    # containers and clusters
    RootSecret("/var/lib/docker", "Docker: every container's files, volumes, swarm keys"),
    RootSecret("/var/lib/containerd", "containerd: container snapshots"),
    RootSecret("/var/lib/containers", "Podman/CRI-O: container storage"),
    RootSecret("/etc/docker/key.json", "Docker: the daemon's identity key"),
    RootSecret("/etc/kubernetes/pki", "Kubernetes: cluster CA and component keys"),
    RootSecret("/etc/kubernetes/*.conf", "Kubernetes: admin and component kubeconfigs"),
    RootSecret("/var/lib/kubelet/pki", "Kubernetes: the kubelet's keys"),
    RootSecret("/etc/rancher", "k3s/RKE2: the admin kubeconfig"),
    RootSecret("/var/lib/rancher", "k3s/RKE2: cluster token and TLS keys"),
    # root's own home, when $HOME is elsewhere (sudo -E)
    RootSecret("/root/.ssh", "root's SSH keys"),
)

# ---------------------------------------------------------------------------------------------
# Protected names: what the host runs later, kept out of the jail's reach
# ---------------------------------------------------------------------------------------------

# Where a protected name applies (``ProtectedName.where``).
ROOT: Final = "root"  # below every writable root (the project's own repository and config)
HOME: Final = "home"  # below $HOME, only when $HOME is inside a writable root
CARGO_HOME: Final = "cargo-home"  # below CARGO_HOME, only when it is inside a writable root

# How the post-run guard judges a protected name that a command *created* (``judge``); the
# judges themselves (which config keys run code, which hook names are active) are the tables
# at the top of ``stockade.sandbox.guard``.
ANYTHING: Final = "anything"  # whatever appears there runs on the host: quarantine it
HARMLESS: Final = "harmless"  # creating it cannot loosen anything: leave it
GIT_HOOKS: Final = "git-hooks"  # hooks with an active name (not *.sample)
GIT_CONFIG: Final = "git-config"  # exec-capable keys: core.fsmonitor, aliases with !, ...
GITMODULES: Final = "gitmodules"  # ext:: URLs, update = !command
MCP_JSON: Final = "mcp-json"  # MCP servers with a command
CLAUDE_SETTINGS: Final = "claude-settings"  # hooks, helpers, permissions, enabled servers
GEMINI_SETTINGS: Final = "gemini-settings"  # MCP servers, tool discovery/call commands
VSCODE: Final = "vscode"  # tasks run on folder open, settings naming executables
IDEA: Final = "idea"  # file watchers and startup tasks
PYTHON_SITE: Final = "python-site"  # .pth files and usercustomize.py run at every start


class ProtectedName(NamedTuple):
    """A name the jail must not plant or change, with the threat it guards against.

    When it exists it is bound read-only as it is (bwrap; ``mount`` False: judged only); a
    name that does not exist yet cannot be mount-protected without creating a mount point on
    the host, so whatever a command creates there is judged after the command (``judge``)
    and moved to quarantine when the host would run it. ``name`` is relative to ``where``;
    a component may be a glob (``python3*``).
    """

    name: str
    is_dir: bool
    threat: str
    where: str = ROOT
    judge: str = ANYTHING
    mount: bool = True


PROTECTED_NAMES: Final[tuple[ProtectedName, ...]] = (
    # -- every writable root: stockade, git, editors and agents that open the folder --------
    ProtectedName(
        ".stockade",
        True,
        "stockade's project settings: a trusted workspace's layer would loosen the next jail "
        "(a new one only tightens until the user trusts it, but nothing the agent writes may "
        "configure its own jail: a created one is moved aside)",
    ),
    ProtectedName(
        ".git/hooks", True, "git runs hooks on the host (commit, checkout, merge)", judge=GIT_HOOKS
    ),
    ProtectedName(
        ".git/config",
        False,
        "core.fsmonitor, core.hooksPath, core.pager, filters, aliases with !: host git runs "
        "them (git status in the project is enough)",
        judge=GIT_CONFIG,
    ),
    ProtectedName(
        ".git/config.worktree", False, "per-worktree git config: the same keys", judge=GIT_CONFIG
    ),
    ProtectedName(
        ".git/worktrees/*/config.worktree",
        False,
        "a linked worktree's own config (read with extensions.worktreeConfig): the same keys",
        judge=GIT_CONFIG,
    ),
    ProtectedName(
        ".git/worktrees/*/commondir",
        False,
        "points a linked worktree's git at another directory's config and hooks",
    ),
    ProtectedName(
        ".git/commondir",
        False,
        "points git at another directory's config and hooks",
    ),
    ProtectedName(
        ".git/modules/*/hooks", True, "a submodule's hooks: git runs them", judge=GIT_HOOKS
    ),
    ProtectedName(
        ".git/modules/*/config",
        False,
        "a submodule's config: host git status in the parent runs its fsmonitor",
        judge=GIT_CONFIG,
    ),
    ProtectedName(
        ".gitmodules",
        False,
        "submodule URLs (ext:: runs a command) - project content that git submodule add edits, "
        "so it is judged, not made read-only",
        judge=GITMODULES,
        mount=False,
    ),
    ProtectedName(".mcp.json", False, "agents start the MCP servers it names", judge=MCP_JSON),
    ProtectedName(
        ".claude/settings.json",
        False,
        "Claude Code runs its hooks, helpers and MCP servers, and obeys its permissions",
        judge=CLAUDE_SETTINGS,
    ),
    ProtectedName(
        ".claude/settings.local.json", False, "the same, per user", judge=CLAUDE_SETTINGS
    ),
    ProtectedName(".cursor/mcp.json", False, "Cursor starts the MCP servers", judge=MCP_JSON),
    ProtectedName(
        ".gemini/settings.json",
        False,
        "Gemini CLI starts MCP servers and tool discovery commands",
        judge=GEMINI_SETTINGS,
    ),
    ProtectedName(
        ".vscode", True, "VS Code runs folder-open tasks and the tools settings name", judge=VSCODE
    ),
    ProtectedName(".idea", True, "JetBrains IDEs run file watchers and startup tasks", judge=IDEA),
    ProtectedName(".envrc", False, "direnv runs it on cd (once allowed)"),
    ProtectedName(".devcontainer", True, "initializeCommand runs on the host"),
    ProtectedName(".devcontainer.json", False, "initializeCommand runs on the host"),
    # -- $HOME, when it is inside a writable root: what shells, git, ssh, Python, the desktop
    #    and agents read at start ---------------------------------------------------------------
    *(
        ProtectedName(name, False, f"{shell} runs it at {when}", where=HOME)
        for name, shell, when in (
            (".bashrc", "bash", "every interactive start"),
            (".bash_profile", "bash", "every login"),
            (".bash_login", "bash", "every login (without .bash_profile)"),
            (".bash_logout", "bash", "every logout"),
            (".profile", "sh-family shells", "every login"),
            (".zshenv", "zsh", "every start, even scripts"),
            (".zshrc", "zsh", "every interactive start"),
            (".zprofile", "zsh", "every login"),
            (".zlogin", "zsh", "every login"),
            (".zlogout", "zsh", "every logout"),
            (".xprofile", "the display manager", "every graphical login"),
            (".xsession", "the display manager", "every graphical login"),
            (".xinitrc", "startx", "every X start"),
            (".pam_environment", "pam_env", "every login (variables such as LD_PRELOAD)"),
            (".vimrc", "vim", "every start"),
            (".exrc", "vi", "every start"),
            (".emacs", "Emacs", "every start"),
            (".tmux.conf", "tmux", "every start (run-shell)"),
        )
    ),
    ProtectedName(".bashrc.d", True, "sourced by many .bashrc files", where=HOME),
    ProtectedName(".config/fish", True, "fish runs config.fish and conf.d at start", where=HOME),
    ProtectedName(".config/nvim", True, "Neovim runs init.lua / init.vim at start", where=HOME),
    ProtectedName(".emacs.d", True, "Emacs runs init.el at start", where=HOME),
    ProtectedName(
        ".gitconfig", False, "git's user config: the same keys", where=HOME, judge=GIT_CONFIG
    ),
    ProtectedName(
        ".config/git/config", False, "git's user config (XDG)", where=HOME, judge=GIT_CONFIG
    ),
    ProtectedName(
        ".ssh",
        True,
        "authorized_keys admits a key, rc and config run commands (masked when it exists)",
        where=HOME,
    ),
    ProtectedName(".local/bin", True, "on PATH before the system directories", where=HOME),
    ProtectedName("bin", True, "~/bin is on PATH when it exists (Debian's .profile)", where=HOME),
    ProtectedName("go/bin", True, "go install puts programs on PATH here", where=HOME),
    ProtectedName(".cargo", True, "cargo's binaries, config and env file", where=HOME),
    ProtectedName(".rustup", True, "the Rust toolchains the host runs", where=HOME),
    ProtectedName(".bun/bin", True, "bun's installed programs on PATH", where=HOME),
    ProtectedName(".deno/bin", True, "deno's installed programs on PATH", where=HOME),
    ProtectedName(".nvm", True, "the Node.js versions nvm puts on PATH", where=HOME),
    ProtectedName(".pyenv", True, "the Python versions pyenv puts on PATH", where=HOME),
    ProtectedName(
        ".local/lib/python*/site-packages",
        True,
        "Python runs .pth files and usercustomize at every start",
        where=HOME,
        judge=PYTHON_SITE,
    ),
    ProtectedName(
        ".ipython/profile_default/startup", True, "IPython runs these at start", where=HOME
    ),
    ProtectedName(".config/autostart", True, "the desktop starts these at login", where=HOME),
    ProtectedName(".config/systemd/user", True, "systemd runs user units", where=HOME),
    ProtectedName(
        ".config/environment.d", True, "systemd's user environment (LD_PRELOAD)", where=HOME
    ),
    ProtectedName(".local/share/direnv/allow", True, "which .envrc files direnv runs", where=HOME),
    ProtectedName(".npmrc", False, "npm's script-shell, node-options, registry", where=HOME),
    ProtectedName(".yarnrc.yml", False, "yarnPath runs any script", where=HOME),
    ProtectedName(".config/pip", True, "pip's index (where code comes from)", where=HOME),
    ProtectedName(
        ".claude.json", False, "Claude Code's user MCP servers", where=HOME, judge=MCP_JSON
    ),
    ProtectedName(".claude", True, "Claude Code's user hooks and settings", where=HOME),
    ProtectedName(".codex", True, "Codex CLI: MCP servers and notify command", where=HOME),
    ProtectedName(".gemini", True, "Gemini CLI: MCP servers and commands", where=HOME),
    ProtectedName(".cursor", True, "Cursor: MCP servers", where=HOME),
    ProtectedName(
        ".config/Code/User", True, "VS Code's user settings and tasks", where=HOME, judge=VSCODE
    ),
    # -- CARGO_HOME, when a writable root holds it: a store for data, not code -------------
    ProtectedName("bin", True, "installed binaries run on the host", where=CARGO_HOME),
    ProtectedName(
        "config", False, "build settings (rustc wrapper, runners) run on the host", where=CARGO_HOME
    ),
    ProtectedName(
        "config.toml", False, "build settings (rustc wrapper, runners)", where=CARGO_HOME
    ),
    ProtectedName("env", False, "sourced by the user's shell rc files", where=CARGO_HOME),
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

# ---------------------------------------------------------------------------------------------
# Backends and autonomy levels
# ---------------------------------------------------------------------------------------------

#: Every value ``--backend`` / ``sandbox.backend`` accepts.
BACKEND_NAMES: Final[tuple[str, ...]] = ("auto", "bwrap", "landlock", "seatbelt", "none")
#: What ``auto`` tries, in order, per platform (``sys.platform``); elsewhere nothing.
AUTO_ORDER_BY_PLATFORM: Final[dict[str, tuple[str, ...]]] = {
    "linux": ("bwrap", "landlock"),
    "darwin": ("seatbelt",),
}
#: What ``auto`` tries, in order, on this platform.
AUTO_ORDER: Final[tuple[str, ...]] = AUTO_ORDER_BY_PLATFORM.get(sys.platform, ())

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
