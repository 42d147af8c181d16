// Summarises a V8 CPU profile (`node --cpu-prof`, e.g. the one INFERENCE_BENCH_PROFILE makes):
// where the process spent its CPU, idle time left out, as self time by component (our packages
// by app, libraries by package, Node by subsystem, socket writes apart), by function, and the
// time spent inside each of our own functions (their callees included).
// Run: node bench/cpuprofile-summary.ts <file.cpuprofile> [--after=<text>] [--skip=<s>] [--top=<n>]
//   --after: count only samples from the first one with a frame whose URL contains <text> on
//   (e.g. --after=proxy/handler.ts leaves out start-up), plus --skip seconds (default 0).
import { readFileSync } from "node:fs";

interface Frame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: Frame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith("--"));
if (!file) {
  console.error("usage: node bench/cpuprofile-summary.ts <file.cpuprofile> [--after=<text>] [--skip=<s>] [--top=<n>]");
  process.exit(2);
}
const option = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const top = Number(option("top") ?? 25);
const after = option("after");
const skipUs = Number(option("skip") ?? 0) * 1e6;

const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);

/** A URL as a short name: repository-relative, a library by its package name, Node's as node:*. */
function short(url: string): string {
  const path = url.replace(/^file:\/\//, "");
  const lib = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(path);
  if (lib) return `${lib[1]}/${lib[2]}`;
  const own = /\/((?:apps|packages|bench|scripts|tests)\/.*)$/.exec(path);
  return own ? (own[1] as string) : path;
}

const SOCKET_WRITES = new Set(["writev", "writeBuffer", "writeUtf8String", "writeLatin1String"]);

/** The component a frame's self time is counted under. */
function component(frame: Frame): string {
  const url = short(frame.url);
  if (!url) {
    if (SOCKET_WRITES.has(frame.functionName)) return "socket writes (syscalls)";
    return frame.functionName || "(native)";
  }
  if (/^(apps|packages)\//.test(url)) return url.split("/").slice(0, 2).join("/");
  if (url.startsWith("node:")) {
    const sub = url.replace(/^node:(internal\/)?/, "");
    if (/http/.test(sub)) return "node:http";
    if (/stream/.test(sub)) return "node:streams";
    if (sub.startsWith("deps/undici")) return "node:undici (fetch, Request, Headers)";
    return `node:${sub.split("/")[0]}`;
  }
  if (url.startsWith("wasm://")) return "wasm (HTTP parser)";
  const lib = /^((?:@[^/]+\/)?[^/]+)\//.exec(url);
  return lib ? (lib[1] as string) : url;
}

const label = (frame: Frame) => `${frame.functionName || "(anonymous)"} ${short(frame.url)}:${frame.lineNumber + 1}`;
const isOwn = (frame: Frame) => /^(apps|packages)\//.test(short(frame.url));

// The first sample counted.
let from = 0;
if (after) {
  let t = 0;
  let start: number | undefined;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    if (start === undefined) {
      for (let id: number | undefined = profile.samples[i]; id !== undefined; id = parent.get(id)) {
        if ((nodes.get(id) as ProfileNode).callFrame.url.includes(after)) start = t;
      }
    }
    if (start !== undefined && t >= start + skipUs) {
      from = i;
      break;
    }
  }
}

const byComponent = new Map<string, number>();
const bySelf = new Map<string, number>();
const byOwnInclusive = new Map<string, number>();
const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us);
let busy = 0;
let idle = 0;
for (let i = from; i < profile.samples.length; i++) {
  const us = profile.timeDeltas[i] ?? 0;
  const leaf = nodes.get(profile.samples[i] as number) as ProfileNode;
  if (leaf.callFrame.functionName === "(idle)") {
    idle += us;
    continue;
  }
  busy += us;
  add(byComponent, component(leaf.callFrame), us);
  add(bySelf, label(leaf.callFrame), us);
  const seen = new Set<string>();
  for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
    const frame = (nodes.get(id) as ProfileNode).callFrame;
    if (!isOwn(frame)) continue;
    const key = label(frame);
    if (!seen.has(key)) add(byOwnInclusive, key, us);
    seen.add(key);
  }
}

const print = (title: string, map: Map<string, number>) => {
  console.log(title);
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`  ${((100 * us) / busy).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${key}`);
  }
};
console.log(`busy ${(busy / 1e6).toFixed(2)} s, idle ${(idle / 1e6).toFixed(2)} s (shares below are of busy time)`);
print("self time by component:", byComponent);
print("self time by function:", bySelf);
print("time inside our own functions (callees included):", byOwnInclusive);
