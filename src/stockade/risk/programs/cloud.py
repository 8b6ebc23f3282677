"""Clouds, clusters and hosted services: gh, kubectl, helm, terraform, aws and the deployment
CLIs. Reading is read-only; changing remote state is high; deleting it (``kubectl delete``,
``terraform destroy``, ``gh repo delete``) destructive. ``gh api`` is read-only for GET.
"""

# ruff: noqa: SIM905  (tables are whitespace-separated strings on purpose: easy to audit)

from __future__ import annotations

from typing import TYPE_CHECKING

from stockade.risk.flags import flag, read, value
from stockade.risk.model import Args, Call, D, Found, H, L, M, R, Spec, SubTable
from stockade.risk.specs import secret_arguments

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from stockade.risk.engine import Context

_GH_METHOD = value("-X", "--method")
_GH_FIELDS = value("-f", "-F", "--field", "--raw-field")
_GH_INPUT = read("--input")


def gh_api_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """``gh api``: GET is read-only; another method or fields (which make a POST) high."""
    method_given = args.first(_GH_METHOD)
    method = (method_given.value or "").upper() if method_given is not None else ""
    fields = args.has(_GH_FIELDS, _GH_INPUT)
    if method in ("", "GET", "HEAD") and not (fields and method == ""):
        found.add(R, "gh.api", "gh api GET only reads")
    else:
        found.add(H, "gh.api", f"gh api {method or 'POST'} changes things on GitHub")
    secret_arguments(found, call)


GH_API = Spec(
    None,
    flags=(
        _GH_METHOD,
        _GH_FIELDS,
        _GH_INPUT,
        value("-H", "--header", "-q", "--jq", "-t", "--template", "--hostname", "-p"),
        value("--preview", "--cache"),
    ),
    check=gh_api_check,
    examples=(
        ("gh api repos/o/r/pulls", R),
        ("gh api -X POST /x", H),
        ("gh api graphql -f query=x", H),
        ("gh api --input .env /x", H, "secret.read"),
    ),
)

_GH: SubTable = {
    "": R,
    "status": R,
    "search": R,
    "browse": L,
    "help": R,
    "version": R,
    "completion": R,
    "api": GH_API,
    "attestation": R,
    "pr": {
        "list": R,
        "view": R,
        "status": R,
        "diff": R,
        "checks": R,
        "checkout": L,
        "co": L,
        "create": H,
        "new": H,
        "merge": H,
        "close": H,
        "reopen": H,
        "comment": H,
        "edit": H,
        "review": H,
        "ready": H,
        "lock": H,
        "unlock": H,
        "update-branch": H,
        "revert": H,
    },
    "issue": {
        "list": R,
        "view": R,
        "status": R,
        "create": H,
        "new": H,
        "comment": H,
        "close": H,
        "reopen": H,
        "edit": H,
        "delete": D,
        "transfer": H,
        "pin": H,
        "unpin": H,
        "lock": H,
        "unlock": H,
        "develop": M,
    },
    "repo": {
        "view": R,
        "list": R,
        "clone": M,
        "create": H,
        "new": H,
        "fork": H,
        "delete": D,
        "archive": D,
        "unarchive": H,
        "rename": H,
        "edit": H,
        "sync": H,
        "set-default": L,
        "deploy-key": {"list": R, "add": H, "delete": H},
        "autolink": {"list": R, "view": R, "create": H, "delete": H},
        "license": R,
        "gitignore": R,
    },
    "run": {"list": R, "view": R, "watch": R, "download": L, "rerun": M, "cancel": M, "delete": H},
    "workflow": {"list": R, "view": R, "run": H, "enable": H, "disable": H},
    "release": {
        "list": R,
        "view": R,
        "download": L,
        "create": H,
        "edit": H,
        "upload": H,
        "delete": D,
        "delete-asset": D,
        "verify": R,
        "verify-asset": R,
    },
    "auth": {
        "status": R,
        "token": H,
        "login": H,
        "logout": H,
        "refresh": H,
        "setup-git": H,
        "switch": M,
    },
    "gist": {
        "list": R,
        "view": R,
        "create": H,
        "new": H,
        "edit": H,
        "delete": D,
        "clone": M,
        "rename": H,
    },
    "label": {"list": R, "create": H, "edit": H, "delete": H, "clone": H},
    "cache": {"list": R, "delete": H},
    "secret": {"list": R, "set": H, "delete": H},
    "variable": {"list": R, "get": R, "set": H, "delete": H},
    "ssh-key": {"list": R, "add": H, "delete": H},
    "gpg-key": {"list": R, "add": H, "delete": H},
    "config": {"get": R, "list": R, "set": M, "clear-cache": L},
    "extension": {
        "list": R,
        "search": R,
        "browse": R,
        "install": H,
        "upgrade": H,
        "remove": M,
        "create": L,
        "exec": H,
    },
    "alias": {"list": R, "set": H, "delete": M, "import": H},
    "org": {"list": R},
    "project": {"list": R, "view": R, "field-list": R, "item-list": R, "*": H},
    "ruleset": {"list": R, "view": R, "check": R},
    "codespace": {"list": R, "view": R, "*": H},
    "copilot": H,
    "agent-task": {"list": R, "view": R, "*": H},
}

