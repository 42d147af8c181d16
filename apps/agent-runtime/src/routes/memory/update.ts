import { updateMemoryNoteRoute } from "@agentplane/contracts/runtime";
import { notFound } from "@agentplane/problem-details";
import type { RuntimeDeps } from "../../deps.ts";
import type { RuntimeApp } from "../types.ts";

/** The owner shares a note with the team or takes it back (fronted by the platform: `agent:manage`). */
export function registerUpdateMemoryNote(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(updateMemoryNoteRoute, async (c) => {
    const { id } = c.req.valid("param");
    const { shared } = c.req.valid("json");
    const note = deps.memory.setShared(id, shared);
    if (!note) throw notFound("Memory note", id);
    return c.json(note, 200);
  });
}
