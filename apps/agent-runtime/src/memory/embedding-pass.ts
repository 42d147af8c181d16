import type Database from "better-sqlite3";
import type { Logger } from "pino";
import type { Embedder } from "./embeddings.ts";
import type { VectorIndex } from "./vector-index.ts";
import { toBlob } from "./vectors.ts";

const EMBED_BATCH = 32;
/** `embedding_model` of a note the model refused alone: `refused:<model>` (cleared on a model change). */
const REFUSED_PREFIX = "refused:";

/**
 * Embeds the notes without a vector, in batches, saving each vector with its note and its code in
 * the index. True when the pass ran to its end; false when it stopped (and logged) at a failure of
 * the embedding endpoint, or because the database closed meanwhile: the rest stays pending.
 */
export async function embedPendingNotes(
  sqlite: Database.Database,
  embedder: Embedder,
  logger: Logger,
  index: VectorIndex,
): Promise<boolean> {
  const select = sqlite.prepare(
    "select rowid, text from memory_note where embedding is null and embedding_model is null order by rowid limit ?",
  );
  // A note the model refuses on its own (too many tokens, say) is marked so, and left text-only
  // until the embedding model changes: otherwise it failed every batch it was in, for good.
  const refuse = sqlite.prepare("update memory_note set embedding_model = ? where rowid = ?");
  const save = sqlite.prepare("update memory_note set embedding = ?, embedding_model = ? where rowid = ?");
  const saveCode = index.prepareSave();
  for (;;) {
    const batch = select.all(EMBED_BATCH) as Array<{ rowid: number; text: string }>;
    if (batch.length === 0 || !sqlite.open) break;
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
        logger.warn(
          { err: (err as Error).message, model: embedder.model },
          "embedding failed; notes stay text-searchable",
        );
        return false;
      }
    }
    if (!sqlite.open) return false;
    sqlite.transaction(() => {
      batch.forEach((b, i) => {
        const vector = vectors[i];
        if (!vector) {
          refuse.run(`${REFUSED_PREFIX}${embedder.model}`, b.rowid);
          return;
        }
        const blob = toBlob(vector);
        save.run(blob, embedder.model, b.rowid);
        saveCode?.(b.rowid, blob);
      });
    })();
    const refused = batch.filter((_, i) => !vectors[i]).length;
    if (refused > 0)
      logger.warn(
        { notes: refused, model: embedder.model },
        "the embedding model refused notes; they stay text-searchable",
      );
    batch.forEach((b, i) => {
      const vector = vectors[i];
      if (vector) index.setCode(b.rowid, vector);
    });
  }
  return true;
}
