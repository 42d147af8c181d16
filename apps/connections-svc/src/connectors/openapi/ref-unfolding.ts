import { badRequest } from "@agentplane/problem-details";

/**
 * How many nodes the `$ref` targets of a description may unfold into, together. The parser
 * dereferences (and validates) on the event loop, and its time grows with how far a target unfolds
 * when its `$ref`s are followed as a tree: a few kilobytes in which each level refers twice to the
 * next unfold into 2^levels nodes, and twenty-two levels held the service for ten seconds (the
 * parser's own time limit). References to a target it has already resolved cost it little, so each
 * distinct target counts once, at its unfolded size; a million nodes takes the parser about as long
 * as a description at the size limit with no `$ref` at all.
 */
export const MAX_UNFOLDED_NODES = 1_000_000;

/**
 * Refuses with a 400 a description whose distinct `$ref` targets (pointers into the document)
 * unfold into more than `limit` nodes together; a cycle counts once, as the parser keeps it as a
 * reference. Linear in the document's size, whatever its `$ref` graph: sizes are added, not walked.
 */
export function assertRefsUnfoldWithin(document: object, pointer: string, limit = MAX_UNFOLDED_NODES): void {
  const refs = new Set<string>();
  const collect = (node: unknown): void => {
    if (node === null || typeof node !== "object") return;
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === "string" && ref.startsWith("#")) refs.add(ref);
    for (const value of Object.values(node)) collect(value);
  };
  collect(document);
  const sizes = new Map<string, number>();
  const open = new Set<string>();
  const sizeOf = (node: unknown): number => {
    if (node === null || typeof node !== "object") return 1;
    let total = 1;
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === "string" && ref.startsWith("#")) total += sizeOfTarget(ref);
    for (const [key, value] of Object.entries(node)) {
      if (key !== "$ref") total += sizeOf(value);
      if (total > limit) break;
    }
    return Math.min(total, limit + 1);
  };
  const sizeOfTarget = (ref: string): number => {
    const known = sizes.get(ref);
    if (known !== undefined) return known;
    if (open.has(ref)) return 1;
    open.add(ref);
    const size = sizeOf(resolvePointer(document, ref));
    open.delete(ref);
    sizes.set(ref, size);
    return size;
  };
  let total = 0;
  for (const ref of refs) {
    total += sizeOfTarget(ref);
    if (total > limit) {
      throw badRequest("The description's $refs unfold into too large a document", [
        { pointer, message: `following its $refs gives more than ${limit} nodes` },
      ]);
    }
  }
}

/** The value a `#/a/b~1c` pointer names in the document, or undefined. */
function resolvePointer(document: object, ref: string): unknown {
  let decoded: string;
  try {
    decoded = decodeURIComponent(ref.slice(1));
  } catch {
    return undefined;
  }
  if (decoded === "") return document;
  if (!decoded.startsWith("/")) return undefined;
  let node: unknown = document;
  for (const raw of decoded.slice(1).split("/")) {
    if (node === null || typeof node !== "object") return undefined;
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (!Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}
