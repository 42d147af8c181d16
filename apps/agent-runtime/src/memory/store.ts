import type Database from "better-sqlite3";
import type { Logger } from "pino";
import * as sqliteVec from "sqlite-vec";
import { newId, nowIso } from "../ids.ts";
import { BinaryIndex, binaryCode } from "./binary-index.ts";
import { EMBEDDING_DIMENSIONS, type Embedder } from "./embeddings.ts";

export interface MemoryNote {
  id: string;
  text: string;
  source: string;
  createdAt: string;
  /** Shared with the team: reached by the turns of channel members (decision 0035). */
  shared: boolean;
}

export interface MemoryHit extends MemoryNote {
  score: number;
  textScore: number;
  vectorScore: number | null;
}

/** Weights of the merged score; recency breaks ties. */
export const TEXT_WEIGHT = 0.4;
export const VECTOR_WEIGHT = 0.6;
const CANDIDATES = 50;
/**
 * Binary-code candidates re-ranked with the full vectors: per wanted vector hit, and at least
 * RERANK_MIN (near neighbours of a topic differ by little, which sign bits blur; see
 * bench/runtime-memory.ts for recall against exact search).
 */
const PREFILTER_FACTOR = 4;
const RERANK_MIN = 100;
const EMBED_BATCH = 32;
/** `embedding_model` of a note the model refused alone: `refused:<model>` (cleared on a model change). */
const REFUSED_PREFIX = "refused:";
const MODEL_KEY = "memory.embedding_model";

const toBlob = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
const fromBlob = (b: Buffer) => new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** Words of a query as an FTS5 OR-expression of quoted terms (no FTS syntax reaches the index). */
export function ftsQuery(text: string): string | undefined {
  const words = text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
  const unique = [...new Set(words)].slice(0, 32);
  return unique.length === 0 ? undefined : unique.map((w) => `"${w}"`).join(" OR ");
}

type NoteRow = {
  rowid: number;
  id: string;
  text: string;
  source: string;
  created_at: string;
  shared: number;
};

const toNote = (r: Omit<NoteRow, "rowid">): MemoryNote => ({
  id: r.id,
  text: r.text,
  source: r.source,
  createdAt: r.created_at,
  shared: r.shared === 1,
});

/** Statements of every search, prepared once: the rowids they read come as one JSON array. */
type RowidStatements = { embeddings: Database.Statement; notes: Database.Statement; sharedNotes: Database.Statement };

/** Remembering one more note would pass the store's cap: nothing was stored. */
export class MemoryFullError extends Error {
  readonly maxNotes: number;
  constructor(maxNotes: number) {
    super(`Memory is full: it holds the most notes allowed (MEMORY_MAX_NOTES=${maxNotes})`);
    this.name = "MemoryFullError";
    this.maxNotes = maxNotes;
  }
}

/**
 * Whose notes a search or a forget may reach. Every turn reaches every note but one someone other
 * than the owner started in team chat: it reaches only the notes remembered in such turns, so
 * what the owner told the agent (in a DM, the web chat) never surfaces in a channel.
 */
export interface NoteReach {
  sharedOnly?: boolean;
}

/**
 * Notes with hybrid search: FTS5 BM25 over the text, and vector similarity through the
 * sign-bit codes of the vectors in memory, re-ranked with the stored float vectors (the codes are
 * persisted in a sqlite-vec table when the extension loads, else derived from the vectors). Embedding failures
 * fail open: the note is stored, search is text only, and pending notes are embedded later.
 */
export class MemoryStore {
  readonly #sqlite: Database.Database;
  readonly #embedder: Embedder | null;
  readonly #logger: Logger;
  /** sqlite-vec loaded and its table ready. */
  readonly vectorExtension: boolean;
  #reembedding = false;
  #embedding: Promise<void> | undefined;
  /** The sign-bit codes in memory, loaded at the first vector search and kept current after. */
  #codes: BinaryIndex | undefined;
  #byRowids: RowidStatements | undefined;
  /** Notes kept at most: `add` past it throws MemoryFullError. */
  readonly maxNotes: number;

