import type Database from "better-sqlite3";
import type { MemoryHit, NoteReach, NoteRow } from "./notes.ts";
import type { VectorIndex } from "./vector-index.ts";
import { cosine, fromBlob } from "./vectors.ts";

/** Weights of the merged score; recency breaks ties. */
export const TEXT_WEIGHT = 0.4;
export const VECTOR_WEIGHT = 0.6;
const CANDIDATES = 50;

/** Words of a query as an FTS5 OR-expression of quoted terms (no FTS syntax reaches the index). */
export function ftsQuery(text: string): string | undefined {
  const words = text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
  const unique = [...new Set(words)].slice(0, 32);
  return unique.length === 0 ? undefined : unique.map((w) => `"${w}"`).join(" OR ");
}

/** Statements of every search, prepared once: the rowids they read come as one JSON array. */
type RowidStatements = { notes: Database.Statement; sharedNotes: Database.Statement };

/** Hybrid search: FTS5 BM25 over the text and the vector index's candidates, merged by a weighted score. */
export class HybridSearch {
  readonly #sqlite: Database.Database;
  readonly #index: VectorIndex;
  #byRowids: RowidStatements | undefined;

  constructor(sqlite: Database.Database, index: VectorIndex) {
    this.#sqlite = sqlite;
    this.#index = index;
  }

  #statements(): RowidStatements {
    this.#byRowids ??= {
      notes: this.#sqlite.prepare(
        "select rowid, id, text, source, created_at, shared from memory_note where rowid in (select value from json_each(?))",
      ),
      sharedNotes: this.#sqlite.prepare(
        "select rowid, id, text, source, created_at, shared from memory_note where rowid in (select value from json_each(?)) and shared = 1",
      ),
    };
    return this.#byRowids;
  }

  /**
   * With a query vector (or none: text only); newer first on ties. Candidates the reach leaves
   * out are dropped after ranking: fewer than `limit` hits may come back.
   */
  search(query: string, vector: Float32Array | undefined, limit: number, reach: NoteReach): MemoryHit[] {
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
    const vectors = vector ? this.#index.candidates(vector, Math.max(4 * limit, 20)) : new Map<number, number>();
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
        ? this.#index
            .embeddingsOf(textOnly)
            .map((r) => [r.rowid, cosine(vector as Float32Array, fromBlob(r.embedding))])
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
