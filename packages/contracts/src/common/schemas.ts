import { z } from "@hono/zod-openapi";
import { HIDDEN_CHARACTERS } from "./hidden-characters.ts";

export const Timestamp = z.iso.datetime({ offset: true }).openapi({ example: "2026-01-01T00:00:00.000Z" });

/**
 * A resource's name as people give it (organizations, projects, teams, sandboxes, API tokens, a
 * device sign-in's client, an invitee's display name): spaces around it are dropped, and it holds
 * no control or bidirectional formatting characters (NUL is left to the check every text field
 * has, which names it).
 */
export const ResourceName = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .refine(
    (name) => !HIDDEN_CHARACTERS.test(name.replaceAll("\u0000", "")),
    "must not contain control or bidirectional formatting characters",
  );

export const LimitQuery = z.coerce.number().int().min(1).max(200).default(50);

export const CursorPage = <T extends z.ZodType>(item: T) =>
  z.object({ items: z.array(item), nextCursor: z.string().optional() });

export function pathParam(name: string, example: string) {
  return z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name, in: "path" }, example });
}

const LABEL_KEY = /^[a-z0-9A-Z]([-a-z0-9A-Z_./]{0,61}[a-z0-9A-Z])?$/;

/**
 * Labels of a resource (projects, sandboxes, clusters, AWS connections, policies, credentials):
 * at most 64, keys as Kubernetes label names, values up to 63 characters. A `__proto__` key is
 * refused rather than silently dropped, as a plain record would.
 */
export const Labels = z.preprocess(
  (input, ctx) => {
    if (input !== null && typeof input === "object" && Object.hasOwn(input, "__proto__"))
      ctx.issues.push({ code: "custom", message: "`__proto__` is not a label key", input, path: ["__proto__"] });
    return input;
  },
  z
    .record(
      z
        .string()
        .regex(
          LABEL_KEY,
          "Not a label key: up to 63 letters, digits, '-', '_', '.' or '/', beginning and ending with a letter or digit",
        ),
      z.string().max(63),
    )
    .refine((labels) => Object.keys(labels).length <= 64, "at most 64 labels"),
);

/** How deep free-form JSON in a request (tool arguments, decision context, an inline description) may nest. */
export const MAX_JSON_DEPTH = 128;

/** Whether `value` nests objects and arrays deeper than `max` levels (counted without recursion). */
export function jsonNestsDeeperThan(value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop() as [unknown, number];
    if (item === null || typeof item !== "object") continue;
    if (depth > max) return true;
    for (const child of Object.values(item))
      if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
  }
  return false;
}

/** A free-form JSON object, refused with a 400 when it nests deeper than `MAX_JSON_DEPTH` levels. */
export const JsonObject = () =>
  z
    .record(z.string(), z.unknown())
    .refine((value) => !jsonNestsDeeperThan(value), `must not nest deeper than ${MAX_JSON_DEPTH} levels`);
