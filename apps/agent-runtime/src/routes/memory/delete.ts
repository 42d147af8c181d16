import { deleteMemoryNoteRoute } from "@agentplane/contracts/runtime";
import { notFound } from "@agentplane/problem-details";
import type { RuntimeDeps } from "../../deps.ts";
import type { RuntimeApp } from "../types.ts";

export function registerDeleteMemoryNote(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(deleteMemoryNoteRoute, async (c) => {
    const { id } = c.req.valid("param");
    if (!deps.memory.forget(id)) throw notFound("Memory note", id);
    return c.body(null, 204);
  });
}
