#!/usr/bin/env python3
# test_deploy_atomic.py: publishing switches a site with one rename: readers that fetch the site without pause
# while it is published again and again (and restored) never see a missing file, an error, a file that is
# part one version and part another, or one cut at another version's length (Apache's core handler takes
# Content-Length from its stat before it opens the file; svc has Apache resolve a site's paths in the live
# deployment's own directory, docs/operations.md "Behind Apache 2.4"); run through lighttpd and again through
# Apache (./svc-dev test). SVC_TEST_ATOMIC_ROUNDS (default 1) repeats the publishes for more reads.
import os
import re
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import DATA_DIR, api, check, create_project, finish, items_of, signup, site_get  # noqa: E402

PUBLISHES = 12
READERS = 4


def index_of(n):
    return "<!doctype html><title>v%d</title>\n<!-- v%d -->\n%s\n<!-- v%d -->\n" % (n, n, "<p>filler</p>\n" * (50 * n), n)


def big_of(n):
    # the size changes with the version, so a mix of two versions cannot have either's length
    return ("v%03d|" % n) * (20000 + 700 * n)


def expected(path, body):
    """The version `body` claims, and whether it is exactly that version's file."""
    if path == "/":
        m = re.search(r"<title>v(\d+)</title>", body)
        n = int(m.group(1)) if m else -1
        return n, body == index_of(n)
    m = re.match(r"v(\d{3})\|", body)
    n = int(m.group(1)) if m else -1
    return n, body == big_of(n)


def of(path, n):
    return index_of(n) if path == "/" else big_of(n)


def main():
    a = signup(tag="atomic")
    p = create_project(a, template="blank", name="Atomic site")
    pid, slug = (p.body or {}).get("id"), (p.body or {}).get("slug")
    check("test_deploy_atomic_project_created", p.status == 201 and pid, p)
    if not pid:
        return

    def publish(n):
        for path, text in (("index.html", index_of(n)), ("big.txt", big_of(n))):
            r = api("PUT", "/projects/%s/files/%s" % (pid, path), {"content": text, "overwrite": True}, token=a.token)
            if r.status not in (200, 201):
                return r
        return api("POST", "/deploy/%s" % pid, token=a.token, timeout=120)

    r = publish(0)
    check("test_deploy_atomic_first_publish", r.status == 200, r)
    stop = threading.Event()
    bad, seen, counts = [], set(), [0]
    lock = threading.Lock()

    def reader(path):
        while not stop.is_set():
            try:
                r = site_get(slug, path)
            except Exception as e:  # a reset connection or a body shorter than its Content-Length is a failure too
                with lock:
                    counts[0] += 1
                    bad.append((path, "exception", repr(e)))
                continue
            n, whole = expected(path, r.raw.decode("utf-8", "replace")) if r.status == 200 else (-1, False)
            with lock:
                counts[0] += 1
                seen.add(n)
                if r.status != 200 or not whole:
                    bad.append((path, r.status, len(r.raw), r.raw[:80]))

    threads = [threading.Thread(target=reader, args=("/" if i % 2 == 0 else "/big.txt",), daemon=True)
               for i in range(READERS)]
    for th in threads:
        th.start()
    results, times, restored = [], [], 0
    for _ in range(max(1, int(os.environ.get("SVC_TEST_ATOMIC_ROUNDS", "1")))):
        for n in range(1, PUBLISHES + 1):
            t0 = time.monotonic()
            results.append(publish(n).status)
            times.append(time.monotonic() - t0)
            # a static site publishes in well under 0.1 s now, and lighttpd keeps a file's stat for up to a
            # second (docs/operations.md): without a pause twelve publishes fit in one second and readers see
            # only the first and the last site, so each one stays live a moment (times[] has the publish only)
            time.sleep(0.4)
        # and restores, which switch the same way without a build
        items = items_of(api("GET", "/projects/%s/deployments" % pid, token=a.token).body) or []
        restorable = [i["id"] for i in items if i.get("restorable") and i.get("status") != "live"]
        for did in restorable:
            results.append(api("POST", "/projects/%s/deployments/%s/restore" % (pid, did), token=a.token).status)
        restored += len(restorable)
    time.sleep(1.5)
    stop.set()
    for th in threads:
        th.join(10)
    print("# %d publishes (%.2f s each on average, files written through the API included), %d restores, "
          "%d reads during them, versions seen: %s, bad reads: %d"
          % (len(times), sum(times) / len(times), restored, counts[0], sorted(seen), len(bad)))
    check("test_deploy_atomic_every_publish_and_restore_answers_200", results and set(results) == {200}, results)
    check("test_deploy_atomic_readers_read_throughout", counts[0] >= 50, counts[0])
    check("test_deploy_atomic_readers_saw_the_site_change", len(seen - {-1}) >= 3, sorted(seen))
    check("test_deploy_atomic_no_read_saw_a_half_written_site", not bad, bad[:5])
    r = site_get(slug)
    check("test_deploy_atomic_site_still_answers", r.status == 200, r)
    # the live pointer and Apache's map (SVC_SITES_DIR, the stack's default) both name the live deployment
    items = items_of(api("GET", "/projects/%s/deployments" % pid, token=a.token).body) or []
    live = [i["id"] for i in items if i.get("status") == "live"]
    target = os.readlink(os.path.join(DATA_DIR, "published", slug)) if DATA_DIR else None
    try:
        with open(os.path.join(DATA_DIR, "sites", "apache-sites.map")) as f:
            mapped = [ln.split()[1] for ln in f if ln.split()[:1] == [slug]]
    except OSError as e:
        mapped = [repr(e)]
    check("test_deploy_atomic_live_pointer_and_apache_map_name_the_live_deployment",
          len(live) == 1 and target == "../deployments/%s/%s" % (pid, live[0]) and mapped == ["%s/%s" % (pid, live[0])],
          (live, target, mapped))


if __name__ == "__main__":
    main()
    sys.exit(finish())
