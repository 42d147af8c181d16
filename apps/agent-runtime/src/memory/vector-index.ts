import type Database from "better-sqlite3";
import type { Logger } from "pino";
import * as sqliteVec from "sqlite-vec";
import { BinaryIndex, binaryCode } from "./binary-index.ts";
import { EMBEDDING_DIMENSIONS } from "./embeddings.ts";
import { cosine, fromBlob } from "./vectors.ts";

/**
 * Binary-code candidates re-ranked with the full vectors: per wanted vector hit, and at least
 * RERANK_MIN (near neighbours of a topic differ by little, which sign bits blur; see
 * bench/runtime-memory.ts for recall against exact search).
 */
const PREFILTER_FACTOR = 4;
const RERANK_MIN = 100;

/**
 * Vector search over the notes' embeddings: the sign-bit codes of the vectors in memory pick the
 * candidates, the float vectors stored with the notes rank them. The codes are persisted in a
 * sqlite-vec table when the extension loads, else derived from the vectors.
 */
export class VectorIndex {
  readonly #sqlite: Database.Database;
  readonly #logger: Logger;
  /** sqlite-vec loaded and its table ready. */
  readonly extension: boolean;
  /** The sign-bit codes in memory, loaded at the first vector search and kept current after. */
  #codes: BinaryIndex | undefined;
  #embeddings: Database.Statement | undefined;

  /**
   * `vectorPath`: the file of the vector index (`<database>-vec`, `:memory:` for an in-memory
   * database). It is a database of its own, attached to the connection, so the main database
   * never holds a table that needs the extension to be read.
   */
  constructor(sqlite: Database.Database, logger: Logger, options: { useExtension?: boolean; vectorPath?: string }) {
    this.#sqlite = sqlite;
    this.#logger = logger;
    this.extension = options.useExtension !== false && this.#loadExtension(options.vectorPath ?? ":memory:");
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
  sync(): void {
    if (!this.extension) return;
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

  /** Every code dropped (the stored vectors were): inside the caller's transaction. */
  clear(): void {
    if (this.extension) this.#sqlite.exec("delete from memvec.memory_bits");
    this.#codes?.clear();
  }

  /** Deletes a note's persisted code: inside the transaction that deletes the note. */
  deleteStored(rowid: number): void {
    if (this.extension) this.#sqlite.prepare("delete from memvec.memory_bits where rowid = ?").run(BigInt(rowid));
  }

  /** Drops a deleted note's code from memory, once its deletion is committed. */
  dropCode(rowid: number): void {
    this.#codes?.delete(rowid);
  }

  /** The statement persisting a note's code from its vector's BLOB; undefined without the extension. */
  prepareSave(): ((rowid: number, blob: Buffer) => void) | undefined {
    if (!this.extension) return undefined;
    const save = this.#sqlite.prepare(
      "insert or replace into memvec.memory_bits (rowid, embedding) values (?, vec_quantize_binary(vec_f32(?)))",
    );
    return (rowid, blob) => {
      save.run(BigInt(rowid), blob);
    };
  }

  /** Keeps the codes in memory current with a note's new vector (once they are loaded). */
  setCode(rowid: number, vector: Float32Array): void {
    this.#codes?.set(rowid, binaryCode(vector));
  }

  /**
   * The codes come from the sqlite-vec table when it is there (128 bytes a note), else from the
   * stored float vectors.
   */
  #loadCodes(): BinaryIndex {
    const index = new BinaryIndex(EMBEDDING_DIMENSIONS);
    if (this.extension) {
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
   * vectors of those rank them exactly. Rowid → similarity, best first.
   */
  candidates(vector: Float32Array, k: number): Map<number, number> {
    this.#codes ??= this.#loadCodes();
    const out = new Map<number, number>();
    const ids = this.#codes.nearest(vector, Math.max(k * PREFILTER_FACTOR, RERANK_MIN));
    if (ids.length === 0) return out;
    const scored = this.embeddingsOf(ids).map((r): [number, number] => [
      r.rowid,
      cosine(vector, fromBlob(r.embedding)),
    ]);
    scored.sort((a, b) => b[1] - a[1]);
    for (const [rowid, sim] of scored.slice(0, k)) out.set(rowid, sim);
    return out;
  }

  /** The stored vectors of these notes (those that have one). */
  embeddingsOf(rowids: number[]): Array<{ rowid: number; embedding: Buffer }> {
    this.#embeddings ??= this.#sqlite.prepare(
      "select rowid, embedding from memory_note where embedding is not null and rowid in (select value from json_each(?))",
    );
    return this.#embeddings.all(JSON.stringify(rowids)) as Array<{ rowid: number; embedding: Buffer }>;
  }

  /** Exact vector search over every stored vector: the reference the quantized search is measured against. */
  exactSearch(vector: Float32Array, k: number): Array<{ rowid: number; similarity: number }> {
    const scored: Array<{ rowid: number; similarity: number }> = [];
    for (const r of this.#sqlite
      .prepare("select rowid, embedding from memory_note where embedding is not null")
      .iterate() as Iterable<{ rowid: number; embedding: Buffer }>)
      scored.push({ rowid: r.rowid, similarity: cosine(vector, fromBlob(r.embedding)) });
    scored.sort((a, b) => b.similarity - a.similarity);
    return scored.slice(0, k);
  }
}
