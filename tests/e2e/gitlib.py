# gitlib.py: helpers of the Git tests (tests/e2e/test_git_*.py): the forge double (tests/fixtures/git_remote.py) and the git CLI
import os
import secrets
import shutil
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "fixtures", "git_remote.py")
CA = os.environ.get("SVC_TEST_TLS_CA", "")
FORGE_HOST = "git.example.com"   # tests/stack.env: 127.0.0.10, allowed by SVC_OUTBOUND_ALLOW_NETS
LOOP_HOST = "gitloop.example.com"  # resolves to 127.0.0.1: refused

GIT_ENV = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null", GIT_TERMINAL_PROMPT="0",
               GIT_AUTHOR_NAME="Forge Person", GIT_AUTHOR_EMAIL="forge@example.com",
               GIT_COMMITTER_NAME="Forge Person", GIT_COMMITTER_EMAIL="forge@example.com")


def git(*args, cwd=None, check=True):
    """Runs the real git CLI; returns its stdout as text (raises on failure when check)."""
    r = subprocess.run(["git"] + list(args), cwd=cwd, env=GIT_ENV, capture_output=True, text=True, timeout=120)
    if check and r.returncode != 0:
        raise AssertionError("git %s: %s" % (" ".join(args), r.stderr))
    return r.stdout.strip()


class Forge:
    """The forge double on 127.0.0.10 with a certificate of the test CA for git.example.com."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="svc-forge-")
        self.root = os.path.join(self.dir, "repos")
        os.makedirs(self.root)
        self.user, self.password = "forge", "tok-" + secrets.token_hex(12)
        self.log = os.path.join(self.dir, "requests.log")
        key, csr, cert, ext = (os.path.join(self.dir, n) for n in ("site.key", "site.csr", "site.pem", "ext.cnf"))
        with open(ext, "w") as f:
            f.write("subjectAltName=DNS:%s\n" % FORGE_HOST)
        subprocess.run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=" + FORGE_HOST,
                        "-keyout", key, "-out", csr], check=True, capture_output=True)
        subprocess.run(["openssl", "x509", "-req", "-in", csr, "-CA", CA, "-CAkey", os.path.join(os.path.dirname(CA), "ca.key"),
                        "-CAcreateserial", "-CAserial", os.path.join(self.dir, "ca.srl"), "-days", "2",
                        "-extfile", ext, "-out", cert], check=True, capture_output=True)
        port_file = os.path.join(self.dir, "port")
        self.proc = subprocess.Popen(["python3", FIXTURE, "--root", self.root, "--cert", cert, "--key", key,
                                      "--user", self.user, "--password", self.password, "--log", self.log,
                                      "--port-file", port_file], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            if os.path.exists(port_file):
                break
            time.sleep(0.1)
        with open(port_file) as f:
            self.port = int(f.read())

    def url(self, repo, host=FORGE_HOST):
        return "https://%s:%d/%s.git" % (host, self.port, repo)

    def path(self, repo):
        return os.path.join(self.root, repo + ".git")

    def make_repo(self, repo, commits, branch="main"):
        """A bare repository `repo` whose `branch` has the commits given: a list of {path: text} dicts."""
        work = tempfile.mkdtemp(prefix="svc-forge-work-", dir=self.dir)
        git("init", "-q", "-b", branch, work)
        for files in commits:
            for p, text in files.items():
                os.makedirs(os.path.dirname(os.path.join(work, p)) or work, exist_ok=True)
                with open(os.path.join(work, p), "w") as f:
                    f.write(text)
            git("add", "-A", cwd=work)
            git("commit", "-q", "-m", "forge commit %s" % ", ".join(sorted(files)), cwd=work)
        git("clone", "-q", "--bare", work, self.path(repo))
        shutil.rmtree(work)
        return git("--git-dir", self.path(repo), "rev-parse", branch)

    def head(self, repo, branch="main"):
        """The sha of `branch` of the bare repository, or None."""
        out = git("--git-dir", self.path(repo), "rev-parse", "--verify", "--quiet", "refs/heads/" + branch, check=False)
        return out or None

    def commit_on(self, repo, files, branch="main"):
        """Adds a commit with `files` on top of `branch` of the bare repository; returns its sha."""
        work = tempfile.mkdtemp(prefix="svc-forge-work-", dir=self.dir)
        git("clone", "-q", "-b", branch, self.path(repo), work)
        for p, text in files.items():
            with open(os.path.join(work, p), "w") as f:
                f.write(text)
        git("add", "-A", cwd=work)
        git("commit", "-q", "-m", "forge change", cwd=work)
        git("push", "-q", "origin", branch, cwd=work)
        shutil.rmtree(work)
        return self.head(repo, branch)

    def requests(self):
        try:
            with open(self.log) as f:
                return f.read()
        except OSError:
            return ""

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


def wait_import(api, acct, pid, timeout=90):
    """Polls GET /projects/:id until its importState is no longer "importing"; returns the last body."""
    deadline = time.time() + timeout
    body = None
    while time.time() < deadline:
        r = api("GET", "/projects/%s" % pid, token=acct.token)
        body = r.body if r.status == 200 else None
        if body and body.get("importState") != "importing":
            return body
        time.sleep(0.5)
    return body
