#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Checks deploy/kubernetes/oomkitd.yaml for every field oomkitd relies on.

   check-kubernetes.py MANIFEST PRESET CONFFILE PRIVS_C JSON_OUT

The schema itself (types, required and unknown fields) is checked by
check-kubernetes.mjs on the documents this writes to JSON_OUT.
"""
import json
import posixpath
import re
import sys

import yaml

manifest, preset_path, conffile, privs_c, json_out = sys.argv[1:6]
failures = []


def fail(msg):
    failures.append(msg)


def ini(text, commented=False):
    """The keys of an oomkitd.conf: {section: {key: [values]}}."""
    sections, sec = {}, None
    for line in text.splitlines():
        if commented and line.startswith(";") and re.match(r";(\[|[a-z_]+ = )", line):
            line = line[1:]
        line = line.strip()
        if not line or line[0] in ";#":
            continue
        if line.startswith("["):
            sec = line.strip("[]")
            sections.setdefault(sec, {})
            continue
        key, _, value = line.partition("=")
        sections.setdefault(sec, {}).setdefault(key.strip(), []).append(value.strip())
    return sections


docs = [d for d in yaml.safe_load_all(open(manifest)) if d is not None]
json.dump(docs, open(json_out, "w"))
by_kind = {d.get("kind"): d for d in docs}
for kind in ("Namespace", "ServiceAccount", "ConfigMap", "DaemonSet"):
    if kind not in by_kind:
        fail(f"no {kind}")
if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
ns = by_kind["Namespace"]["metadata"]["name"]
for d in docs:
    if d["kind"] != "Namespace" and d["metadata"].get("namespace") != ns:
        fail(f"{d['kind']} {d['metadata']['name']} is not in namespace {ns}")
if by_kind["Namespace"]["metadata"].get("labels", {}).get("pod-security.kubernetes.io/enforce") != "privileged":
    fail("the namespace does not allow hostPID and hostPath (pod-security.kubernetes.io/enforce: privileged)")

# The ConfigMap is the preset, byte for byte.
cm = by_kind["ConfigMap"]
preset_text = open(preset_path).read()
cm_key = next(iter(cm.get("data", {})), None)
if cm.get("data", {}).get(cm_key) != preset_text:
    fail(f"ConfigMap {cm['metadata']['name']} data is not a copy of {preset_path}")
preset = ini(preset_text)
defaults = ini(open(conffile).read(), commented=True)


def daemon_key(key):
    v = preset.get("oomkitd", {}).get(key) or defaults.get("oomkitd", {}).get(key)
    return v[-1] if v else None


ds = by_kind["DaemonSet"]
spec = ds["spec"]
pod = spec["template"]["spec"]
labels = spec["template"]["metadata"].get("labels", {})
for k, v in spec["selector"].get("matchLabels", {}).items():
    if labels.get(k) != v:
        fail(f"the selector {k}={v} does not match the pod template's labels")
if pod.get("hostPID") is not True:
    fail("hostPID is not true: the daemon must see and kill the node's processes")
if pod.get("priorityClassName") != "system-node-critical":
    fail("priorityClassName is not system-node-critical (oom_score_adj -997, evicted last)")
if not any(t.get("operator") == "Exists" and "key" not in t for t in pod.get("tolerations", [])):
    fail("the DaemonSet does not tolerate every taint: some nodes would have no OOM handler")
if pod.get("automountServiceAccountToken") is not False:
    fail("the pod mounts a service account token it never uses")
containers = pod.get("containers", [])
if len(containers) != 1:
    fail(f"{len(containers)} containers, expected 1")
c = containers[0]
sc = c.get("securityContext", {})
if sc.get("privileged"):
    fail("the container is privileged")
if sc.get("allowPrivilegeEscalation") is not False:
    fail("allowPrivilegeEscalation is not false")

# Capabilities: the daemon's run-time set (privs.c run_caps[]) and its
# setup's, nothing more.
m = re.search(r"run_caps\[\]\s*=\s*\{([^}]*)\}", open(privs_c).read())
kept = set(re.findall(r"CAP_([A-Z_]+)", m.group(1))) if m else set()
if not kept:
    fail(f"no run_caps[] in {privs_c}")
setup = {"SYS_RESOURCE", "SYS_ADMIN", "SYS_PTRACE"}
caps = sc.get("capabilities", {})
if caps.get("drop") != ["ALL"]:
    fail(f"capabilities.drop is {caps.get('drop')}, expected [ALL]")
added = set(caps.get("add", []))
if added != kept | setup:
    fail(f"capabilities.add is {sorted(added)}; the daemon keeps {sorted(kept)} and its setup needs {sorted(setup)}")

# The command enters the node's cgroup namespace, then runs the daemon on
# the ConfigMap's file.
cmd = c.get("command", []) + c.get("args", [])
mounts = {vm["mountPath"]: vm for vm in c.get("volumeMounts", [])}
volumes = {v["name"]: v for v in pod.get("volumes", [])}
if cmd[:3] != ["nsenter", "--cgroup=/proc/1/ns/cgroup", "--"] or "/usr/sbin/oomkitd" not in cmd:
    fail(f"the command does not enter the node's cgroup namespace and run /usr/sbin/oomkitd: {cmd}")
config_path = cmd[cmd.index("--config") + 1] if "--config" in cmd else None
cfg_mount = mounts.get(posixpath.dirname(config_path or ""))
if not cfg_mount or volumes.get(cfg_mount["name"], {}).get("configMap", {}).get("name") != cm["metadata"]["name"] \
        or posixpath.basename(config_path) != cm_key:
    fail(f"--config {config_path} is not the ConfigMap's {cm_key}")


def host_mount(path, writable, what):
    """path lies on a hostPath volume (the node's own directory)."""
    best = max((mp for mp in mounts if path == mp or path.startswith(mp.rstrip("/") + "/")), key=len, default=None)
    if best is None:
        fail(f"{what} {path} is on no volume (the root file system is read-only)")
        return
    vol = volumes.get(mounts[best]["name"], {})
    if "hostPath" not in vol:
        fail(f"{what} {path} is on volume {mounts[best]['name']}, not on the node (hostPath)")
    if writable and mounts[best].get("readOnly"):
        fail(f"{what} {path} is mounted read-only")


if sc.get("readOnlyRootFilesystem") is not True:
    fail("readOnlyRootFilesystem is not true")
host_mount("/sys/fs/cgroup", True, "the cgroup tree")
if "/sys/fs/cgroup" in mounts and volumes.get(mounts["/sys/fs/cgroup"]["name"], {}).get("hostPath", {}).get("path") != "/sys/fs/cgroup":
    fail("/sys/fs/cgroup is not the node's /sys/fs/cgroup")
host_mount(daemon_key("metrics"), True, "the metrics file")
host_mount(daemon_key("report_dir"), True, "the report directory")
host_mount(posixpath.dirname(daemon_key("socket")), True, "the control socket's directory")

# The daemon stays in its pod, whose memory limit is its reserve; no CPU limit.
if daemon_key("reserve") != "0":
    fail(f"the preset's reserve is {daemon_key('reserve')}: in a pod the daemon must stay in its pod (reserve = 0)")
res = c.get("resources", {})
if "memory" not in res.get("limits", {}):
    fail("no memory limit: the pod's limit is the daemon's reserve")
if "cpu" in res.get("limits", {}):
    fail("a CPU limit would throttle the OOM handler")
probe = c.get("livenessProbe", {}).get("exec", {}).get("command", [])
if probe[:2] != ["oomkit", "status"]:
    fail(f"the liveness probe is not `oomkit status`: {probe}")

for f in failures:
    print("FAIL: " + f)
if not failures:
    print(f"ok: {len(docs)} documents; hostPID, {len(added)} capabilities ({len(kept)} kept, {len(setup)} for setup), "
          f"the node's cgroup namespace, {len(mounts)} mounts, the preset as ConfigMap")
sys.exit(1 if failures else 0)
