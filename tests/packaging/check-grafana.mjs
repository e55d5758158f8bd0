// SPDX-License-Identifier: LGPL-2.1-or-later
// deploy/grafana/oomkit.json against a metrics file a live oomkitd wrote:
//  - the dashboard is JSON Grafana can load: panels with unique ids, on the
//    24-column grid without overlap, every variable used defined;
//  - every query (panel targets and variables) parses as PromQL (the
//    Prometheus project's own grammar, @prometheus-io/lezer-promql);
//  - every metric a query names is in the file, and every label it matches,
//    groups by or prints is one those samples carry, as Prometheus stores
//    them from node_exporter's textfile collector: the scrape adds job and
//    instance (and would rename a file's own job label exported_job).
//   node check-grafana.mjs DASHBOARD PROM_FILE NODE_MODULES_DIR
import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [dashPath, promPath, modules] = process.argv.slice(2);
const { parser } = await import(
  pathToFileURL(path.join(modules, "@prometheus-io/lezer-promql/dist/index.es.js")).href);
const failures = [];
const fail = (m) => failures.push(m);

// The metrics file: sample name -> the label names its samples carry.
const samples = new Map();
for (const line of readFileSync(promPath, "utf8").split("\n")) {
  const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? \S+$/);
  if (!m) continue;
  const labels = samples.get(m[1]) ?? new Set();
  for (const l of (m[3] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)) labels.add(l[1]);
  samples.set(m[1], labels);
}
if (!samples.size) fail(`no samples in ${promPath}`);
const stored = (label) => label === "exported_job" ? "job" : label === "exported_instance" ? "instance" : label;
const targetLabels = new Set(["job", "instance"]);

let dash;
try {
  dash = JSON.parse(readFileSync(dashPath, "utf8"));
} catch (e) {
  console.log(`FAIL: ${dashPath} is not JSON: ${e.message}`);
  process.exit(1);
}
for (const k of ["title", "uid", "panels", "templating", "schemaVersion"])
  if (!(k in dash)) fail(`the dashboard has no ${k}`);
const vars = new Set((dash.templating?.list ?? []).map((v) => v.name));
const builtins = new Set(["__range", "__rate_interval", "__interval", "__range_s", "__interval_ms"]);
const checkVars = (where, text) => {
  for (const m of text.matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g))
    if (!vars.has(m[1]) && !builtins.has(m[1])) fail(`${where}: $${m[1]} is no variable of the dashboard`);
};

let queries = 0;
const used = new Set();
// One PromQL expression: syntax, metrics, labels.
function checkQuery(where, expr, legend = "") {
  queries++;
  checkVars(where, expr);
  const text = expr.replace(/\$__(range|rate_interval|interval)\b/g, "5m");
  const tree = parser.parse(text);
  const metrics = [], matchers = [], labels = [];
  const c = tree.cursor();
  do {
    if (c.type.isError) fail(`${where}: PromQL syntax error at ${c.from} in ${expr}`);
    const s = text.slice(c.from, c.to);
    if (c.name === "Identifier" && c.node.parent?.name === "VectorSelector") metrics.push(s);
    if (c.name === "LabelName") (c.node.parent?.name === "UnquotedLabelMatcher" ? matchers : labels).push(s);
  } while (c.next());
  if (!metrics.length) fail(`${where}: names no metric: ${expr}`);
  for (const m of metrics) {
    used.add(m);
    if (!samples.has(m)) fail(`${where}: ${m} is not in the daemon's metrics file`);
  }
  const carried = (l) => targetLabels.has(l) ||
    metrics.some((m) => samples.get(m)?.has(stored(l)));
  for (const l of matchers) if (!carried(l)) fail(`${where}: matches on ${l}, which ${metrics} do not carry`);
  for (const l of labels) if (!carried(l)) fail(`${where}: groups by ${l}, which ${metrics} do not carry`);
  for (const m of legend.matchAll(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g))
    if (!carried(m[1])) fail(`${where}: the legend prints ${m[1]}, which ${metrics} do not carry`);
}

const ids = new Set(), cells = [];
for (const p of dash.panels ?? []) {
  const where = `panel ${p.id} "${p.title}"`;
  if (ids.has(p.id)) fail(`${where}: id used twice`);
  ids.add(p.id);
  const g = p.gridPos ?? {};
  if (!(g.w > 0 && g.h > 0 && g.x >= 0 && g.y >= 0 && g.x + g.w <= 24)) fail(`${where}: gridPos ${JSON.stringify(g)}`);
  for (const o of cells)
    if (g.x < o.g.x + o.g.w && o.g.x < g.x + g.w && g.y < o.g.y + o.g.h && o.g.y < g.y + g.h)
      fail(`${where} overlaps ${o.where}`);
  cells.push({ g, where });
  if (p.type === "row") continue;
  if (p.datasource?.uid !== "${datasource}") fail(`${where}: not on the dashboard's data source variable`);
  if (!p.targets?.length) fail(`${where}: no query`);
  const refs = new Set();
  for (const t of p.targets ?? []) {
    if (refs.has(t.refId)) fail(`${where}: refId ${t.refId} used twice`);
    refs.add(t.refId);
    checkQuery(`${where} ${t.refId}`, t.expr ?? "", t.legendFormat ?? "");
  }
}
for (const v of dash.templating?.list ?? []) {
  if (v.type !== "query") continue;
  const q = typeof v.query === "string" ? v.query : v.query?.query ?? "";
  const m = q.match(/^label_values\((.+),\s*([A-Za-z_][A-Za-z0-9_]*)\)$/);
  if (!m) {
    fail(`variable ${v.name}: not a label_values(selector, label) query: ${q}`);
    continue;
  }
  checkQuery(`variable ${v.name}`, m[1], `{{${m[2]}}}`);
}

const unshown = [...samples.keys()].filter((s) => !used.has(s));
for (const f of failures) console.log("FAIL: " + f);
if (!failures.length)
  console.log(`ok: ${ids.size} panels, ${queries} queries, ${used.size} metrics, all in the daemon's file` +
    (unshown.length ? `; not on the dashboard: ${unshown.join(", ")}` : ""));
process.exit(failures.length ? 1 : 0);
