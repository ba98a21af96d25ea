// check-trace-events.mjs EXPORT.json REPORT.json
//
// Loads a `dnntrace export --format chrome` file with Chrome DevTools'
// trace engine (npm @paulirish/trace_engine: the parser of the DevTools
// performance panel, which nobody here wrote) and checks what it finds
// against `dnntrace report --format json` of the same traces: processes,
// cuDNN calls per function, GPU time and copies, cuDNN op time by kind; and
// flow arrows from each launch to the GPU work it launched. Exit 0 when all
// agree, 1 with a line per difference.
import fs from 'node:fs';
import path from 'node:path';

const [exportPath, reportPath] = process.argv.slice(2);
const modules = process.env.DNNTRACE_NODE_MODULES || 'build/checkers/node_modules';
const Trace = await import(path.resolve(modules, '@paulirish/trace_engine/models/trace/trace.js'));

// the engine measures layout boxes; Node has none
globalThis.DOMRect ??= class { constructor(x = 0, y = 0, w = 0, h = 0) { Object.assign(this, { x, y, width: w, height: h }); } };

const exported = JSON.parse(fs.readFileSync(exportPath, 'utf8'));
const report = JSON.parse(fs.readFileSync(reportPath, 'utf8'));
const model = Trace.TraceModel.Model.createWithAllHandlers();
await model.parse(exported.traceEvents);
const data = model.parsedTrace().data;

const GPU_TRACK = 2 ** 30;
const failures = [];
function expect(what, got, want) {
  const ok = got === want;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}: ${got}${ok ? '' : ` (report: ${want})`}`);
  if (!ok) failures.push(what);
}
const ns = (us) => Math.round(us * 1000);

// slices per kind of track, as the engine built its threads
const calls = new Map(), gpu = [], ops = [], launches = [];
let processes = 0;
for (const [, proc] of data.Renderer.processes) {
  processes++;
  for (const [tid, thread] of proc.threads) {
    for (const e of thread.entries) {
      if (e.ph !== 'X') continue;
      // the recorder's own queries are not the program's calls
      if (tid < GPU_TRACK - 2 && !e.args['by dnntrace'])
        calls.set(e.name, (calls.get(e.name) || 0) + 1);
      else if (thread.name.endsWith(': cuDNN ops')) ops.push(e);
      else if (thread.name.startsWith('GPU ')) gpu.push(e);
      else if (e.name === 'graph launch') launches.push(e);
    }
  }
}

// a process shows only where it has slices (a trace with no calls and no
// GPU work has none)
const withSlices = new Set(exported.traceEvents.filter((e) => e.ph === 'X').map((e) => e.pid));
expect('processes', processes, withSlices.size);
expect('traces', exported.otherData.traces.length, report.files.length);
for (const api of report.apis)
  expect(`calls to ${api.name}`, calls.get(api.name) || 0, api.calls);
expect('functions called', calls.size, report.apis.length);

// the report counts copies and sets outside cuDNN apart
const byCudnn = gpu.filter((e) => 'cuDNN call' in e.args);
const copies = gpu.filter((e) => !('cuDNN call' in e.args) &&
  (e.name.startsWith('Memcpy') || e.name === 'Memset'));
const sum = (list, f) => list.reduce((a, e) => a + f(e), 0);
expect('GPU work (kernels, copies, sets), ns', sum(gpu, (e) => ns(e.dur)), report.gpu.total_ns);
expect('GPU work launched by cuDNN, ns', sum(byCudnn, (e) => ns(e.dur)), report.gpu.cudnn_ns);
expect('copies and sets outside cuDNN', copies.length, report.gpu.copies);
expect('copies and sets outside cuDNN, ns', sum(copies, (e) => ns(e.dur)), report.gpu.copies_ns);
for (const k of report.gpu.cudnn_by_kind) {
  const of = ops.filter((e) => e.args.kind === k.kind);
  expect(`${k.kind} GPU ns`, sum(of, (e) => e.args['GPU ns']), k.ns);
}

// every flow: a call (or a graph launch) first, GPU work after it; a call
// launched the work that names it. The arrows are Kineto's (category
// ac2g, between slices of other categories), which the DevTools engine
// does not bind: it ties a flow's ends only to slices of the flow's own
// category, so it draws none of Kineto's arrows either. They are bound
// here as ui.perfetto.dev and chrome://tracing bind them: each end to the
// slice of its thread that holds its time ("bp": "e" on the last).
const slicesOf = new Map();
for (const e of exported.traceEvents) {
  if (e.ph !== 'X') continue;
  const key = `${e.pid}/${e.tid}`;
  if (!slicesOf.has(key)) slicesOf.set(key, []);
  slicesOf.get(key).push(e);
}
// the innermost: the latest to start, the shortest of those
const bind = (f) => (slicesOf.get(`${f.pid}/${f.tid}`) || [])
  .filter((e) => e.ts <= f.ts && f.ts <= e.ts + e.dur)
  .sort((a, b) => b.ts - a.ts || a.dur - b.dur)[0];
const flowEnds = new Map();
for (const e of exported.traceEvents)
  if (e.ph === 's' || e.ph === 'f') {
    if (!flowEnds.has(e.id)) flowEnds.set(e.id, {});
    flowEnds.get(e.id)[e.ph] = e;
  }
let bad = 0, bound = 0;
for (const [, ends] of flowEnds) {
  const from = ends.s && bind(ends.s), to = ends.f && bind(ends.f);
  const fromCall = from && from.cat === 'cpu_op';
  const ok = from && to && ends.s.cat === 'ac2g' && ends.f.cat === 'ac2g' &&
    (fromCall || from.name === 'graph launch') &&
    ['kernel', 'gpu_memcpy', 'gpu_memset'].includes(to.cat) && to.ts >= from.ts &&
    (!fromCall || to.args['External id'] === from.args['External id']);
  bound += !!(from && to);
  if (!ok && bad++ < 5)
    console.log(`bad flow: ${from?.name}@${ends.s?.ts} -> ${to?.name}@${ends.f?.ts}`);
}
expect('flows bound at both ends', bound, exported.otherData.flows);
expect('flows from a launch to what it launched', bad, 0);
expect('graph launches', launches.length, report.graphs.launches);

if (failures.length) {
  console.log(`${failures.length} differences`);
  process.exit(1);
}
