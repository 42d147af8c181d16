import { z } from "@hono/zod-openapi";

export const Timestamp = z.iso.datetime({ offset: true }).openapi({ example: "2026-01-01T00:00:00.000Z" });

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
