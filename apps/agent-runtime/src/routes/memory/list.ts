import { listMemoryNotesRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import type { RuntimeApp } from "../types.ts";

export function registerListMemoryNotes(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(listMemoryNotesRoute, async (c) => {
    const { q, limit } = c.req.valid("query");
    const query = q?.trim();
    if (!query) return c.json({ items: deps.memory.recent(limit) }, 200);
    const hits = await deps.memory.search(query, limit);
    return c.json(
      {
        items: hits.map((h) => ({
          id: h.id,
          text: h.text,
          source: h.source,
          createdAt: h.createdAt,
          shared: h.shared,
          score: h.score,
        })),
      },
      200,
    );
  });
}