  /**
   * `vectorPath`: the file of the vector index (`<database>-vec`, `:memory:` for an in-memory
   * database). It is a database of its own, attached to the connection, so the main database
   * never holds a table that needs the extension to be read.
   */
  constructor(
    sqlite: Database.Database,
    embedder: Embedder | null,
    logger: Logger,
    options: { useExtension?: boolean; vectorPath?: string; maxNotes?: number } = {},
  ) {
    this.#sqlite = sqlite;
    this.maxNotes = options.maxNotes ?? Number.POSITIVE_INFINITY;
    this.#embedder = embedder;
    this.#logger = logger;
    this.vectorExtension = options.useExtension !== false && this.#loadExtension(options.vectorPath ?? ":memory:");
    this.#checkModel();
    if (this.vectorExtension) this.#syncIndex();
  }

  #loadExtension(vectorPath: string): boolean {
    try {
      sqliteVec.load(this.#sqlite);
      this.#sqlite.prepare("attach database ? as memvec").run(vectorPath);
      // The index is scanned on every vector search: keep its pages in memory (64 MiB).
      this.#sqlite.pragma("memvec.cache_size = -65536");
      this.#sqlite.exec(
        `create virtual table if not exists memvec.memory_bits using vec0(embedding bit[${EMBEDDING_DIMENSIONS}])`,
      );
      return true;
    } catch (err) {
      try {
        this.#sqlite.exec("detach database memvec");
      } catch {
        // Not attached.
      }
      this.#logger.warn({ err: (err as Error).message }, "sqlite-vec did not load; vector search scans in process");
      return false;
    }
  }

  /**
   * The index and the notes are two files: after a crash between their commits (or a lost index
   * file) the index is rebuilt from the vectors stored with the notes.
   */
  #syncIndex(): void {
    const count = (sql: string) => (this.#sqlite.prepare(sql).get() as { n: number }).n;
    const notes = count("select count(*) as n from memory_note where embedding is not null");
    if (count("select count(*) as n from memvec.memory_bits") === notes) return;
    const insert = this.#sqlite.prepare(
      "insert into memvec.memory_bits (rowid, embedding) values (?, vec_quantize_binary(vec_f32(?)))",
    );
    const rows = this.#sqlite
      .prepare("select rowid, embedding from memory_note where embedding is not null")
      .all() as Array<{ rowid: number; embedding: Buffer }>;
    this.#sqlite.transaction(() => {
      this.#sqlite.exec("delete from memvec.memory_bits");
      for (const r of rows) insert.run(BigInt(r.rowid), r.embedding);
    })();
    this.#logger.info({ notes }, "vector index rebuilt from the stored embeddings");
  }

  /** A different embedding model than the stored vectors': drop them and re-embed in the background. */
  #checkModel(): void {
    const stored = this.#sqlite.prepare("select value from setting where key = ?").get(MODEL_KEY) as
      | { value: string }
      | undefined;
    const current = this.#embedder?.model ?? "";
    if (stored?.value === current) return;
    const had = (
      this.#sqlite.prepare("select count(*) as n from memory_note where embedding is not null").get() as {
        n: number;
      }
    ).n;
    this.#sqlite.transaction(() => {
      this.#sqlite.prepare("update memory_note set embedding = null, embedding_model = null").run();
      if (this.vectorExtension) this.#sqlite.exec("delete from memvec.memory_bits");
      this.#codes?.clear();
      this.#sqlite
        .prepare(
          "insert into setting (key, value) values (?, ?) on conflict (key) do update set value = excluded.value",
        )
        .run(MODEL_KEY, current);
    })();
    if (had > 0) {
      this.#reembedding = true;
      this.#logger.info(
        { from: stored?.value, to: current, notes: had },
        "embedding model changed; re-embedding notes",
      );
    }
  }

  get enabled(): boolean {
    return this.#embedder !== null;
  }

  /** True while a model change is being re-embedded: search is text only until it is done. */
  get reembedding(): boolean {
    return this.#reembedding;
  }

  pendingCount(): number {
    if (!this.#embedder) return 0;
    return (
      this.#sqlite
        .prepare("select count(*) as n from memory_note where embedding is null and embedding_model is null")
        .get() as { n: number }
    ).n;
  }

  count(): number {
    return (this.#sqlite.prepare("select count(*) as n from memory_note").get() as { n: number }).n;
  }

  /**
   * Stores a note at once; its embedding follows (a failure leaves it pending). With `maxNotes`
   * notes stored it throws MemoryFullError and stores nothing: a note is never dropped silently.
   */
  async add(text: string, source: string, options: { shared?: boolean } = {}): Promise<MemoryNote> {
    const note = { id: newId("mem"), text, source, created_at: nowIso() };
    this.#sqlite.transaction(() => {
      if (this.count() >= this.maxNotes) throw new MemoryFullError(this.maxNotes);
      const { lastInsertRowid } = this.#sqlite
        .prepare("insert into memory_note (id, text, source, created_at, shared) values (?, ?, ?, ?, ?)")
        .run(note.id, note.text, note.source, note.created_at, options.shared ? 1 : 0);
      this.#sqlite.prepare("insert into memory_fts (rowid, text) values (?, ?)").run(lastInsertRowid, text);
    })();
    await this.embedPending();
    return { id: note.id, text, source, createdAt: note.created_at, shared: options.shared === true };
  }

  /** The newest notes first (the memory page before anything is searched). */
  recent(limit = 50): MemoryNote[] {
    const rows = this.#sqlite
      .prepare("select id, text, source, created_at, shared from memory_note order by rowid desc limit ?")
      .all(limit) as Array<Omit<NoteRow, "rowid">>;
    return rows.map(toNote);
  }

  /**
   * Shares a note with the team, or makes it the owner's only; undefined when there is no such
   * note. Only the owner decides (the API, the owner's own turns): never a member's turn.
   */
  setShared(id: string, shared: boolean): MemoryNote | undefined {
    const row = this.#sqlite
      .prepare("update memory_note set shared = ? where id = ? returning id, text, source, created_at, shared")
      .get(shared ? 1 : 0, id) as Omit<NoteRow, "rowid"> | undefined;
    return row ? toNote(row) : undefined;
  }

  forget(id: string, reach: NoteReach = {}): boolean {
    const row = this.#sqlite.prepare("select rowid, shared from memory_note where id = ?").get(id) as
      | { rowid: number; shared: number }
      | undefined;
    if (!row || (reach.sharedOnly && row.shared !== 1)) return false;
    this.#sqlite.transaction(() => {
      this.#sqlite.prepare("delete from memory_fts where rowid = ?").run(row.rowid);
      if (this.vectorExtension)
        this.#sqlite.prepare("delete from memvec.memory_bits where rowid = ?").run(BigInt(row.rowid));
      this.#sqlite.prepare("delete from memory_note where rowid = ?").run(row.rowid);
    })();
    this.#codes?.delete(row.rowid);
    return true;
  }

  /** Embeds notes without a vector, in batches; stops (and logs) at the first failure. One pass at a time. */
  embedPending(): Promise<void> {
    if (!this.#embedder || !this.#sqlite.open) return Promise.resolve();
    this.#embedding ??= this.#embedAll().finally(() => {
      this.#embedding = undefined;
    });
    return this.#embedding;
  }

  async #embedAll(): Promise<void> {
    const embedder = this.#embedder as Embedder;
    const select = this.#sqlite.prepare(
      "select rowid, text from memory_note where embedding is null and embedding_model is null order by rowid limit ?",
    );
    // A note the model refuses on its own (too many tokens, say) is marked so, and left text-only
    // until the embedding model changes: otherwise it failed every batch it was in, for good.
    const refuse = this.#sqlite.prepare("update memory_note set embedding_model = ? where rowid = ?");
    const save = this.#sqlite.prepare("update memory_note set embedding = ?, embedding_model = ? where rowid = ?");
    const saveVec = this.vectorExtension
      ? this.#sqlite.prepare(
          "insert or replace into memvec.memory_bits (rowid, embedding) values (?, vec_quantize_binary(vec_f32(?)))",
        )
      : undefined;
    for (;;) {
      const batch = select.all(EMBED_BATCH) as Array<{ rowid: number; text: string }>;
      if (batch.length === 0 || !this.#sqlite.open) break;
      let vectors: Array<Float32Array | undefined>;
      try {
        vectors = await embedder.embed(batch.map((b) => b.text));
      } catch (err) {
        // One by one: when some pass, those that fail are refused for what they are. Three
        // failures before any success is the endpoint, not the notes: left for a later pass.
        vectors = [];
        for (const b of batch) {
          if (vectors.length >= 3 && vectors.every((v) => v === undefined)) break;
          vectors.push(
            await embedder.embed([b.text]).then(
              ([v]) => v,
              () => undefined,
            ),
          );
        }
        if (vectors.every((v) => v === undefined)) {
          this.#logger.warn(
            { err: (err as Error).message, model: embedder.model },
            "embedding failed; notes stay text-searchable",
          );
          return;
        }
      }
      if (!this.#sqlite.open) return;
      this.#sqlite.transaction(() => {
        batch.forEach((b, i) => {
          const vector = vectors[i];
          if (!vector) {
            refuse.run(`${REFUSED_PREFIX}${embedder.model}`, b.rowid);
            return;
          }
          const blob = toBlob(vector);
          save.run(blob, embedder.model, b.rowid);
          saveVec?.run(BigInt(b.rowid), blob);
        });
      })();
      const refused = batch.filter((_, i) => !vectors[i]).length;
      if (refused > 0)
        this.#logger.warn(
          { notes: refused, model: embedder.model },
          "the embedding model refused notes; they stay text-searchable",
        );
      batch.forEach((b, i) => {
        const vector = vectors[i];
        if (vector) this.#codes?.set(b.rowid, binaryCode(vector));
      });
    }
    if (this.#reembedding) this.#logger.info({ model: embedder.model }, "re-embedding done");
    this.#reembedding = false;
  }

  async #queryVector(query: string): Promise<Float32Array | undefined> {
    if (!this.#embedder || this.#reembedding) return undefined;
    try {
      const [vector] = await this.#embedder.embed([query]);
      if (this.pendingCount() > 0) void this.embedPending();
      return vector;
    } catch (err) {
      this.#logger.warn({ err: (err as Error).message }, "query embedding failed; searching text only");
      return undefined;
    }
  }

  /**
   * The codes come from the sqlite-vec table when it is there (128 bytes a note), else from the
   * stored float vectors.
   */
  #loadCodes(): BinaryIndex {
    const index = new BinaryIndex(EMBEDDING_DIMENSIONS);
    if (this.vectorExtension) {
      for (const r of this.#sqlite.prepare("select rowid, embedding from memvec.memory_bits").iterate() as Iterable<{
        rowid: number | bigint;
        embedding: Buffer;
      }>)
        index.set(Number(r.rowid), r.embedding);
    } else {
      for (const r of this.#sqlite
        .prepare("select rowid, embedding from memory_note where embedding is not null")
        .iterate() as Iterable<{ rowid: number; embedding: Buffer }>)
        index.set(r.rowid, binaryCode(fromBlob(r.embedding)));
    }
    return index;
  }

  /**
   * Hamming distance over sign bits picks the candidates; the stored float
   * vectors of those rank them exactly.
   */
  #vectorCandidates(vector: Float32Array, k: number): Map<number, number> {
    this.#codes ??= this.#loadCodes();
    const out = new Map<number, number>();
    const ids = this.#codes.nearest(vector, Math.max(k * PREFILTER_FACTOR, RERANK_MIN));
    if (ids.length === 0) return out;
    const scored = this.#embeddingsOf(ids).map((r): [number, number] => [
      r.rowid,
      cosine(vector, fromBlob(r.embedding)),
    ]);
    scored.sort((a, b) => b[1] - a[1]);
    for (const [rowid, sim] of scored.slice(0, k)) out.set(rowid, sim);
    return out;
  }

  #statements(): RowidStatements {
    this.#byRowids ??= {
      embeddings: this.#sqlite.prepare(
        "select rowid, embedding from memory_note where embedding is not null and rowid in (select value from json_each(?))",
      ),
      notes: this.#sqlite.prepare(
        "select rowid, id, text, source, created_at, shared from memory_note where rowid in (select value from json_each(?))",
      ),
      sharedNotes: this.#sqlite.prepare(
        "select rowid, id, text, source, created_at, shared from memory_note where rowid in (select value from json_each(?)) and shared = 1",
      ),
    };
    return this.#byRowids;
  }

  #embeddingsOf(rowids: number[]): Array<{ rowid: number; embedding: Buffer }> {
    return this.#statements().embeddings.all(JSON.stringify(rowids)) as Array<{ rowid: number; embedding: Buffer }>;
  }

  /** Exact vector search over every stored vector: the reference the quantized search is measured against. */
  exactVectorSearch(vector: Float32Array, k: number): Array<{ rowid: number; similarity: number }> {
    const scored: Array<{ rowid: number; similarity: number }> = [];
    for (const r of this.#sqlite
      .prepare("select rowid, embedding from memory_note where embedding is not null")
      .iterate() as Iterable<{ rowid: number; embedding: Buffer }>)
      scored.push({ rowid: r.rowid, similarity: cosine(vector, fromBlob(r.embedding)) });
    scored.sort((a, b) => b.similarity - a.similarity);
    return scored.slice(0, k);
  }

  /** The quantized vector search alone (what hybrid search merges with the text candidates). */
  vectorSearch(vector: Float32Array, k: number): Array<{ rowid: number; similarity: number }> {
    return [...this.#vectorCandidates(vector, k)].map(([rowid, similarity]) => ({ rowid, similarity }));
  }

  /** Hybrid search: BM25 and vector candidates merged by a weighted score, newer first on ties. */
  async search(query: string, limit = 5, reach: NoteReach = {}): Promise<MemoryHit[]> {
    const vector = await this.#queryVector(query);
    return this.searchWith(query, vector, limit, reach);
  }

  /**
   * The search with a query vector already computed (or none: text only). Candidates the reach
   * leaves out are dropped after ranking: fewer than `limit` hits may come back.
   */
  searchWith(query: string, vector: Float32Array | undefined, limit = 5, reach: NoteReach = {}): MemoryHit[] {
    const text = new Map<number, number>();
    const match = ftsQuery(query);
    if (match) {
      const rows = this.#sqlite
        .prepare(
          "select rowid, bm25(memory_fts) as rank from memory_fts where memory_fts match ? order by rank limit ?",
        )
        .all(match, CANDIDATES) as Array<{ rowid: number; rank: number }>;
      const best = Math.max(...rows.map((r) => -r.rank), 1e-9);
      for (const r of rows) text.set(r.rowid, -r.rank / best);
    }
    // Text hits outside these get their own cosine, so a few per wanted hit are enough.
    const vectors = vector ? this.#vectorCandidates(vector, Math.max(4 * limit, 20)) : new Map<number, number>();
    const ids = [...new Set([...text.keys(), ...vectors.keys()])];
    if (ids.length === 0) return [];
    const statements = this.#statements();
    const read = reach.sharedOnly ? statements.sharedNotes : statements.notes;
    const notes = new Map((read.all(JSON.stringify(ids)) as NoteRow[]).map((n) => [n.rowid, n]));
    // A text candidate past the vector candidates still gets its own similarity; the vector
    // candidates' embeddings were read once already.
    const textOnly = vector ? ids.filter((rowid) => !vectors.has(rowid)) : [];
    const similarity = new Map(
      textOnly.length > 0
        ? this.#embeddingsOf(textOnly).map((r) => [r.rowid, cosine(vector as Float32Array, fromBlob(r.embedding))])
        : [],
    );
    const hits = ids
      .filter((rowid) => notes.has(rowid))
      .map((rowid) => {
        const n = notes.get(rowid) as NoteRow;
        const textScore = text.get(rowid) ?? 0;
        const vectorScore = vector ? (vectors.get(rowid) ?? similarity.get(rowid) ?? 0) : null;
        const score =
          vectorScore === null ? textScore : TEXT_WEIGHT * textScore + VECTOR_WEIGHT * Math.max(0, vectorScore);
        return {
          rowid,
          id: n.id,
          text: n.text,
          source: n.source,
          createdAt: n.created_at,
          shared: n.shared === 1,
          score,
          textScore,
          vectorScore,
        };
      });
    hits.sort((a, b) => b.score - a.score || b.rowid - a.rowid);
    return hits.slice(0, limit).map(({ rowid: _rowid, ...hit }) => hit);
  }
}
