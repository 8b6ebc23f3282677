"""Container engines (docker, podman, nerdctl) and compose. Most subcommands are table tiers;
``docker run``/``create`` is analysed: host namespaces, privileges, escape capabilities, or
``/``, the docker socket or a system directory mounted into the container escape it
(destructive); the host network, a device or a path outside the project is high. What runs
inside the container is not classified (it is contained).
"""

# ruff: noqa: SIM905  (tables are whitespace-separated strings on purpose: easy to audit)

from __future__ import annotations

from typing import TYPE_CHECKING

from stockade.risk.flags import flag, read, value, write
from stockade.risk.model import Args, Call, D, Flag, Found, H, L, M, R, Spec, SubTable
from stockade.risk.paths import (
    DANGER_NAMES,
    HOME_VAR,
    P_ABS,
    P_DEVICE,
    P_HOME,
    PWD_VAR,
    danger,
    is_secret,
    path_class,
)

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from stockade.risk.engine import Context

#: Linux capabilities that let a container escape (``--cap-add``).
ESCAPE_CAPS = frozenset(
    """ALL SYS_ADMIN SYS_PTRACE SYS_MODULE DAC_READ_SEARCH DAC_OVERRIDE SYS_RAWIO BPF
        NET_ADMIN SYS_BOOT MKNOD""".split()
)
#: Host paths whose mount into a container escapes it.
ESCAPE_MOUNTS = frozenset(
    """/var/run/docker.sock /run/docker.sock /var/run /run /proc /sys /dev /etc /root
        /var/lib/docker /run/containerd/containerd.sock /run/podman/podman.sock""".split()
)

_PRIVILEGED = Flag(
    ("--privileged",), D, "docker.host-escape", why="a privileged container controls the host"
)
_DEVICE = Flag(("--device",), H, "docker.host-access", "value", "a host device in the container")
_NAMESPACES = value("--pid", "--ipc", "--uts", "--userns", "--cgroupns")
_NETWORK = value("--network", "--net")
_CAP_ADD = value("--cap-add")
_SECURITY = value("--security-opt")
_MOUNTS = value("-v", "--volume", "--mount")


def run_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """``docker run``/``create``: the options up to the image decide."""
    for given in args.given:
        option = given.flag
        text = given.value or ""
        static = given.statics[0] if given.statics else True
        if option is _NAMESPACES and text == "host":
            found.add(D, "docker.host-escape", f"{given.name}=host shares the host's namespace")
        elif option is _NETWORK and text == "host":
            found.add(H, "docker.host-access", "the container uses the host's network")
        elif option is _CAP_ADD and text.upper().removeprefix("CAP_") in ESCAPE_CAPS:
            found.add(D, "docker.host-escape", f"--cap-add {text} lets it escape")
        elif option is _SECURITY and (
            "unconfined" in text or text == "label=disable" or text.startswith("label:disable")
        ):
            found.add(D, "docker.host-escape", f"--security-opt {text} removes confinement")
        elif option is _MOUNTS:
            _mount(ctx, found, text, static)


def _mount(ctx: Context, found: Found, spec: str, static: bool) -> None:
    if spec.startswith(("type=", "source=", "src=")) or ",src" in spec or ",source" in spec:
        fields = dict(part.partition("=")[::2] for part in spec.split(","))
        source = fields.get("source") or fields.get("src") or ""
    else:
        source = spec.split(":", 1)[0]
    if not source or source[0] not in "/~$.`":
        return  # a named volume
    if (
        not static
        and source[0] in "$`"
        and HOME_VAR.match(source) is None
        and PWD_VAR.match(source) is None
    ):
        found.add(H, "docker.host-access", f"mounts {source!r}, only known at run time")
        return
    kind = danger(source, static, ctx.cwd) or (
        "system" if source.rstrip("/") in ESCAPE_MOUNTS else None
    )
    if kind is not None:
        found.add(D, "docker.host-escape", f"mounts {DANGER_NAMES[kind]} into a container")
    elif is_secret(source, static):
        found.add(H, "secret.read", f"mounts {source!r}, which looks like a secret")
    elif path_class(source, static, ctx.cwd) in (P_ABS, P_HOME, P_DEVICE):
        found.add(H, "docker.host-access", f"mounts {source!r} from outside the project")


#: ``docker run``/``create`` (and ``container run``).
DOCKER_RUN = Spec(
    M,
    "subcommand.table",
    operands=("value", "rest"),
    flags=(
        _PRIVILEGED,
        _DEVICE,
        _NAMESPACES,
        _NETWORK,
        _CAP_ADD,
        _SECURITY,
        _MOUNTS,
        read("--env-file", "--label-file"),
        write("--cidfile"),
        value("-e", "--env", "-p", "--publish", "-w", "--workdir", "--name", "-u", "--user"),
        value("--cap-drop", "-l", "--label", "--entrypoint", "--platform", "-m", "--memory"),
        value("--cpus", "--restart", "--hostname", "-h", "--add-host", "--dns", "--tmpfs"),
        value("--ulimit", "--log-driver", "--log-opt", "--gpus", "--shm-size", "--stop-signal"),
        value("--health-cmd", "--pull", "--runtime", "--group-add", "--volumes-from", "--link"),
        value("--expose", "--stop-timeout", "--memory-swap", "--cpu-shares", "--cpuset-cpus"),
        value("--network-alias", "--ip", "--mac-address", "--sysctl", "--annotation", "-a"),
        value("--attach", "--isolation", "--domainname", "--oom-score-adj"),
        flag("-d", "--detach", "-i", "--interactive", "-t", "--tty", "--rm", "-P", "--init"),
        flag("-q", "--quiet", "--read-only", "--publish-all", "--no-healthcheck"),
    ),
    check=run_check,
    why="starts a container",
    examples=(
        ("docker run --rm alpine echo hi", M),
        ("docker run --privileged alpine", D, "docker.host-escape"),
        ("docker run -v /:/host alpine", D, "docker.host-escape"),
        ("docker run -v ~/src:/src alpine ls", H, "docker.host-access"),
        ("docker run --env-file .env x", H, "secret.read"),
        ("docker run alpine rm -rf /", M),
        ("docker run --network host x", H),
    ),
)

