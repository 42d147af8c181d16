import type Database from "better-sqlite3";
import type { Logger } from "pino";
import { newId, nowIso } from "../ids.ts";
import { embedPendingNotes } from "./embedding-pass.ts";
import type { Embedder } from "./embeddings.ts";
import { HybridSearch } from "./hybrid-search.ts";
import { MemoryFullError, type MemoryHit, type MemoryNote, type NoteReach, type NoteRow, toNote } from "./notes.ts";
import { VectorIndex } from "./vector-index.ts";

export { ftsQuery, TEXT_WEIGHT, VECTOR_WEIGHT } from "./hybrid-search.ts";
export { MemoryFullError, type MemoryHit, type MemoryNote, type NoteReach } from "./notes.ts";

const MODEL_KEY = "memory.embedding_model";

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
  readonly #index: VectorIndex;
  readonly #search: HybridSearch;
  /** sqlite-vec loaded and its table ready. */
  readonly vectorExtension: boolean;
  #reembedding = false;
  #embedding: Promise<void> | undefined;
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
    this.#index = new VectorIndex(sqlite, logger, options);
    this.#search = new HybridSearch(sqlite, this.#index);
    this.vectorExtension = this.#index.extension;
    this.#checkModel();
    this.#index.sync();
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
      this.#index.clear();
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
      this.#index.deleteStored(row.rowid);
      this.#sqlite.prepare("delete from memory_note where rowid = ?").run(row.rowid);
    })();
    this.#index.dropCode(row.rowid);
    return true;
  }

  /** Embeds notes without a vector, in batches; stops (and logs) at the first failure. One pass at a time. */
  embedPending(): Promise<void> {
    if (!this.#embedder || !this.#sqlite.open) return Promise.resolve();
    this.#embedding ??= this.#embedAll(this.#embedder).finally(() => {
      this.#embedding = undefined;
    });
    return this.#embedding;
  }

  async #embedAll(embedder: Embedder): Promise<void> {
    if (!(await embedPendingNotes(this.#sqlite, embedder, this.#logger, this.#index))) return;
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

  /** Exact vector search over every stored vector: the reference the quantized search is measured against. */
  exactVectorSearch(vector: Float32Array, k: number): Array<{ rowid: number; similarity: number }> {
    return this.#index.exactSearch(vector, k);
  }

  /** The quantized vector search alone (what hybrid search merges with the text candidates). */
  vectorSearch(vector: Float32Array, k: number): Array<{ rowid: number; similarity: number }> {
    return [...this.#index.candidates(vector, k)].map(([rowid, similarity]) => ({ rowid, similarity }));
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
    return this.#search.search(query, vector, limit, reach);
  }
}
