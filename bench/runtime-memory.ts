// Agent runtime memory search benchmark (hybrid FTS5 BM25 + vectors, 1024 dimensions):
//   node scripts/bootstrap.mjs node bench/runtime-memory.ts   (or: npm run bench -- runtime-memory)
// A seeded synthetic corpus of clustered unit vectors (notes scattered around shared topics, as
// embeddings of related notes are) with random words. Side by side in one run, on the same store:
// - the search of the store: sign-bit codes in memory, Hamming scan, the float vectors of the
//   candidates re-rank them (hybrid, and vector only);
// - exact search: cosine against every float vector (held in the bench's memory, so it is not
//   slowed by reading them from disk), the reference of recall@5;
// - the former search: sqlite-vec's bit KNN over the same codes, then the same re-rank;
// - text only (BM25).
// BENCH_MEMORY_NOTES (default "100000"; "100000,1000000" adds 1M notes: ~4 GB of vectors in the
// bench and a ~5 GB database), BENCH_QUERIES (200), BENCH_BASELINE_QUERIES (40: exact and former).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../apps/agent-runtime/src/db/database.ts";
import { BinaryIndex, binaryCode } from "../apps/agent-runtime/src/memory/binary-index.ts";
import { EMBEDDING_DIMENSIONS as D } from "../apps/agent-runtime/src/memory/embeddings.ts";
import { MemoryStore } from "../apps/agent-runtime/src/memory/store.ts";
import { fmt } from "./lib.ts";
import { percentile, silent } from "./runtime-lib.ts";

const NOTE_COUNTS = (process.env.BENCH_MEMORY_NOTES ?? "100000").split(",").map(Number);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 200);
const BASELINE_QUERIES = Number(process.env.BENCH_BASELINE_QUERIES ?? 40);
/** Notes per topic cluster, and how far a note strays from its topic (cosine to it ~0.8). */
const PER_CLUSTER = 100;
const SPREAD = 0.75;

const line = (label: string, samples: number[]) =>
  `${label.padEnd(44)} p50 ${fmt(percentile(samples, 50), 3).padStart(9)} ms   p95 ${fmt(percentile(samples, 95), 3).padStart(9)} ms`;