_KUBECTL: SubTable = {
    "": R,
    "get": R,
    "describe": R,
    "logs": R,
    "explain": R,
    "version": R,
    "api-resources": R,
    "api-versions": R,
    "cluster-info": R,
    "top": R,
    "diff": R,
    "events": R,
    "wait": R,
    "completion": R,
    "plugin": {"list": R},
    "auth": {"can-i": R, "whoami": R, "reconcile": H},
    "config": {
        "view": R,
        "get-contexts": R,
        "current-context": R,
        "get-clusters": R,
        "get-users": R,
        "use-context": M,
        "use": M,
        "set-context": M,
        "*": H,
    },
    "apply": Spec(H, "subcommand.table", flags=(flag("--dry-run", tier=R),)),
    "create": H,
    "patch": H,
    "replace": H,
    "scale": H,
    "autoscale": H,
    "rollout": {"status": R, "history": R, "*": H},
    "set": H,
    "label": H,
    "annotate": H,
    "expose": H,
    "cp": H,
    "edit": H,
    "port-forward": H,
    "proxy": H,
    "run": H,
    "attach": H,
    "exec": H,
    "debug": H,
    "cordon": H,
    "uncordon": H,
    "drain": H,
    "taint": H,
    "certificate": H,
    "kustomize": R,
    "delete": Spec(D, "subcommand.table", flags=(flag("--dry-run", tier=R),)),
}

_HELM: SubTable = {
    "": R,
    "list": R,
    "ls": R,
    "status": R,
    "get": R,
    "show": R,
    "inspect": R,
    "template": R,
    "lint": R,
    "search": R,
    "version": R,
    "history": R,
    "env": R,
    "verify": R,
    "help": R,
    "install": Spec(H, "subcommand.table", flags=(flag("--dry-run", tier=R),)),
    "upgrade": Spec(H, "subcommand.table", flags=(flag("--dry-run", tier=R),)),
    "rollback": H,
    "test": M,
    "uninstall": D,
    "delete": D,
    "del": D,
    "un": D,
    "package": L,
    "pull": M,
    "push": H,
    "create": L,
    "dependency": {"list": R, "build": M, "update": M},
    "repo": {"list": R, "add": M, "update": M, "remove": M, "index": L},
    "plugin": {"list": R, "*": H},
    "registry": H,
}

_TERRAFORM: SubTable = {
    "": R,
    "validate": R,
    "plan": R,
    "show": R,
    "output": R,
    "version": R,
    "providers": R,
    "graph": R,
    "console": R,
    "fmt": Spec(M, "subcommand.table", flags=(flag("-check", tier=R),)),
    "init": M,
    "get": M,
    "refresh": H,
    "apply": Spec(H, "subcommand.table", flags=(flag("-destroy", tier=D),)),
    "import": H,
    "taint": H,
    "untaint": H,
    "destroy": D,
    "login": H,
    "logout": L,
    "test": M,
    "force-unlock": H,
    "state": {"list": R, "show": R, "pull": R, "mv": H, "rm": H, "push": D, "replace-provider": H},
    "workspace": {"list": R, "show": R, "select": L, "new": L, "delete": H},
}

_AWS: SubTable = {
    "": R,
    "*": H,
    "help": R,
    "--version": R,
    "sts": {"get-caller-identity": R, "*": H},
    "s3": {
        "ls": R,
        "presign": H,
        "cp": H,
        "mv": H,
        "sync": Spec(
            H, "subcommand.table", flags=(flag("--dryrun", tier=R), flag("--delete", tier=D))
        ),
        "mb": H,
        "rm": Spec(
            H, "subcommand.table", flags=(flag("--dryrun", tier=R), flag("--recursive", tier=D))
        ),
        "rb": D,
        "website": H,
    },
    "s3api": {
        "list-buckets": R,
        "list-objects": R,
        "list-objects-v2": R,
        "head-object": R,
        "get-bucket-policy": R,
        "delete-bucket": D,
        "*": H,
    },
    "configure": {"list": R, "get": H, "*": H},
}


SPECS: dict[str, Spec] = {
    "gh": Spec(
        R,
        subcommands=_GH,
        flags=(value("-R", "--repo", "--hostname"),),
        examples=(("gh pr list", R), ("gh pr create --fill", H), ("gh repo delete o/r", D)),
    ),
    "kubectl": Spec(
        R,
        subcommands=_KUBECTL,
        flags=(
            value("-n", "--namespace", "--context", "--cluster", "--user", "-s", "--server"),
            value("-l", "--selector", "-o", "--output", "--token", "--as", "--as-group"),
            value("--request-timeout"),
            read("--kubeconfig"),
        ),
        examples=(
            ("kubectl get pods", R),
            ("kubectl -n prod describe pod x", R),
            ("kubectl delete ns prod", D),
            ("kubectl delete --dry-run=client -f x", R),
        ),
    ),
    "helm": Spec(
        R,
        subcommands=_HELM,
        flags=(
            value("-n", "--namespace", "--kube-context", "--repository-cache"),
            read("--kubeconfig", "--registry-config", "--repository-config"),
        ),
    ),
    "terraform": Spec(
        R,
        subcommands=_TERRAFORM,
        flags=(value("-chdir"),),
        examples=(("terraform plan", R), ("terraform apply -destroy", D), ("terraform destroy", D)),
    ),
    "aws": Spec(
        R,
        subcommands=_AWS,
        flags=(
            value("--profile", "--region", "--output", "--endpoint-url", "--query"),
            value("--cli-read-timeout", "--cli-connect-timeout", "--color"),
            read("--ca-bundle"),
        ),
        examples=(
            ("aws s3 ls", R),
            ("aws s3 rm --recursive s3://b", D),
            ("aws s3 rm s3://b --recursive --dryrun", R),
            ("aws s3 sync . s3://b --delete", D),
        ),
    ),
    **{
        name: Spec(H, why=f"{name} changes cloud or hosted resources")
        for name in """gcloud az doctl flyctl heroku vercel netlify wrangler firebase ansible
            ansible-playbook pulumi vagrant packer""".split()
    },
}
#: OpenShift's oc is kubectl with more subcommands; OpenTofu is terraform's fork.
SPECS["oc"] = SPECS["kubectl"]
SPECS["tofu"] = SPECS["terraform"]