_COMPOSE: SubTable = {
    "ps": R,
    "logs": R,
    "config": R,
    "ls": R,
    "images": R,
    "top": R,
    "version": R,
    "events": R,
    "port": R,
    "up": M,
    "down": Spec(
        M,
        "subcommand.table",
        flags=(flag("-v", "--volumes", "--rmi", tier=H, why="removes volumes or images"),),
    ),
    "build": M,
    "pull": M,
    "push": H,
    "start": M,
    "stop": M,
    "restart": M,
    "run": M,
    "exec": H,
    "rm": H,
    "kill": H,
    "create": M,
    "pause": M,
    "unpause": M,
    "cp": M,
    "watch": M,
    "wait": R,
    "scale": M,
    "attach": H,
    "stats": R,
}

_DOCKER: SubTable = {
    "": R,
    "ps": R,
    "images": R,
    "inspect": R,
    "logs": R,
    "version": R,
    "info": R,
    "stats": R,
    "top": R,
    "port": R,
    "diff": R,
    "events": R,
    "search": R,
    "history": R,
    "build": M,
    "run": DOCKER_RUN,
    "create": DOCKER_RUN,
    "exec": H,
    "start": M,
    "stop": M,
    "restart": M,
    "pause": M,
    "unpause": M,
    "wait": R,
    "kill": H,
    "rm": H,
    "rmi": H,
    "pull": M,
    "push": H,
    "tag": L,
    "login": H,
    "logout": L,
    "cp": M,
    "commit": M,
    "save": L,
    "load": M,
    "import": M,
    "export": L,
    "rename": M,
    "update": M,
    "attach": H,
    "compose": _COMPOSE,
    "image": {
        "ls": R,
        "list": R,
        "inspect": R,
        "history": R,
        "rm": H,
        "prune": H,
        "pull": M,
        "push": H,
        "build": M,
        "tag": L,
        "save": L,
        "load": M,
        "import": M,
    },
    "container": {
        "ls": R,
        "list": R,
        "ps": R,
        "inspect": R,
        "logs": R,
        "top": R,
        "stats": R,
        "port": R,
        "diff": R,
        "run": DOCKER_RUN,
        "create": DOCKER_RUN,
        "exec": H,
        "start": M,
        "stop": M,
        "restart": M,
        "kill": H,
        "rm": H,
        "prune": H,
        "cp": M,
        "commit": M,
        "export": L,
        "rename": M,
        "update": M,
        "wait": R,
        "attach": H,
        "pause": M,
        "unpause": M,
    },
    "network": {
        "ls": R,
        "list": R,
        "inspect": R,
        "create": M,
        "rm": H,
        "prune": H,
        "connect": M,
        "disconnect": M,
    },
    "volume": {"ls": R, "list": R, "inspect": R, "create": L, "rm": D, "prune": D},
    "system": {
        "df": R,
        "info": R,
        "events": R,
        "prune": Spec(
            H,
            "subcommand.table",
            flags=(flag("--volumes", tier=D, why="deletes every unused volume"),),
        ),
    },
    "builder": {"ls": R, "prune": M, "build": M},
    "buildx": {
        "ls": R,
        "inspect": R,
        "du": R,
        "version": R,
        "build": M,
        "bake": M,
        "create": M,
        "use": L,
        "rm": M,
        "prune": M,
        "stop": M,
    },
    "context": {"ls": R, "list": R, "inspect": R, "show": R, "use": M, "create": M, "rm": M},
    "manifest": {"inspect": R, "*": H},
    "scout": R,
    "sbom": R,
    "trust": {"inspect": R, "*": H},
    "swarm": H,
    "service": {"ls": R, "ps": R, "inspect": R, "logs": R, "*": H},
    "stack": {"ls": R, "ps": R, "services": R, "*": H},
    "node": {"ls": R, "inspect": R, "*": H},
    "secret": {"ls": R, "inspect": H, "*": H},
    "config": {"ls": R, "inspect": R, "*": H},
    "plugin": {"ls": R, "inspect": R, "*": H},
}


SPECS: dict[str, Spec] = {
    "docker": Spec(
        R,
        subcommands=_DOCKER,
        flags=(
            value("-H", "--host", "-c", "--context", "-l", "--log-level", "--tlscacert"),
            value("--tlscert", "--tlskey", "-p", "--project-name", "--profile"),
            value("--project-directory", "--ansi", "--parallel", "--progress"),
            read("--config", "-f", "--file", "--env-file"),
        ),
        examples=(("docker ps", R), ("docker volume rm data", D), ("docker compose down -v", H)),
    ),
    "docker-compose": Spec(
        R,
        subcommands=_COMPOSE,
        flags=(
            value("-p", "--project-name", "--profile", "--project-directory", "--ansi"),
            value("--parallel", "--progress", "-H", "--host", "-c", "--context"),
            read("-f", "--file", "--env-file"),
        ),
    ),
}
#: podman and nerdctl implement the docker command line (the same subcommands and options).
SPECS["podman"] = SPECS["docker"]
SPECS["nerdctl"] = SPECS["docker"]
SPECS["podman-compose"] = SPECS["docker-compose"]  # the compose file format and commands