// A fixed pseudo-random sequence (mulberry32, 32-bit integer arithmetic throughout): the same
// corpus every run.
let seed = 42;
const random = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let x = Math.imul(seed ^ (seed >>> 15), seed | 1);
  x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
  return (((x ^ (x >>> 14)) >>> 0) + 0.5) / 2 ** 32;
};
const gaussian = () => Math.sqrt(-2 * Math.log(random())) * Math.cos(2 * Math.PI * random());
const WORDS = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}`);
const sentence = (n: number) =>
  Array.from({ length: n }, () => WORDS[Math.floor(random() ** 2 * WORDS.length)]).join(" ");

function normalize(v: Float32Array): Float32Array {
  let norm = 0;
  for (let i = 0; i < v.length; i++) norm += (v[i] as number) ** 2;
  norm = Math.sqrt(norm);
  for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) / norm;
  return v;
}
/** A unit vector near a topic: the topic plus Gaussian noise of length SPREAD. */
function around(topic: Float32Array, out = new Float32Array(D)): Float32Array {
  const scale = SPREAD / Math.sqrt(D);
  for (let i = 0; i < D; i++) out[i] = (topic[i] as number) + scale * gaussian();
  return normalize(out);
}

/** The k most similar of unit vectors laid end to end (1-based row ids, as the notes were inserted). */
function exactTop(all: Float32Array, count: number, q: Float32Array, k: number): number[] {
  const best: Array<[number, number]> = [];
  for (let n = 0, base = 0; n < count; n++, base += D) {
    let dot = 0;
    for (let i = 0; i < D; i++) dot += (all[base + i] as number) * (q[i] as number);
    if (best.length < k || dot > (best[k - 1] as [number, number])[1]) {
      best.push([n + 1, dot]);
      best.sort((a, b) => b[1] - a[1]);
      if (best.length > k) best.pop();
    }
  }
  return best.map(([rowid]) => rowid);
}

for (const count of NOTE_COUNTS) {
  const dir = mkdtempSync(join(tmpdir(), "bench-memory-"));
  const path = join(dir, "agent.db");
  const database = await openDatabase(path);
  const store = new MemoryStore(database.sqlite, null, silent, { vectorPath: `${path}-vec` });
  const sqlite = database.sqlite;
  const topics = Array.from({ length: Math.ceil(count / PER_CLUSTER) }, () =>
    normalize(Float32Array.from({ length: D }, gaussian)),
  );
  const all = new Float32Array(count * D);
  const started = performance.now();
  const insertNote = sqlite.prepare(
    "insert into memory_note (id, text, source, embedding, embedding_model, created_at) values (?, ?, 'bench', ?, 'bench', ?)",
  );
  const insertText = sqlite.prepare("insert into memory_fts (rowid, text) values (?, ?)");
  const insertVec = sqlite.prepare(
    "insert into memvec.memory_bits (rowid, embedding) values (?, vec_quantize_binary(vec_f32(?)))",
  );
  const batch = sqlite.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const text = sentence(12);
      const vector = around(
        topics[Math.floor(random() * topics.length)] as Float32Array,
        all.subarray(i * D, (i + 1) * D),
      );
      const blob = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
      const { lastInsertRowid } = insertNote.run(`mem_${i}`, text, blob, new Date(1e12 + i).toISOString());
      insertText.run(lastInsertRowid, text);
      insertVec.run(BigInt(lastInsertRowid), blob);
    }
  });
  for (let i = 0; i < count; i += 5000) batch(i, Math.min(count, i + 5000));
  const loadSeconds = (performance.now() - started) / 1000;
  const queries = Array.from({ length: QUERIES }, () => ({
    text: sentence(3),
    vector: around(topics[Math.floor(random() * topics.length)] as Float32Array),
  }));
  const measure = (subset: typeof queries, run: (q: (typeof queries)[number]) => unknown) =>
    subset.map((q) => {
      const t = performance.now();
      run(q);
      return performance.now() - t;
    });

  const t = performance.now();
  store.vectorSearch(queries[0]?.vector as Float32Array, 5);
  const firstSearch = performance.now() - t;
  for (const q of queries.slice(1, 4)) store.searchWith(q.text, q.vector, 5);
  const hybrid = measure(queries, (q) => store.searchWith(q.text, q.vector, 5));
  const vectorOnly = measure(queries, (q) => store.vectorSearch(q.vector, 5));
  const textOnly = measure(queries, (q) => store.searchWith(q.text, undefined, 5));
  // The candidate scan alone (the rest of a vector search is reading and scoring 100 vectors).
  const codes = new BinaryIndex(D);
  for (let n = 0; n < count; n++) codes.set(n + 1, binaryCode(all.subarray(n * D, (n + 1) * D)));
  const scanOnly = measure(queries, (q) => codes.nearest(q.vector, 100));

  const baseline = queries.slice(0, BASELINE_QUERIES);
  const exact: number[][] = [];
  const exactTimes = measure(baseline, (q) => exact.push(exactTop(all, count, q.vector, 5)));
  const knn = sqlite.prepare(
    "select rowid from memvec.memory_bits where embedding match vec_quantize_binary(vec_f32(?)) and k = ? order by distance",
  );
  const former = measure(baseline, (q) => {
    const ids = (knn.all(Buffer.from(q.vector.buffer), 400) as Array<{ rowid: number | bigint }>).map(Number);
    sqlite
      .prepare(`select rowid, embedding from memory_note where rowid in (${ids.map(() => "?").join(",")})`)
      .all(...ids);
  });
  let found = 0;
  baseline.forEach((q, i) => {
    const got = new Set(store.vectorSearch(q.vector, 5).map((h) => h.rowid));
    found += (exact[i] ?? []).filter((rowid) => got.has(rowid)).length;
  });
  const recall = found / (5 * baseline.length);

  console.log(
    `\n${count} notes, ${topics.length} topics (loaded in ${fmt(loadSeconds, 1)} s; first vector search, loading the codes: ${fmt(firstSearch, 0)} ms)`,
  );
  console.log(`  ${line("hybrid search, top 5 (codes + re-rank)", hybrid)}`);
  console.log(`  ${line("vector only, top 5 (codes + re-rank)", vectorOnly)}`);
  console.log(`  ${line("  of which the Hamming scan (100 candidates)", scanOnly)}`);
  console.log(`  ${line("baseline: text only (BM25)", textOnly)}`);
  console.log(`  ${line(`baseline: exact vector, in memory (${baseline.length} q)`, exactTimes)}`);
  console.log(`  ${line(`baseline: former sqlite-vec bit KNN (${baseline.length} q)`, former)}`);
  console.log(
    `  recall@5 vs exact: ${fmt(recall, 3)} (aim >= 0.95: ${recall >= 0.95 ? "met" : "not met"}); ${count <= 100_000 ? `hybrid p95 aim < 20 ms: ${percentile(hybrid, 95) < 20 ? "met" : "not met"}` : "the p95 aim is set at 100k notes"}; process RSS ${fmt(process.memoryUsage().rss / 2 ** 20, 0)} MB`,
  );
  // The checkpointer may still be copying a large WAL back: not waited for past 2 s.
  await Promise.race([database.close(), new Promise((r) => setTimeout(r, 2000))]);
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
