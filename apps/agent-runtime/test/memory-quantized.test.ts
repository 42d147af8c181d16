import Database from "better-sqlite3";
import { pino } from "pino";
import * as sqliteVec from "sqlite-vec";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase, type RuntimeDb } from "../src/db/database.ts";
import { BinaryIndex, binaryCode } from "../src/memory/binary-index.ts";
import { EMBEDDING_DIMENSIONS as D, type Embedder } from "../src/memory/embeddings.ts";
import { MemoryStore } from "../src/memory/store.ts";

const logger = pino({ level: "silent" });

/** A seeded generator (mulberry32): the same corpus every run. */
function generator(seed: number) {
  let s = seed;
  const random = () => {
    s = (s + 0x6d2b79f5) | 0;
    let x = Math.imul(s ^ (s >>> 15), s | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return (((x ^ (x >>> 14)) >>> 0) + 0.5) / 2 ** 32;
  };
  const gaussian = () => Math.sqrt(-2 * Math.log(random())) * Math.cos(2 * Math.PI * random());
  const unit = (v: Float32Array) => {
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  };
  /** A note near a topic: neighbours differ by little, which is what sign bits blur. */
  const around = (topic: Float32Array) => unit(topic.map((x) => x + (0.75 / Math.sqrt(D)) * gaussian()));
  const topic = () => unit(Float32Array.from({ length: D }, gaussian));
  return { random, topic, around };
}

/** Embeds each text by a vector fixed in advance (the notes' and the queries' own vectors). */
class TableEmbedder implements Embedder {
  readonly model = "table";
  readonly vectors = new Map<string, Float32Array>();
  failing = false;
  async embed(texts: string[]): Promise<Float32Array[]> {
    if (this.failing) throw new Error("embedding endpoint down");
    return texts.map((t) => this.vectors.get(t) ?? new Float32Array(D).fill(1 / Math.sqrt(D)));
  }
}

let database: RuntimeDb | undefined;
afterEach(async () => {
  await database?.close();
  database = undefined;
});

/** 600 notes on 6 topics (more than the store re-ranks: the codes choose), and 30 queries. */
async function corpus(useExtension: boolean) {
  database = await openDatabase(":memory:");
  const embedder = new TableEmbedder();
  const store = new MemoryStore(database.sqlite, embedder, logger, { useExtension });
  const g = generator(7);
  const topics = Array.from({ length: 6 }, g.topic);
  for (let i = 0; i < 600; i++) {
    const text = `note ${i} about topic ${i % 6}`;
    embedder.vectors.set(text, g.around(topics[i % 6] as Float32Array));
    await store.add(text, "test");
  }
  const queries = Array.from({ length: 30 }, (_, i) => g.around(topics[i % 6] as Float32Array));
  return { store, embedder, queries, g, topics };
}

describe("quantized memory search", () => {
  it("codes have sqlite-vec's bit layout, so stored bit vectors load as they are", () => {
    const sqlite = new Database(":memory:");
    sqliteVec.load(sqlite);
    const g = generator(1);
    for (let i = 0; i < 5; i++) {
      const v = g.topic();
      const row = sqlite.prepare("select vec_quantize_binary(vec_f32(?)) as b").get(Buffer.from(v.buffer)) as {
        b: Buffer;
      };
      expect([...binaryCode(v)]).toEqual([...row.b]);
    }
    sqlite.close();
  });

  it("the Hamming scan finds the nearest codes, and stays right after deletes and replacements", () => {
    const g = generator(2);
    const index = new BinaryIndex(D);
    const codes = new Map<number, Uint8Array>();
    for (let rowid = 1; rowid <= 3000; rowid++) codes.set(rowid, binaryCode(g.topic()));
    for (const [rowid, code] of codes) index.set(rowid, code);
    for (let rowid = 1; rowid <= 3000; rowid += 3) {
      index.delete(rowid);
      codes.delete(rowid);
    }
    const replaced = binaryCode(g.topic());
    index.set(2, replaced);
    codes.set(2, replaced);
    expect(index.size).toBe(codes.size);
    const hamming = (a: Uint8Array, b: Uint8Array) =>
      a.reduce((d, x, i) => d + [...((x ^ (b[i] as number)) >>> 0).toString(2)].filter((c) => c === "1").length, 0);
    for (let q = 0; q < 10; q++) {
      const v =
        q === 0
          ? new Float32Array(D).map((_, i) => ((replaced[i >> 3] as number) & (1 << (i & 7)) ? 1 : -1))
          : g.topic();
      const code = binaryCode(v);
      const got = index.nearest(v, 20);
      expect(got).toHaveLength(20);
      expect(new Set(got).size).toBe(20);
      const distances = [...codes].map(([rowid, c]) => [rowid, hamming(code, c)] as const).sort((a, b) => a[1] - b[1]);
      const cutoff = (distances[19] as readonly [number, number])[1];
      // Every code strictly nearer than the 20th distance is found; the rest of the 20 are at it.
      for (const [rowid, d] of distances) if (d < cutoff) expect(got).toContain(rowid);
      for (const rowid of got) expect(hamming(code, codes.get(rowid) as Uint8Array)).toBeLessThanOrEqual(cutoff);
      if (q === 0) expect(got[0]).toBe(2);
    }
    expect(index.nearest(g.topic(), 5000)).toHaveLength(codes.size);
  });

  it("scans codes whose length is not a multiple of 16 bytes, and codes past many pages of memory", () => {
    // 200 dimensions: 25-byte codes, padded with zeros to the SIMD scan's 32-byte stride.
    const dims = 200;
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31 - 0.5;
    };
    const vector = () => new Float32Array(dims).map(random);
    const index = new BinaryIndex(dims);
    const codes: Uint8Array[] = [];
    for (let rowid = 0; rowid < 5000; rowid++) {
      const code = binaryCode(vector());
      codes.push(code);
      index.set(rowid, code);
    }
    const ones = (x: number) => [...x.toString(2)].filter((c) => c === "1").length;
    for (let q = 0; q < 5; q++) {
      const v = vector();
      const code = binaryCode(v);
      const distance = (c: Uint8Array) => c.reduce((d, x, i) => d + ones(x ^ (code[i] as number)), 0);
      const got = index.nearest(v, 10);
      const sorted = codes.map((c, rowid) => [rowid, distance(c)] as const).sort((a, b) => a[1] - b[1]);
      const cutoff = (sorted[9] as readonly [number, number])[1];
      expect(got).toHaveLength(10);
      for (const [rowid, d] of sorted) if (d < cutoff) expect(got).toContain(rowid);
      for (const rowid of got) expect(distance(codes[rowid] as Uint8Array)).toBeLessThanOrEqual(cutoff);
    }
    // The code identical to the query is the nearest, at distance 0.
    const v = vector();
    index.set(99_999, binaryCode(v));
    expect(index.nearest(v, 1)).toEqual([99_999]);
  });

  for (const useExtension of [true, false]) {
    it(`returns the top results of exact search (${useExtension ? "sqlite-vec" : "no extension"})`, async () => {
      const { store, queries } = await corpus(useExtension);
      expect(store.vectorExtension).toBe(useExtension);
      for (const q of queries) {
        expect(store.vectorSearch(q, 5).map((h) => h.rowid)).toEqual(store.exactVectorSearch(q, 5).map((h) => h.rowid));
        const hits = store.searchWith("", q, 5);
        expect(hits.map((h) => h.vectorScore)).toEqual(store.exactVectorSearch(q, 5).map((h) => h.similarity));
      }
    });
  }

  it("keeps hybrid ranking: words and meaning together beat either alone", async () => {
    const { store, embedder, queries, g, topics } = await corpus(true);
    const q = queries[0] as Float32Array;
    // Near the query's topic and sharing its words: first; the nearest by meaning alone comes after.
    embedder.vectors.set("zebra crossing budget", g.around(topics[0] as Float32Array));
    await store.add("zebra crossing budget", "test");
    embedder.vectors.set("zebra crossing", q);
    const hits = await store.search("zebra crossing", 3);
    expect(hits[0]?.text).toBe("zebra crossing budget");
    expect(hits[0]?.textScore).toBe(1);
    expect(hits[0]?.vectorScore).toBeGreaterThan(0.4);
    expect(hits[1]?.textScore).toBe(0);
    const byMeaning = store.searchWith("", q, 2).find((h) => h.text !== "zebra crossing budget");
    expect(hits[1]?.id).toBe(byMeaning?.id);
  });

  it("fails open and keeps the in-memory codes current (added, forgotten, embedded later)", async () => {
    const { store, embedder, queries } = await corpus(true);
    const q = queries[1] as Float32Array;
    expect(store.vectorSearch(q, 1)).toHaveLength(1); // the codes are loaded from here on
    embedder.failing = true;
    const pending = await store.add("quokka sighting near the lake", "test");
    embedder.vectors.set("quokka sighting near the lake", q);
    expect(store.pendingCount()).toBe(1);
    // Query embedding fails: text only, no vector score.
    const textOnly = await store.search("quokka lake", 3);
    expect(textOnly[0]).toMatchObject({ id: pending.id, textScore: 1, vectorScore: null });
    embedder.failing = false;
    await store.embedPending();
    expect(store.pendingCount()).toBe(0);
    const nearest = store.searchWith("", q, 1)[0];
    expect(nearest?.id).toBe(pending.id);
    expect(nearest?.vectorScore).toBeCloseTo(1, 5);
    expect(store.forget(pending.id)).toBe(true);
    expect(store.searchWith("", q, 5).map((h) => h.id)).not.toContain(pending.id);
    expect(store.vectorSearch(q, 5).map((h) => h.rowid)).toEqual(store.exactVectorSearch(q, 5).map((h) => h.rowid));
  });
});
