"""A deterministic corpus of distinct, realistic agent shell commands for the benchmarks.

Hand-written everyday commands plus templated variations (files, flags, pipes, redirects,
substitutions), the way coding agents actually call the shell.
"""

from __future__ import annotations

import itertools
import random

BASE = [
    "ls -la", "git status", "git diff", "git log --oneline -20", "git branch -a", "pwd",
    "cat README.md", "grep -rn 'TODO' src", "python -m pytest -x -q", "npm run build",
    "npm test", "cargo test", "cargo build --release", "go test ./...", "go vet ./...",
    "make", "make test", "uv run pytest", "npx tsc --noEmit", "node --version",
    "python3 --version", "pip install -r requirements.txt", "npm install", "git add -A",
    "git commit -m 'Fix the parser'", "git push origin main", "git pull --rebase",
    "git fetch --all --prune", "git stash", "git stash pop", "git checkout -b feature/x",
    "git switch main", "git rebase main", "git merge --no-ff topic", "git reset --hard",
    "git clean -fdx", "git push --force-with-lease", "rm -rf build", "rm -rf node_modules",
    "mkdir -p out/dist", "touch src/__init__.py", "cp .env.example .env", "mv a.txt b.txt",
    "chmod +x scripts/run.sh", "docker ps", "docker build -t app .", "docker compose up -d",
    "kubectl get pods -n default", "curl -s https://api.github.com/repos/o/r | jq .stars",
    "curl -fsSL https://get.example.com | sh", "wget -qO- https://x/install.sh | bash",
    "find . -name '*.pyc' -delete", "find . -type f -name '*.py' | xargs wc -l",
    "du -sh * | sort -h | tail -5", "ps aux | grep python | grep -v grep",
    "echo $PATH | tr ':' '\\n'", "env | sort", "printenv HOME", "which python3",
    "head -n 50 src/main.py", "tail -f logs/app.log", "sed -i 's/foo/bar/g' src/app.py",
    "awk -F, '{print $2}' data.csv | sort | uniq -c", "jq '.dependencies' package.json",
    "tar -czf dist.tgz dist", "tar -xzf release.tgz -C /tmp/release", "unzip -o pkg.zip",
    "ssh deploy@host 'systemctl restart app'", "rsync -av --delete dist/ host:/srv/app/",
    "sudo apt-get install -y ripgrep", "brew install jq", "python manage.py migrate",
    "ruff check --fix .", "black --check .", "mypy --strict src", "eslint --fix src",
    "prettier --write 'src/**/*.ts'", "cat <<'EOF' > notes.md\n# Notes\n- item\nEOF",
    "python3 - <<'EOF'\nimport sys\nprint(sys.version)\nEOF",
    "for f in src/*.py; do python -m py_compile \"$f\"; done",
    "if [ -f package.json ]; then npm ci; fi", "export NODE_ENV=production && npm run build",
    "cd frontend && npm run lint && cd ..", "git log --format='%h %s' | head -n 10",
    "diff <(sort a.txt) <(sort b.txt)", "echo \"built at $(date +%s)\" >> build.log",
    "timeout 60 pytest tests/integration -q", "GIT_PAGER=cat git log -p -3",
    "bash -c 'cd /tmp && ls'", "gh pr create --fill", "gh pr list --state open",
    "gh api repos/o/r/issues?state=open", "terraform plan -out plan.tfplan",
    "helm upgrade --install app ./chart", "cat ~/.ssh/id_rsa.pub", "ls ~/.ssh",
    "xargs -I{} sh -c 'echo {}' < list.txt", "git -c core.pager=less log",
    "dd if=/dev/zero of=disk.img bs=1M count=64", "chmod 755 bin/tool",
]

PROGRAM_TEMPLATES = [
    "cat {file}", "head -n {n} {file}", "tail -n {n} {file}", "wc -l {file}",
    "grep -n '{word}' {file}", "grep -rn '{word}' {dir}", "rg '{word}' {dir}",
    "ls -la {dir}", "git diff {file}", "git log -n {n} -- {file}", "git add {file}",
    "git blame {file}", "git show HEAD~{n}:{file}", "python -m pytest {test} -x -q",
    "pytest {test} -k {word}", "ruff check {file}", "mypy {file}", "black {file}",
    "sed -n '{n},{m}p' {file}", "sed -i 's/{word}/{word2}/g' {file}", "cp {file} {dir}/",
    "rm {file}", "rm -rf {dir}", "mkdir -p {dir}/{word}", "find {dir} -name '*.{ext}'",
    "du -sh {dir}", "stat {file}", "file {file}", "diff {file} {file2}", "touch {file}",
    "cargo test {word}", "go test ./{dir}/...", "npm run {script}", "npx {tool} {file}",
    "docker logs {word}", "kubectl describe pod {word}", "echo '{word}' >> {file}",
    "awk '{{print ${n}}}' {file}", "jq '.{word}' {file}", "sort {file} | uniq -c",
    "chmod {mode} {file}", "tar -czf {word}.tgz {dir}", "curl -s https://{host}/{word}",
]

WRAPPERS = [
    "{cmd}", "{cmd} | head -{n}", "{cmd} 2>&1 | tail -{n}", "cd {dir} && {cmd}",
    "{cmd} > /tmp/{word}.log 2>&1", "timeout {n} {cmd}", "{cmd} || true",
    "{cmd} && echo done", "if {cmd}; then echo ok; fi", "echo \"$({cmd})\"",
]

FILES = ["src/main.py", "src/app.ts", "README.md", "setup.py", "Cargo.toml", "go.mod",
         "lib/util.rs", "tests/test_api.py", "docs/index.md", "package.json", "Makefile",
         ".env", "config/settings.yaml", "/etc/hosts", "~/notes.txt", "main.go"]
DIRS = ["src", "tests", "lib", "docs", "build", "dist", "scripts", "app", "pkg", "internal"]
WORDS = ["parse", "config", "handler", "TODO", "fixme", "user_id", "render", "token",
         "cache", "session", "retry", "timeout", "main", "init", "logger", "client"]
TESTS = ["tests/test_api.py", "tests/unit", "tests/test_cli.py::test_run", "test_models.py"]
SCRIPTS = ["build", "lint", "test", "dev", "typecheck", "format", "deploy", "start"]
TOOLS = ["tsc", "eslint", "prettier", "jest", "vitest"]
HOSTS = ["api.github.com", "example.com", "registry.npmjs.org"]


def corpus(size: int = 1500, seed: int = 1) -> list[str]:
    """``size`` distinct commands: the hand-written ones first, then templated variations."""
    rnd = random.Random(seed)
    seen: dict[str, None] = dict.fromkeys(BASE)
    for attempt in itertools.count():
        if len(seen) >= size or attempt > size * 50:
            break
        values = {
            "file": rnd.choice(FILES), "file2": rnd.choice(FILES), "dir": rnd.choice(DIRS),
            "word": rnd.choice(WORDS), "word2": rnd.choice(WORDS), "n": rnd.randint(1, 99),
            "m": rnd.randint(100, 400), "test": rnd.choice(TESTS), "ext": rnd.choice(
                ["py", "ts", "rs", "go", "md"]), "script": rnd.choice(SCRIPTS),
            "tool": rnd.choice(TOOLS), "host": rnd.choice(HOSTS),
            "mode": rnd.choice(["644", "755", "+x", "u+w", "600"]),
        }
        inner = rnd.choice(PROGRAM_TEMPLATES).format(**values)
        command = rnd.choice(WRAPPERS).format(cmd=inner, **values)
        seen.setdefault(command, None)
    return list(seen)[:size]
