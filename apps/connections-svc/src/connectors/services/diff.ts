import type { ConnectorTool } from "../openapi/tools.ts";
import { canonicalJson } from "./store.ts";

export interface SchemaChange {
  pointer: string;
  change: "added" | "removed" | "changed";
}

export interface ToolSetDiff {
  added: string[];
  removed: string[];
  changed: Array<{ name: string; descriptionChanged: boolean; schemaChanges: SchemaChange[] }>;
}

/** Tools added, removed and changed between two versions; schema changes as JSON pointers (RFC 6901). */
export function diffToolSets(current: ConnectorTool[], next: ConnectorTool[]): ToolSetDiff {
  const before = new Map(current.map((t) => [t.name, t]));
  const after = new Map(next.map((t) => [t.name, t]));
  const added = [...after.keys()].filter((n) => !before.has(n)).sort();
  const removed = [...before.keys()].filter((n) => !after.has(n)).sort();
  const changed: ToolSetDiff["changed"] = [];
  for (const name of [...after.keys()].sort()) {
    const a = before.get(name);
    const b = after.get(name);
    if (!a || !b) continue;
    const schemaChanges: SchemaChange[] = [];
    diffValue(a.inputSchema, b.inputSchema, "/inputSchema", schemaChanges);
    diffValue(a.outputSchema, b.outputSchema, "/outputSchema", schemaChanges);
    // An HTTP tool whose request mapping moved (path, method, parameter locations) changed too.
    if (canonicalJson(a.operation ?? null) !== canonicalJson(b.operation ?? null)) {
      schemaChanges.push({ pointer: "/operation", change: "changed" });
    }
    const descriptionChanged = a.description !== b.description;
    if (descriptionChanged || schemaChanges.length) changed.push({ name, descriptionChanged, schemaChanges });
  }
  return { added, removed, changed };
}

function diffValue(a: unknown, b: unknown, pointer: string, out: SchemaChange[]): void {
  if (a === undefined && b === undefined) return;
  if (a === undefined) return void out.push({ pointer, change: "added" });
  if (b === undefined) return void out.push({ pointer, change: "removed" });
  const plainA = a !== null && typeof a === "object" && !Array.isArray(a);
  const plainB = b !== null && typeof b === "object" && !Array.isArray(b);
  if (plainA && plainB) {
    const keys = new Set([...Object.keys(a as object), ...Object.keys(b as object)]);
    for (const key of [...keys].sort()) {
      diffValue(
        (a as Record<string, unknown>)[key],
        (b as Record<string, unknown>)[key],
        `${pointer}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`,
        out,
      );
    }
    return;
  }
  if (canonicalJson(a) !== canonicalJson(b)) out.push({ pointer, change: "changed" });
}
